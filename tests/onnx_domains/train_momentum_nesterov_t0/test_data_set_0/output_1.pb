BX2nJ0mšÞ¸	fÛ¿þmä
˜—?¢¡ÀE}	ç?¨;öRWó¿GRn"9Zô?pØ’gqNÏ¿