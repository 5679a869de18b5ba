// Folding steps shared by the kernels; gf2_amd64.go has the algebra.

// FOLD128 folds acc forward by the distance k encodes and XORs in the
// 16 bytes at mem (mem may be unaligned).
#define FOLD128(acc, k, tmp, mem) \
	MOVO      acc, tmp \
	PCLMULQDQ $0x00, k, acc \
	PCLMULQDQ $0x11, k, tmp \
	PXOR      tmp, acc \
	MOVOU     mem, tmp \
	PXOR      tmp, acc

// FOLDINTO folds src forward by the distance k encodes and XORs it into
// dst. src is clobbered.
#define FOLDINTO(src, k, tmp, dst) \
	MOVO      src, tmp \
	PCLMULQDQ $0x00, k, src \
	PCLMULQDQ $0x11, k, tmp \
	PXOR      src, dst \
	PXOR      tmp, dst

// FOLDV folds every lane of acc (an xmm, ymm or zmm register) forward by
// the distance of k (a foldConst pair in every lane) and XORs in src (a
// register or memory of the same width). VPTERNLOGQ $0x96 is a three-way
// XOR: both products and the data in one instruction.
#define FOLDV(acc, k, tmp, src) \
	VPCLMULQDQ $0x00, k, acc, tmp \
	VPCLMULQDQ $0x11, k, acc, acc \
	VPTERNLOGQ $0x96, src, tmp, acc

// FOLDVINTO folds src forward by the distance of k and XORs it into dst.
#define FOLDVINTO(src, k, tmp, dst) \
	VPCLMULQDQ $0x00, k, src, tmp \
	VPCLMULQDQ $0x11, k, src, src \
	VPTERNLOGQ $0x96, src, tmp, dst


// FOLDVEX and FOLDVEXINTO are FOLDV and FOLDVINTO in VEX encoding only, for
// CPUs with VPCLMULQDQ and AVX2 but no AVX-512: two VPXORs take the place
// of VPTERNLOGQ (an AVX-512VL instruction), and only xmm and ymm
// registers 0-15 may be named. One more uop per fold; the XORs run on
// other ports than the multiplies.
#define FOLDVEX(acc, k, tmp, src) \
	VPCLMULQDQ $0x00, k, acc, tmp \
	VPCLMULQDQ $0x11, k, acc, acc \
	VPXOR      src, tmp, tmp \
	VPXOR      tmp, acc, acc

#define FOLDVEXINTO(src, k, tmp, dst) \
	VPCLMULQDQ $0x00, k, src, tmp \
	VPCLMULQDQ $0x11, k, src, src \
	VPXOR      src, tmp, tmp \
	VPXOR      tmp, dst, dst
