// The last 0–7 bytes of a buffer, shared by every kernel: one CRC32L,
// CRC32W and CRC32B at most, as the bits of the length say. p advances;
// n's low three bits are the bytes left. l3, l1 and done are labels the
// caller names (each must be unique in its function); done is defined
// here, after the last byte.
#define CRC32TAIL7(p, n, crc, l3, l1, done) \
	TESTQ  $4, n \
	JZ     l3 \
	CRC32L 0(p), crc \
	ADDQ   $4, p \
l3: \
	TESTQ  $2, n \
	JZ     l1 \
	CRC32W 0(p), crc \
	ADDQ   $2, p \
l1: \
	TESTQ  $1, n \
	JZ     done \
	CRC32B 0(p), crc \
done:
