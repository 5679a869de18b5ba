#include "textflag.h"
#include "fold_amd64.h"
#include "copy_amd64.h"

// Copy and checksum in one pass: each routine is its Update counterpart
// (scalar_amd64.s, xmm_amd64.s, ymm_amd64.s, zmm_amd64.s) with every load
// also stored to dst. The bytes are read once, into the registers the
// checksum works on, so the copy costs a store per load and nothing else:
// the stores go to the store ports, the CRC to the multiplier and the CRC32
// unit. All take and return the raw CRC state; the incoming state is XORed
// onto the first bytes (it is the same polynomial added at the start of the
// message), after they are stored. len(dst) >= len(src) and the two do not
// overlap: copy_amd64.go sees to both.

// func copyScalar(crc uint32, dst, src []byte) uint32
// One CRC32 chain through a general register: load, CRC32, store.
TEXT ·copyScalar(SB), NOSPLIT, $0-60
	MOVL crc+0(FP), AX
	MOVQ dst_base+8(FP), DI
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), CX
	SUBQ SI, DI

	CMPQ CX, $32
	JB   tail31

loop32:
	CPQ(SI, 0, R8, AX)
	CPQ(SI, 8, R9, AX)
	CPQ(SI, 16, R10, AX)
	CPQ(SI, 24, R11, AX)
	ADDQ $32, SI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE  loop32

tail31:
	TESTQ $16, CX
	JZ    tail15
	CPQ(SI, 0, R8, AX)
	CPQ(SI, 8, R9, AX)
	ADDQ  $16, SI

tail15:
	TESTQ $8, CX
	JZ    tail7
	CPQ(SI, 0, R8, AX)
	ADDQ  $8, SI

tail7:
	TESTQ  $4, CX
	JZ     tail3
	MOVL   0(SI), R8
	CRC32L R8, AX
	MOVL   R8, 0(SI)(DI*1)
	ADDQ   $4, SI

tail3:
	TESTQ  $2, CX
	JZ     tail1
	MOVW   0(SI), R8
	CRC32W R8, AX
	MOVW   R8, 0(SI)(DI*1)
	ADDQ   $2, SI

tail1:
	TESTQ  $1, CX
	JZ     done
	MOVB   0(SI), R8
	CRC32B R8, AX
	MOVB   R8, 0(SI)(DI*1)

done:
	MOVL AX, ret+56(FP)
	RET

// func copyFoldXMM(crc uint32, dst, src []byte) uint32
// foldXMM, copying; len(src) >= 64 and a multiple of 16.
TEXT ·copyFoldXMM(SB), NOSPLIT, $0-60
	MOVL crc+0(FP), AX
	MOVQ dst_base+8(FP), DI
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), CX
	SUBQ SI, DI

	CPLOAD(MOVOU, 0, X0)
	CPLOAD(MOVOU, 16, X1)
	CPLOAD(MOVOU, 32, X2)
	CPLOAD(MOVOU, 48, X3)
	MOVQ  AX, X8
	PXOR  X8, X0
	ADDQ  $64, SI
	SUBQ  $64, CX
	MOVOU ·kX64(SB), X8
	CMPQ  CX, $64
	JB    reduce

loop64:
	CPFOLD128(X0, X8, X4, X9, 0)
	CPFOLD128(X1, X8, X5, X10, 16)
	CPFOLD128(X2, X8, X6, X11, 32)
	CPFOLD128(X3, X8, X7, X12, 48)
	ADDQ $64, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  loop64

reduce:
	MOVOU ·kX32(SB), X8
	FOLDINTO(X0, X8, X4, X2)
	FOLDINTO(X1, X8, X5, X3)
	MOVOU ·kX16(SB), X8
	FOLDINTO(X2, X8, X4, X3)
	TESTQ CX, CX
	JZ    reduced

loop16:
	CPFOLD128(X3, X8, X4, X9, 0)
	ADDQ $16, SI
	SUBQ $16, CX
	JNZ  loop16

reduced:
	MOVQ   X3, R8
	PEXTRQ $1, X3, R9
	XORL   AX, AX
	CRC32Q R8, AX
	CRC32Q R9, AX
	MOVL   AX, ret+56(FP)
	RET

// func copyFoldYMM(crc uint32, dst, src []byte) uint32
// foldYMM, copying; len(src) >= 128 and a multiple of 16.
TEXT ·copyFoldYMM(SB), NOSPLIT, $0-60
	MOVL crc+0(FP), AX
	MOVQ dst_base+8(FP), DI
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), CX
	SUBQ SI, DI

	CPLOAD(VMOVDQU, 0, Y0)
	CPLOAD(VMOVDQU, 32, Y1)
	CPLOAD(VMOVDQU, 64, Y2)
	CPLOAD(VMOVDQU, 96, Y3)
	VMOVQ AX, X4
	VPXOR Y4, Y0, Y0
	ADDQ  $128, SI
	SUBQ  $128, CX
	VBROADCASTI128 ·kX128(SB), Y8
	CMPQ  CX, $128
	JB    reduce

