package algobench

import (
	"encoding/binary"
	"math/rand/v2"
)

// BlockSize is the sector size the damage models work in: XFS's log block,
// and the unit a torn write tears along.
const BlockSize = 512

// Shape is a kind of buffer under test.
type Shape struct {
	Key   string // in results.json
	Title string
	Bytes int
	// Stamped buffers are log records: every 512-byte block begins with the
	// log's cycle number, big-endian, as XFS stamps its log blocks.
	Stamped bool
}

// Shapes are the two buffers the detection models damage: a database page
// and a full xlogfs log record.
var Shapes = []Shape{
	{Key: "page8k", Title: "8 KiB page", Bytes: 8 << 10},
	{Key: "record256k", Title: "256 KiB log record", Bytes: 256 << 10, Stamped: true},
}

// fillContent fills p with bytes shaped like what logs and pages hold: a
// run of items, each one of
//   - random bytes (compressed or encrypted data, hashes, UUIDs),
//   - small little-endian integers (lengths, offsets, counts, inode numbers:
//     mostly zero high bytes),
//   - text,
//   - zeros (padding, free space).
//
// The mix matters to the models that depend on the data (00→FF, zeroed
// blocks) and to the sums, whose misses depend on the bytes they see.
func fillContent(r *rand.Rand, p []byte) {
	const alphabet = " etaoinshrdlucmfwypvbgkjqxzETAOINSHRDLU0123456789.,;:-_/()=+\n!?'"
	for len(p) > 0 {
		var n int
		switch k := r.IntN(100); {
		case k < 30:
			n = min(8+r.IntN(249), len(p))
			fillRandom(r, p[:n])
		case k < 55:
			n = min(4*(4+r.IntN(29)), len(p))
			for i := 0; i < n; i += 4 {
				var w [4]byte
				binary.LittleEndian.PutUint32(w[:], r.Uint32()>>(8+r.IntN(24)))
				copy(p[i:n], w[:])
			}
		case k < 85:
			n = min(16+r.IntN(241), len(p))
			for i := 0; i < n; {
				v := r.Uint64()
				for j := 0; j < 10 && i < n; j, i = j+1, i+1 {
					p[i] = alphabet[v&63]
					v >>= 6
				}
			}
		default:
			n = min(8+r.IntN(505), len(p))
			clear(p[:n])
		}
		p = p[n:]
	}
}

func fillRandom(r *rand.Rand, p []byte) {
	for len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, r.Uint64())
		p = p[8:]
	}
	if len(p) > 0 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(p, w[:])
	}
}

// fill makes p (len p = s.Bytes) one buffer of the shape.
func (s Shape) fill(r *rand.Rand, p []byte) {
	fillContent(r, p)
	if s.Stamped {
		cycle := 2 + r.Uint32N(1<<20)
		for off := 0; off < len(p); off += BlockSize {
			binary.BigEndian.PutUint32(p[off:], cycle)
		}
	}
}
