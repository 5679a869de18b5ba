package algobench

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
)

// Model is a kind of damage.
type Model int

const (
	Flip1      Model = iota // 1 random bit flipped
	Flip2                   // 2 distinct random bits
	Flip3                   // 3 distinct random bits
	Burst32                 // a burst spanning 1–32 bits
	Burst64                 // a burst spanning 33–64 bits
	BurstLong               // a burst spanning 65–4096 bits (up to a block)
	ZeroBlock               // one 512-byte block zeroed
	StaleBlock              // one block holding what it held one cycle earlier
	SwapBlocks              // two blocks swapped
	Truncate                // the buffer cut at a block boundary
	ZeroToFF                // every 0x00 byte turned to 0xFF
	numModels
)

// ModelInfo describes a model for the report.
type ModelInfo struct {
	Key   string // in results.json
	Short string // table column
	Name  string // in sentences
	Desc  string
	// UpTo32 models change at most 32 bits, or a span of at most 32 bits.
	UpTo32 bool
	// Fresh models need a new buffer per trial (the damage is a function of
	// the whole buffer) rather than a new damage to a pooled one.
	Fresh bool
}

var modelInfo = [numModels]ModelInfo{
	Flip1:      {"flip1", "1 bit", "1-bit flips", "one random bit flipped", true, false},
	Flip2:      {"flip2", "2 bits", "2-bit flips", "two distinct random bits flipped", true, false},
	Flip3:      {"flip3", "3 bits", "3-bit flips", "three distinct random bits flipped", true, false},
	Burst32:    {"burst32", "bst≤32", "bursts ≤ 32 bits", "a burst: a span of 1–32 bits (first and last flipped, the rest at random)", true, false},
	Burst64:    {"burst64", "bst33-64", "bursts of 33–64 bits", "a burst spanning 33–64 bits", false, false},
	BurstLong:  {"burstlong", "bst>64", "bursts of 65–4096 bits", "a burst spanning 65–4096 bits", false, false},
	ZeroBlock:  {"zeroblock", "zero blk", "zeroed blocks", "one 512-byte block zeroed (a lost sector write)", false, false},
	StaleBlock: {"staleblock", "stale blk", "stale blocks", "one block holding what it held one cycle earlier (a torn write over an older log record or page: other contents; a log block's cycle stamp one less)", false, false},
	SwapBlocks: {"swapblocks", "swap blks", "swapped blocks", "two distinct blocks swapped (misdirected writes)", false, false},
	Truncate:   {"truncate", "truncate", "truncations", "the buffer cut at a random block boundary; the checksum of the rest compared with the whole's", false, true},
	ZeroToFF:   {"zerotoff", "00→FF", "00→FF damages", "every 0x00 byte turned into 0xFF (erased flash, Fletcher's blind spot)", false, true},
}

// Models lists every model in report order.
func Models() []Model {
	m := make([]Model, numModels)
	for i := range m {
		m[i] = Model(i)
	}
	return m
}

func (m Model) Info() ModelInfo { return modelInfo[m] }
func (m Model) String() string  { return modelInfo[m].Key }

// modelByKey finds a model by its results.json key (-1 if none).
func modelByKey(k string) Model {
	for _, m := range Models() {
		if m.String() == k {
			return m
		}
	}
	return -1
}

// burstBounds gives the span in bits of the burst models.
func (m Model) burstBounds() (lo, hi int) {
	switch m {
	case Burst32:
		return 1, 32
	case Burst64:
		return 33, 64
	default:
		return 65, 8 * BlockSize
	}
}

// Patch is one changed stretch of a buffer.
type Patch struct {
	Off      int
	Old, New []byte
}

// Damage is one trial's damage to a buffer of N bytes. Models that keep the
// length describe it as disjoint patches in offset order; Truncate as the
// new length Len.
type Damage struct {
	Model   Model
	N       int
	Patches []Patch
	Len     int

	store []byte
	// The sums' shortcut's unreduced sums, by word size (shortcut.go).
	sums      [2][2]int64
	sumsValid [2]bool
	// Old ⊕ New of each patch, made on demand (shortcut.go).
	xors     [][]byte
	xorStore []byte
}

