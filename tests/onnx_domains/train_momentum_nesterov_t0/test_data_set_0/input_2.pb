BX1J 
p«ru4à¿I¹|ÄuzÒ¿ÁHgVYÝ?<É.•î¿