// Package sums holds the checksums algo-bench compares that no well-kept Go
// library provides: Fletcher-16, Fletcher-32 and PostgreSQL's page checksum.
// Each is written from its published description; the tests check each
// against its published check values.
package sums

// Fletcher's checksum keeps two running sums modulo M: s1 adds each data
// word, s2 adds s1 after each word, so s2 weighs a word by how many words
// follow it (plus one): for n words w_0..w_{n-1},
//
//	s1 = Σ w_i mod M,  s2 = Σ (n−i)·w_i mod M.
//
// Fletcher-16 takes bytes and M = 255, Fletcher-32 little-endian 16-bit words
// and M = 65535, and both put s2 in the high half. Because M = 2^k − 1, a
// word of all zero bits and a word of all one bits are the same residue:
// turning 0x00 bytes into 0xFF is invisible to Fletcher-16.
//
// The sums below are kept in uint64 and reduced only every reduceEvery words,
// which is exact: after k words of at most 2^16−1 each, s2 grows by less than
// 2^16·k², far below 2^63 for k = 2^22.

const reduceEvery = 1 << 22

// Fletcher16 is a streaming Fletcher-16 (bytes, modulo 255). The zero value
// is ready to use.
type Fletcher16 struct {
	s1, s2 uint64
	n      int // bytes since the last reduction
}

// Write adds p to the checksum.
func (f *Fletcher16) Write(p []byte) {
	s1, s2 := f.s1, f.s2
	for len(p) > 0 {
		chunk := p
		if room := reduceEvery - f.n; len(chunk) > room {
			chunk = chunk[:room]
		}
		p = p[len(chunk):]
		f.n += len(chunk)
		// Eight bytes at a time: s2 gains 8·s1 plus each byte weighted by
		// the number of steps it stays in s1 (8 for the first, 1 for the last).
		for len(chunk) >= 8 {
			b0, b1, b2, b3 := uint64(chunk[0]), uint64(chunk[1]), uint64(chunk[2]), uint64(chunk[3])
			b4, b5, b6, b7 := uint64(chunk[4]), uint64(chunk[5]), uint64(chunk[6]), uint64(chunk[7])
			s2 += 8*s1 + 8*b0 + 7*b1 + 6*b2 + 5*b3 + 4*b4 + 3*b5 + 2*b6 + b7
			s1 += b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7
			chunk = chunk[8:]
		}
		for _, b := range chunk {
			s1 += uint64(b)
			s2 += s1
		}
		if f.n == reduceEvery {
			s1, s2, f.n = s1%255, s2%255, 0
		}
	}
	f.s1, f.s2 = s1, s2
}

// Sum16 returns s2<<8 | s1 for the bytes written so far.
func (f *Fletcher16) Sum16() uint16 { return uint16(f.s2%255)<<8 | uint16(f.s1%255) }

// Checksum16 returns the Fletcher-16 checksum of p.
func Checksum16(p []byte) uint16 {
	var f Fletcher16
	f.Write(p)
	return f.Sum16()
}

// Fletcher32 is a streaming Fletcher-32: 16-bit little-endian words, modulo
// 65535; an odd final byte is a word whose high byte is zero. The zero value
// is ready to use, and writes may split words.
type Fletcher32 struct {
	s1, s2  uint64
	n       int  // words since the last reduction
	odd     bool // a low byte is waiting for its high byte
	pending byte
}

// Write adds p to the checksum.
func (f *Fletcher32) Write(p []byte) {
	if len(p) == 0 {
		return
	}
	if f.odd {
		f.word(uint64(f.pending) | uint64(p[0])<<8)
		f.odd = false
		p = p[1:]
	}
	s1, s2 := f.s1, f.s2
	for len(p) >= 2 {
		words := len(p) / 2
		if room := reduceEvery - f.n; words > room {
			words = room
		}
		chunk := p[:2*words]
		p = p[2*words:]
		f.n += words
		// Four words at a time, weighted as in Fletcher16.Write.
		for len(chunk) >= 8 {
			w0 := uint64(chunk[0]) | uint64(chunk[1])<<8
			w1 := uint64(chunk[2]) | uint64(chunk[3])<<8
			w2 := uint64(chunk[4]) | uint64(chunk[5])<<8
			w3 := uint64(chunk[6]) | uint64(chunk[7])<<8
			s2 += 4*s1 + 4*w0 + 3*w1 + 2*w2 + w3
			s1 += w0 + w1 + w2 + w3
			chunk = chunk[8:]
		}
		for ; len(chunk) >= 2; chunk = chunk[2:] {
			s1 += uint64(chunk[0]) | uint64(chunk[1])<<8
			s2 += s1
		}
		if f.n == reduceEvery {
			s1, s2, f.n = s1%65535, s2%65535, 0
		}
	}
	f.s1, f.s2 = s1, s2
	if len(p) == 1 {
		f.odd, f.pending = true, p[0]
	}
}

func (f *Fletcher32) word(w uint64) {
	f.s1 += w
	f.s2 += f.s1
	if f.n++; f.n == reduceEvery {
		f.s1, f.s2, f.n = f.s1%65535, f.s2%65535, 0
	}
}

// Sum32 returns s2<<16 | s1 for the bytes written so far, a pending odd
// byte counted as a zero-padded word. It does not change the state.
func (f *Fletcher32) Sum32() uint32 {
	s1, s2 := f.s1, f.s2
	if f.odd {
		s1 += uint64(f.pending)
		s2 += s1
	}
	return uint32(s2%65535)<<16 | uint32(s1%65535)
}

// Checksum32 returns the Fletcher-32 checksum of p.
func Checksum32(p []byte) uint32 {
	var f Fletcher32
	f.Write(p)
	return f.Sum32()
}
