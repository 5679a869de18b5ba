// Run-time shift constants; see gf2_amd64.go for the algebra.

// XPOW8N sets acc = T(8n) = x^(8n-33) mod P: start from the table entry of
// n's lowest set bit, then one mulx33 (VPCLMULQDQ + CRC32Q) per further set
// bit, since mulx33(T(a), T(b)) = T(a+b). n, idx and tab are clobbered;
// xa and xb are scratch xmm registers; lloop and ldone are label names,
// unique per use. VEX encoded, so it may run while zmm uppers are dirty.
#define XPOW8N(n, acc, idx, tab, xa, xb, lloop, ldone) \
	MOVQ       ·xpowNeg33(SB), acc \
	BSFQ       n, idx \
	JZ         ldone \
	LEAQ       ·xpow8(SB), tab \
	MOVQ       (tab)(idx*8), acc \
	LEAQ       -1(n), idx \
	ANDQ       idx, n \
	JZ         ldone \
lloop: \
	BSFQ       n, idx \
	VMOVQ      acc, xa \
	VMOVQ      (tab)(idx*8), xb \
	VPCLMULQDQ $0x00, xb, xa, xa \
	VMOVQ      xa, idx \
	XORL       acc, acc \
	CRC32Q     idx, acc \
	LEAQ       -1(n), idx \
	ANDQ       idx, n \
	JNZ        lloop \
ldone:

// XPOW8NSSE is XPOW8N in legacy SSE encoding, for CPUs without AVX.
#define XPOW8NSSE(n, acc, idx, tab, xa, xb, lloop, ldone) \
	MOVQ      ·xpowNeg33(SB), acc \
	BSFQ      n, idx \
	JZ        ldone \
	LEAQ      ·xpow8(SB), tab \
	MOVQ      (tab)(idx*8), acc \
	LEAQ      -1(n), idx \
	ANDQ      idx, n \
	JZ        ldone \
lloop: \
	BSFQ      n, idx \
	MOVQ      acc, xa \
	MOVQ      (tab)(idx*8), xb \
	PCLMULQDQ $0x00, xb, xa \
	MOVQ      xa, idx \
	XORL      acc, acc \
	CRC32Q    idx, acc \
	LEAQ      -1(n), idx \
	ANDQ      idx, n \
	JNZ       lloop \
ldone:

// Most kernels compute the state of p from state 0 and add the incoming
// state at the end: the state after p from crc is
//
//	state(0, p) ^ crc·x^(8·len(p))
//
// (linearity). Then only a clmul and a CRC32Q wait for the caller's crc,
// so chained calls (Update(Update(crc, a), b)) overlap their folding
// instead of running back to back.

// SHIFTIN XORs crcin·x^(8n) mod P into acc. n, t1, t2 and tab are
// clobbered; xa, xb are scratch; lloop and ldone are label names.
#define SHIFTIN(crcin, n, acc, t1, t2, tab, xa, xb, lloop, ldone) \
	XPOW8N(n, t1, t2, tab, xa, xb, lloop, ldone) \
	VMOVQ      t1, xa \
	VMOVQ      crcin, xb \
	VPCLMULQDQ $0x00, xa, xb, xb \
	VMOVQ      xb, t1 \
	XORL       t2, t2 \
	CRC32Q     t1, t2 \
	XORL       t2, acc

// SHIFTINSSE is SHIFTIN in legacy SSE encoding.
#define SHIFTINSSE(crcin, n, acc, t1, t2, tab, xa, xb, lloop, ldone) \
	XPOW8NSSE(n, t1, t2, tab, xa, xb, lloop, ldone) \
	MOVQ      t1, xa \
	MOVQ      crcin, xb \
	PCLMULQDQ $0x00, xa, xb \
	MOVQ      xb, t1 \
	XORL      t2, t2 \
	CRC32Q    t1, t2 \
	XORL      t2, acc
