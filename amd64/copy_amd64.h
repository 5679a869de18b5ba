// Copying forms of the folding steps (copy_amd64.s, copyfused_amd64.s).
// Every copy routine keeps DI = dst - src, so one pointer walks both
// buffers: the bytes at off(SI) go to off(SI)(DI*1).

// CPLOAD loads the 16, 32 or 64 bytes at off(SI) into data (a register of
// that width, mov the matching move) and stores them to dst.
#define CPLOAD(mov, off, data) \
	mov off(SI), data \
	mov data, off(SI)(DI*1)

// CPFOLD128 is FOLD128 on bytes that are copied on the way: the 16 bytes
// at off(SI) go to dst and are folded into acc.
#define CPFOLD128(acc, k, tmp, data, off) \
	CPLOAD(MOVOU, off, data) \
	MOVO      acc, tmp \
	PCLMULQDQ $0x00, k, acc \
	PCLMULQDQ $0x11, k, tmp \
	PXOR      tmp, acc \
	PXOR      data, acc

// CPQ copies the quadword at off(ptr) through tmp and runs it into the
// CRC32Q chain crc.
#define CPQ(ptr, off, tmp, crc) \
	MOVQ   off(ptr), tmp \
	CRC32Q tmp, crc \
	MOVQ   tmp, off(ptr)(DI*1)