loop128:
	CPLOAD(VMOVDQU, 0, Y9)
	FOLDV(Y0, Y8, Y4, Y9)
	CPLOAD(VMOVDQU, 32, Y10)
	FOLDV(Y1, Y8, Y5, Y10)
	CPLOAD(VMOVDQU, 64, Y11)
	FOLDV(Y2, Y8, Y6, Y11)
	CPLOAD(VMOVDQU, 96, Y12)
	FOLDV(Y3, Y8, Y7, Y12)
	ADDQ $128, SI
	SUBQ $128, CX
	CMPQ CX, $128
	JAE  loop128

reduce:
	VBROADCASTI128 ·kX64(SB), Y8
	FOLDVINTO(Y0, Y8, Y4, Y2)
	FOLDVINTO(Y1, Y8, Y5, Y3)
	VBROADCASTI128 ·kX32(SB), Y8
	FOLDVINTO(Y2, Y8, Y4, Y3)
	CMPQ CX, $32
	JB   lanes

loop32:
	CPLOAD(VMOVDQU, 0, Y9)
	FOLDV(Y3, Y8, Y4, Y9)
	ADDQ $32, SI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE  loop32

lanes:
	VMOVDQU      ·kYLanes(SB), Y8
	VPCLMULQDQ   $0x00, Y8, Y3, Y4
	VPCLMULQDQ   $0x11, Y8, Y3, Y3
	VPXOR        Y4, Y3, Y3
	VEXTRACTI128 $1, Y3, X4
	VPXOR        X4, X3, X3
	TESTQ        CX, CX
	JZ           reduced
	VMOVDQU      ·kX16(SB), X8
	CPLOAD(VMOVDQU, 0, X9)
	FOLDV(X3, X8, X4, X9)

reduced:
	VMOVQ   X3, R8
	VPEXTRQ $1, X3, R9
	VZEROUPPER
	XORL    AX, AX
	CRC32Q  R8, AX
	CRC32Q  R9, AX
	MOVL    AX, ret+56(FP)
	RET

// func copyFoldZMM(crc uint32, dst, src []byte) uint32
// foldZMM, copying; len(src) >= 256 and a multiple of 64. copy_amd64.go
// aligns dst to 64 bytes first, so no store splits a cache line.
TEXT ·copyFoldZMM(SB), NOSPLIT, $0-60
	MOVL crc+0(FP), AX
	MOVQ dst_base+8(FP), DI
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), CX
	SUBQ SI, DI

	CPLOAD(VMOVDQU64, 0, Z0)
	CPLOAD(VMOVDQU64, 64, Z1)
	CPLOAD(VMOVDQU64, 128, Z2)
	CPLOAD(VMOVDQU64, 192, Z3)
	VMOVQ     AX, X4
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX
	VBROADCASTI32X4 ·kX256(SB), Z8
	CMPQ      CX, $256
	JB        reduce

loop256:
	CPLOAD(VMOVDQU64, 0, Z9)
	FOLDV(Z0, Z8, Z4, Z9)
	CPLOAD(VMOVDQU64, 64, Z10)
	FOLDV(Z1, Z8, Z5, Z10)
	CPLOAD(VMOVDQU64, 128, Z11)
	FOLDV(Z2, Z8, Z6, Z11)
	CPLOAD(VMOVDQU64, 192, Z12)
	FOLDV(Z3, Z8, Z7, Z12)
	ADDQ $256, SI
	SUBQ $256, CX
	CMPQ CX, $256
	JAE  loop256

reduce:
	VBROADCASTI32X4 ·kX128(SB), Z8
	FOLDVINTO(Z0, Z8, Z4, Z2)
	FOLDVINTO(Z1, Z8, Z5, Z3)
	VBROADCASTI32X4 ·kX64(SB), Z8
	FOLDVINTO(Z2, Z8, Z4, Z3)
	TESTQ CX, CX
	JZ    lanes

loop64:
	CPLOAD(VMOVDQU64, 0, Z9)
	FOLDV(Z3, Z8, Z4, Z9)
	ADDQ $64, SI
	SUBQ $64, CX
	JNZ  loop64

lanes:
	VMOVDQU64     ·kZLanes(SB), Z8
	VPCLMULQDQ    $0x00, Z8, Z3, Z4
	VPCLMULQDQ    $0x11, Z8, Z3, Z3
	VPXORQ        Z4, Z3, Z3
	VEXTRACTI64X4 $1, Z3, Y4
	VPXORQ        Y4, Y3, Y3
	VEXTRACTI128  $1, Y3, X4
	VPXOR         X4, X3, X3
	VMOVQ         X3, R8
	VPEXTRQ       $1, X3, R9
	VZEROUPPER
	XORL          AX, AX
	CRC32Q        R8, AX
	CRC32Q        R9, AX
	MOVL          AX, ret+56(FP)
	RET