func (d *Damage) reset(m Model, n, storeBytes int) {
	d.Model, d.N, d.Len = m, n, n
	d.sumsValid = [2]bool{}
	clear(d.xors)
	d.xors = d.xors[:0]
	if cap(d.xorStore) < storeBytes {
		d.xorStore = make([]byte, 0, storeBytes)
	}
	d.xorStore = d.xorStore[:0]
	d.Patches = d.Patches[:0]
	if cap(d.store) < storeBytes {
		d.store = make([]byte, 0, storeBytes)
	}
	d.store = d.store[:0]
}

// take returns k bytes of the damage's own storage (reset reserved them).
func (d *Damage) take(k int) []byte {
	s := d.store[len(d.store) : len(d.store)+k]
	d.store = d.store[:len(d.store)+k]
	return s
}

// addPatch records that buf[off:off+len(newb)] becomes newb.
func (d *Damage) addPatch(buf []byte, off int, newb []byte) {
	old := d.take(len(newb))
	copy(old, buf[off:])
	d.Patches = append(d.Patches, Patch{Off: off, Old: old, New: newb})
}

// Apply writes the damage into buf (whose length it keeps).
func (d *Damage) Apply(buf []byte) {
	for _, p := range d.Patches {
		copy(buf[p.Off:], p.New)
	}
}

// Revert undoes Apply.
func (d *Damage) Revert(buf []byte) {
	for _, p := range d.Patches {
		copy(buf[p.Off:], p.Old)
	}
}

// Damaged returns a damaged copy of buf.
func (d *Damage) Damaged(buf []byte) []byte {
	c := bytes.Clone(buf[:d.Len])
	for _, p := range d.Patches {
		copy(c[p.Off:], p.New)
	}
	return c
}

// generate draws one damage of model m to buf, of shape s. It reports false
// when buf admits no damage of the model that changes it (a buffer with no
// 0x00 byte for ZeroToFF, all blocks zero for ZeroBlock, ...).
func (d *Damage) generate(r *rand.Rand, m Model, s Shape, buf []byte) bool {
	n := len(buf)
	nb := n / BlockSize
	switch m {
	case Flip1, Flip2, Flip3:
		k := int(m-Flip1) + 1
		d.reset(m, n, 2*k)
		var bits [3]int
		for i := 0; i < k; i++ {
			bits[i] = r.IntN(8 * n)
			if slices.Contains(bits[:i], bits[i]) {
				i-- // distinct bits
			}
		}
		slices.Sort(bits[:k])
		for i := 0; i < k; {
			off := bits[i] / 8
			var mask byte
			for ; i < k && bits[i]/8 == off; i++ {
				mask |= 1 << (bits[i] % 8)
			}
			x := d.take(1)
			x[0] = buf[off] ^ mask
			d.addPatch(buf, off, x)
		}
		return true

	case Burst32, Burst64, BurstLong:
		lo, hi := m.burstBounds()
		hi = min(hi, 8*n)
		if lo > hi {
			return false
		}
		span := lo + r.IntN(hi-lo+1)
		// Bits are numbered in the order the CRCs here (all reflected) and
		// serial links see them: byte by byte, least significant bit first.
		first := r.IntN(8*n - span + 1)
		last := first + span - 1
		a, b := first/8, last/8
		d.reset(m, n, 2*(b-a+1))
		x := d.take(b - a + 1)
		fillRandom(r, x)
		for i := range x {
			lowBit := max(first-8*(a+i), 0)
			highBit := min(last-8*(a+i), 7)
			x[i] &= byte((1<<(highBit+1))-1) &^ byte((1<<lowBit)-1)
		}
		x[0] |= 1 << (first % 8)
		x[b-a] |= 1 << (last % 8)
		for i := range x {
			x[i] ^= buf[a+i]
		}
		d.addPatch(buf, a, x)
		return true

	case ZeroBlock:
		for range 4 * nb {
			if d.zeroBlock(buf, r.IntN(nb)) {
				return true
			}
		}
		return false

	case StaleBlock:
		for range 8 {
			if d.staleBlock(r, s, buf, r.IntN(nb)) {
				return true
			}
		}
		return false

	case SwapBlocks:
		if nb < 2 {
			return false
		}
		for range 8 {
			i, j := twoBlocks(r, nb)
			if d.swapBlocks(buf, i, j) {
				return true
			}
		}
		return false

	case Truncate:
		if nb < 2 {
			return false
		}
		d.reset(m, n, 0)
		d.Len = (1 + r.IntN(nb-1)) * BlockSize
		return true

	case ZeroToFF:
		first := bytes.IndexByte(buf, 0)
		if first < 0 {
			return false
		}
		last := bytes.LastIndexByte(buf, 0)
		d.reset(m, n, 2*(last-first+1))
		x := d.take(last - first + 1)
		for i := range x {
			if x[i] = buf[first+i]; x[i] == 0 {
				x[i] = 0xff
			}
		}
		d.addPatch(buf, first, x)
		return true
	}
	return false
}

