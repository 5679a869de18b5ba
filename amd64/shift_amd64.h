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
