package amd64

// The algebra every kernel relies on, and the constants it needs.
//
// CRC-32C works on polynomials over GF(2) modulo
// P = x^32 + x^28 + x^27 + ... + 1 (0x1EDC6F41). The CRC state after a
// message M, not counting the initial and final inversions, is
// M(x)·x^32 mod P. Intel's instructions see bits "reflected": in a uint32
// state bit i is the coefficient of x^(31-i), and in a 64-bit lane loaded
// from memory bit i is the coefficient of x^(63-i), so the first byte of
// the message holds the highest powers.
//
// Three facts follow from the Intel SDM definitions of the instructions:
//
//  1. CRC32Q c, v computes (c·x^64 + v·x^32) mod P. With c = 0 it maps a
//     64-bit lane v to v·x^32 mod P; chained over a message it is the CRC.
//
//  2. PCLMULQDQ of lanes a and b is the exact 127-bit product; read as a
//     128-bit block it is a·b·x (bit k is x^(126-k), a block's bit k is
//     x^(127-k)). A 32-bit constant c sits in a lane as c·x^32, so
//     clmul(v, c) = v·c·x^33 as a block. With c = x^(E-33) mod P the block
//     is congruent to v·x^E: the lane moved E bits further down the
//     message. That is why every constant below is "x^(something-33)".
//
//  3. A 128-bit block R at the end of a message contributes R·x^32 mod P
//     to the state, which is CRC32Q(CRC32Q(0, R.lo), R.hi): the hardware
//     does the final 128→32 reduction, no Barrett step is needed.
//
// Folding: a 128-bit block A = H·x^64 + L (H is the low quadword, the
// earlier bytes) that is d bytes before the block it is added to, becomes
// clmul(H, x^(8d+64-33)) ^ clmul(L, x^(8d-33)): one PCLMULQDQ per half,
// both products lined up with the later block.
//
// Shifting a 32-bit state s over n later bytes is, by 1 and 2,
// CRC32Q(0, clmul(s, x^(8n-33) mod P)) = s·x^(8n) mod P: how the kernels
// merge independent streams.

// poly is P without its x^32 term, reflected (bit 31 is x^0).
const poly = 0x82f63b78

// polyOne and polyX are the polynomials 1 and x in the reflected form.
const (
	polyOne = 1 << 31
	polyX   = 1 << 30
)

// xinv is x^-1 mod P. P has a constant term, so x·(P+1)/x = P+1 ≡ 1: the
// inverse is (P+1)/x, i.e. P's terms x^1..x^31 each lowered by one (a left
// shift in reflected form) plus x^31 (bit 0) from the x^32 term.
const xinv = uint32(poly<<1&0xffffffff | 1)

// mulx returns a·x mod P: in reflected form a right shift, and the x^31
// coefficient (bit 0) becomes x^32 ≡ P - x^32.
func mulx(a uint32) uint32 {
	if a&1 != 0 {
		return a>>1 ^ poly
	}
	return a >> 1
}

// mulmod returns a·b mod P, one bit of a at a time (the slow reference all
// the fast paths are checked against).
func mulmod(a, b uint32) uint32 {
	var r uint32
	for i := 31; i >= 0; i-- { // bit i of a is x^(31-i); b is b·x^(31-i) here
		if a>>i&1 != 0 {
			r ^= b
		}
		b = mulx(b)
	}
	return r
}

// xpow returns x^e mod P, for any integer e (negative e uses x^-1).
func xpow(e int64) uint32 {
	base := uint32(polyX)
	if e < 0 {
		base, e = xinv, -e
	}
	r := uint32(polyOne)
	for ; e > 0; e >>= 1 {
		if e&1 != 0 {
			r = mulmod(r, base)
		}
		base = mulmod(base, base)
	}
	return r
}

// shiftConst is the constant that moves a lane e bits down the message
// (fact 2): x^(e-33) mod P, in the low half of a 64-bit lane.
func shiftConst(e int64) uint64 { return uint64(xpow(e - 33)) }

// foldConst is the pair of constants that folds a 128-bit block d bytes
// forward: the low (earlier) half moves 8d+64 bits, the high half 8d. For
// d = 0 it is the identity up to congruence, which lets one set of
// multiplies treat the last lane like the others.
func foldConst(d int) [2]uint64 {
	return [2]uint64{shiftConst(int64(8*d + 64)), shiftConst(int64(8 * d))}
}

// Shift operator table for merging streams at run time. Write
// T(e) = x^(e-33) mod P. Then mulx33(T(a), T(b)) = T(a)·T(b)·x^33 = T(a+b):
// one PCLMULQDQ and one CRC32Q (facts 1, 2) add exponents. So the shift
// constant for any byte count n, T(8n), is the product of T(8·2^i) over the
// set bits i of n: popcount(n)-1 multiplies at run time (shift_amd64.s).
// The 64 powers are computed here once, by squaring: T(2e) = mulx33(T(e), T(e)).
var xpow8 = func() (t [64]uint64) {
	x33 := xpow(33)
	p := xpow(8 - 33) // T(8): one byte
	for i := range t {
		t[i] = uint64(p)
		p = mulmod(mulmod(p, p), x33)
	}
	return
}()

// xpowNeg33 is T(0) = x^-33 mod P, the unit of the T(.) multiplication.
var xpowNeg33 = uint64(xpow(-33))
