// Shared by vpmsum_ppc64x.s and copy_ppc64x.s.

// Offsets into table (consts.go); TestTableLayout checks them.
#define T_FOLD		0
#define T_LOOP128	368
#define T_LOOP256	384
#define T_REDUCE	400
#define T_MU		416
#define T_POLY		432
#define T_MASK		448
#define T_BSWAP		464

#define K128	V24
#define K256	V25
#define BSWAP	V26
#define VCRC	V27
#define G	V28
#define ZERO	V29

// LOAD puts the 16 aligned bytes at addr into v as their little-endian
// 128-bit value, the layout all the math assumes. Only the loads differ
// between the byte orders: the constants come in with LXVD2X, which loads
// each doubleword in the native order on both, and everything after the
// loads works on register contents, which do not depend on the byte order.
#ifdef GOARCH_ppc64
// Big-endian LVX gives the big-endian value: reverse the 16 bytes.
#define LOAD(addr, v) LVX addr, v; VPERM v, v, BSWAP, v
#else
// Little-endian LVX gives the little-endian value.
#define LOAD(addr, v) LVX addr, v
#endif

// CPLOAD copies the 16 bytes at (src)(idx) to (dst)(idx), neither of them
// aligned, and leaves their little-endian 128-bit value in v, as LOAD does.
// LXVD2X and STXVD2X move each doubleword in the native byte order, so the
// pair copies the bytes unchanged on both byte orders; only the register
// needs reordering for the math. On ppc64le LXVD2X puts the value of bytes
// 0-7 in dw0 and of bytes 8-15 in dw1: swap the doublewords. On ppc64 it
// holds the bytes in memory order, as big-endian LVX does: reverse them.
#ifdef GOARCH_ppc64
#define CPLOAD(src, dst, idx, v) LXVD2X (src)(idx), v; STXVD2X v, (dst)(idx); VPERM v, v, BSWAP, v
#else
#define CPLOAD(src, dst, idx, v) LXVD2X (src)(idx), v; STXVD2X v, (dst)(idx); VSLDOI $8, v, v, v
#endif
