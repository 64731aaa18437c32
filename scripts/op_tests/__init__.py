"""The primitive golden-data generators of scripts/gen_op_tests.py, by family."""