// twoBlocks draws two distinct block numbers, the smaller first.
func twoBlocks(r *rand.Rand, nb int) (int, int) {
	i := r.IntN(nb)
	j := r.IntN(nb - 1)
	if j >= i {
		j++
	}
	return min(i, j), max(i, j)
}

// zeroBlock makes d the zeroing of block blk of buf; false if it is zero.
func (d *Damage) zeroBlock(buf []byte, blk int) bool {
	off := blk * BlockSize
	if isZero(buf[off : off+BlockSize]) {
		return false
	}
	d.reset(ZeroBlock, len(buf), BlockSize)
	d.addPatch(buf, off, zeroBlock[:])
	return true
}

// staleBlock makes d block blk of buf holding what it held one cycle
// earlier: other contents, made here, and in a log record the cycle stamp
// one less. False if that happens to be what it holds.
func (d *Damage) staleBlock(r *rand.Rand, s Shape, buf []byte, blk int) bool {
	off := blk * BlockSize
	d.reset(StaleBlock, len(buf), 2*BlockSize)
	stale := d.take(BlockSize)
	fillContent(r, stale)
	if s.Stamped {
		binary.BigEndian.PutUint32(stale, binary.BigEndian.Uint32(buf[off:])-1)
	}
	if bytes.Equal(stale, buf[off:off+BlockSize]) {
		return false
	}
	d.addPatch(buf, off, stale)
	return true
}

// swapBlocks makes d the exchange of blocks i < j of buf; false if they are
// equal.
func (d *Damage) swapBlocks(buf []byte, i, j int) bool {
	bi, bj := buf[i*BlockSize:(i+1)*BlockSize], buf[j*BlockSize:(j+1)*BlockSize]
	if bytes.Equal(bi, bj) {
		return false
	}
	d.reset(SwapBlocks, len(buf), 2*BlockSize)
	// The patches keep their own copies, so applying the damage to the
	// buffer cannot change them: the new bytes of one block are the old
	// bytes of the other.
	oi, oj := d.take(BlockSize), d.take(BlockSize)
	copy(oi, bi)
	copy(oj, bj)
	d.Patches = append(d.Patches, Patch{Off: i * BlockSize, Old: oi, New: oj}, Patch{Off: j * BlockSize, Old: oj, New: oi})
	return true
}

// refreshBlock gives block blk of buf new contents of the shape (keeping a
// log record's cycle stamp): the harness's way to make a pooled buffer a
// new one where a block damage falls.
func (s Shape) refreshBlock(r *rand.Rand, buf []byte, blk int) {
	b := buf[blk*BlockSize : (blk+1)*BlockSize]
	var stamp [4]byte
	copy(stamp[:], b)
	fillContent(r, b)
	if s.Stamped {
		copy(b, stamp[:])
	}
}

var zeroBlock [BlockSize]byte // never written

func isZero(p []byte) bool {
	for len(p) >= 8 {
		if binary.LittleEndian.Uint64(p) != 0 {
			return false
		}
		p = p[8:]
	}
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}
