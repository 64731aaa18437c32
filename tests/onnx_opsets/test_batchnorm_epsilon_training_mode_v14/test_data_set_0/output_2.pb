B
output_varJ‰>ïœX?ëÎ!>