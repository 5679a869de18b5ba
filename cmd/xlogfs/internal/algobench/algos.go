// Package algobench is the harness behind "xlogfs algo-bench": it puts the
// checksums that storage engines argue about side by side on one machine —
// their speed, what damage of the kinds a log or a page suffers they miss,
// and what verifying every 8 KiB page costs a scan from the page cache.
//
// The algorithms are in this file, the buffers they are tested on in
// content.go, the damage models in damage.go, the exact shortcuts that let
// 200,000 trials of a 256 KiB record run in seconds in shortcut.go, the
// trial harness in detect.go, the statistics in stats.go, the speed and
// scan measurements in speed.go and scan.go, and the report in report.go
// and chart.go.
package algobench

import (
	"fmt"
	"hash"
	"hash/adler32"
	"hash/crc32"
	"hash/crc64"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/algobench/sums"
)

// family says how the detection harness can evaluate an algorithm.
type family int

const (
	// famCRC: linear over GF(2), so a damage's effect on the checksum is the
	// CRC of the damage alone (shortcut.go).
	famCRC family = iota
	// famSum: modular sums, so a damage changes them by weighted sums of the
	// byte changes (shortcut.go).
	famSum
	// famHash: no shortcut; the damaged buffer is hashed again.
	famHash
)

// Algo is one checksum under test.
type Algo struct {
	Name     string // as --algos takes it
	Desc     string
	Source   string // which implementation
	Width    int    // bits the algorithm produces
	Multiple int    // inputs must be a multiple of this many bytes (1: any)
	Sum      func(p []byte) uint64
	// SameAs names an algorithm that computes the same function (another
	// implementation of it); detection is measured once, on that one.
	SameAs string

	family    family
	newStream func() stream
	crc       *crcLinear               // famCRC
	delta     func(a, b uint64) uint64 // the change from checksum a to b, as the shortcut computes it
	sumDelta  func(n int, d *Damage) uint64
}

// defined reports whether the algorithm takes inputs of n bytes.
func (a *Algo) defined(n int) bool { return n > 0 && n%a.Multiple == 0 }

// stream is an algorithm in streaming form: the detection harness takes
// prefix checksums from one pass (truncation) and resumes hashing from the
// state after an undamaged prefix (checkpoints).
type stream interface {
	Write(p []byte)
	Sum() uint64 // does not change the state
	Clone() stream
	CopyFrom(s stream) // becomes a copy of s (same algorithm)
}

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	ecma       = crc64.MakeTable(crc64.ECMA)
)

func xorDelta(a, b uint64) uint64 { return a ^ b }

// Algos returns every algorithm, crc32c/best first (the reference that
// speeds are given as ratios to).
func Algos() []*Algo {
	best := cksum.Best()
	generic, err := cksum.Lookup("generic")
	if err != nil {
		panic("cksum has no generic implementation: " + err.Error()) // cksum always has one
	}
	crc32cUpdate := func(c uint64, p []byte) uint64 { return uint64(cksum.Update(uint32(c), p)) }
	ieeeUpdate := func(c uint64, p []byte) uint64 { return uint64(crc32.Update(uint32(c), crc32.IEEETable, p)) }
	ecmaUpdate := func(c uint64, p []byte) uint64 { return crc64.Update(c, ecma, p) }
	genericUpdate := generic.Update
	return []*Algo{
		{
			Name: "crc32c/best", Desc: "CRC-32C (Castagnoli), the xlogfs log's checksum",
			Source: "package cksum, kernel " + best.Name, Width: 32, Multiple: 1,
			Sum:    func(p []byte) uint64 { return uint64(cksum.Update(0, p)) },
			family: famCRC, crc: newCRCLinear(32, cksum.Castagnoli, crc32cUpdate), delta: xorDelta,
			newStream: func() stream { return &crcStream{update: crc32cUpdate} },
		},
		{
			Name: "crc32c/generic", Desc: "CRC-32C, table-driven slicing-by-8 (no CRC instructions)",
			Source: "package cksum, kernel generic", Width: 32, Multiple: 1, SameAs: "crc32c/best",
			Sum:    func(p []byte) uint64 { return uint64(genericUpdate(0, p)) },
			family: famCRC, crc: newCRCLinear(32, cksum.Castagnoli, func(c uint64, p []byte) uint64 { return uint64(genericUpdate(uint32(c), p)) }), delta: xorDelta,
			newStream: func() stream {
				return &crcStream{update: func(c uint64, p []byte) uint64 { return uint64(genericUpdate(uint32(c), p)) }}
			},
		},
		{
			Name: "crc32-ieee", Desc: "CRC-32 (IEEE 802.3, zlib's), PostgreSQL's WAL CRC before 9.5",
			Source: "Go hash/crc32", Width: 32, Multiple: 1,
			Sum:    func(p []byte) uint64 { return uint64(crc32.ChecksumIEEE(p)) },
			family: famCRC, crc: newCRCLinear(32, crc32.IEEE, ieeeUpdate), delta: xorDelta,
			newStream: func() stream { return &crcStream{update: ieeeUpdate} },
		},
		{
			Name: "crc64-ecma", Desc: "CRC-64 (ECMA-182 polynomial, reflected; CRC-64/XZ), PostgreSQL's old 64-bit WAL CRC",
			Source: "Go hash/crc64", Width: 64, Multiple: 1,
			Sum:    func(p []byte) uint64 { return crc64.Checksum(p, ecma) },
			family: famCRC, crc: newCRCLinear(64, crc64.ECMA, ecmaUpdate), delta: xorDelta,
			newStream: func() stream { return &crcStream{update: ecmaUpdate} },
		},
		{
			Name: "adler32", Desc: "Adler-32 (zlib): two sums of bytes mod 65521",
			Source: "Go hash/adler32", Width: 32, Multiple: 1,
			Sum:    func(p []byte) uint64 { return uint64(adler32.Checksum(p)) },
			family: famSum, delta: modDelta(65521, 16), sumDelta: adlerDelta,
			newStream: func() stream { return &adlerStream{h: adler32.New()} },
		},
		{
			Name: "fletcher16", Desc: "Fletcher-16: two sums of bytes mod 255",
			Source: "ours (algobench/sums)", Width: 16, Multiple: 1,
			Sum:    func(p []byte) uint64 { return uint64(sums.Checksum16(p)) },
			family: famSum, delta: modDelta(255, 8), sumDelta: fletcher16Delta,
			newStream: func() stream { return &f16Stream{} },
		},
		{
			Name: "fletcher32", Desc: "Fletcher-32: two sums of 16-bit words mod 65535",
			Source: "ours (algobench/sums)", Width: 32, Multiple: 1,
			Sum:    func(p []byte) uint64 { return uint64(sums.Checksum32(p)) },
			family: famSum, delta: modDelta(65535, 16), sumDelta: fletcher32Delta,
			newStream: func() stream { return &f32Stream{} },
		},
		{
			Name: "pg-fnv", Desc: "PostgreSQL's page checksum: FNV-1a-style mix over 32 lanes, folded to 16 bits (block 0)",
			Source: "ours (algobench/sums)", Width: 16, Multiple: sums.PGRowBytes,
			Sum:    func(p []byte) uint64 { return uint64(sums.PGFold(sums.PGBlockHash(p), 0)) },
			family: famHash, delta: xorDelta,
			newStream: func() stream { return &pgStream{b: *sums.NewPGBlock()} },
		},
		{
			Name: "xxhash64", Desc: "xxHash64 (seed 0), one of RocksDB's block checksums",
			Source: "github.com/cespare/xxhash/v2", Width: 64, Multiple: 1,
			Sum:    xxhash.Sum64,
			family: famHash, delta: xorDelta,
			newStream: func() stream { return &xxhStream{d: *xxhash.New()} },
		},
		{
			Name: "xxh3", Desc: "XXH3-64 (seed 0), RocksDB's default block checksum",
			Source: "github.com/zeebo/xxh3", Width: 64, Multiple: 1,
			Sum:    xxh3.Hash,
			family: famHash, delta: xorDelta,
			newStream: func() stream { return &xxh3Stream{h: *xxh3.New()} },
		},
	}
}

// SelectAlgos resolves a comma-separated list of names ("" or "all": every
// algorithm). crc32c/best is always included: it is the reference.
func SelectAlgos(spec string) ([]*Algo, error) {
	all := Algos()
	if spec == "" || spec == "all" {
		return all, nil
	}
	want := map[string]bool{all[0].Name: true}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, a := range all {
			if a.Name == name {
				found = true
			}
		}
		if !found {
			var names []string
			for _, a := range all {
				names = append(names, a.Name)
			}
			return nil, fmt.Errorf("unknown algorithm %q (have: %s)", name, strings.Join(names, ", "))
		}
		want[name] = true
	}
	var out []*Algo
	for _, a := range all {
		if want[a.Name] {
			out = append(out, a)
		}
	}
	return out, nil
}

// crcStream is any CRC in the hash/crc32.Update convention.
type crcStream struct {
	crc    uint64
	update func(uint64, []byte) uint64
}

func (s *crcStream) Write(p []byte)    { s.crc = s.update(s.crc, p) }
func (s *crcStream) Sum() uint64       { return s.crc }
func (s *crcStream) Clone() stream     { c := *s; return &c }
func (s *crcStream) CopyFrom(o stream) { *s = *o.(*crcStream) }

type adlerStream struct{ h hash.Hash32 }

func (s *adlerStream) Write(p []byte) { s.h.Write(p) }
func (s *adlerStream) Sum() uint64    { return uint64(s.h.Sum32()) }
func (s *adlerStream) Clone() stream  { c := &adlerStream{h: adler32.New()}; c.CopyFrom(s); return c }
func (s *adlerStream) CopyFrom(o stream) {
	// hash/adler32's digest marshals its state; that is the only way to copy it.
	st, err := o.(*adlerStream).h.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
	if err == nil {
		err = s.h.(interface{ UnmarshalBinary([]byte) error }).UnmarshalBinary(st)
	}
	if err != nil {
		panic("hash/adler32 state copy: " + err.Error()) // its own marshalled state always loads
	}
}

type f16Stream struct{ f sums.Fletcher16 }

func (s *f16Stream) Write(p []byte)    { s.f.Write(p) }
func (s *f16Stream) Sum() uint64       { return uint64(s.f.Sum16()) }
func (s *f16Stream) Clone() stream     { c := *s; return &c }
func (s *f16Stream) CopyFrom(o stream) { *s = *o.(*f16Stream) }

type f32Stream struct{ f sums.Fletcher32 }

func (s *f32Stream) Write(p []byte)    { s.f.Write(p) }
func (s *f32Stream) Sum() uint64       { return uint64(s.f.Sum32()) }
func (s *f32Stream) Clone() stream     { c := *s; return &c }
func (s *f32Stream) CopyFrom(o stream) { *s = *o.(*f32Stream) }

type pgStream struct{ b sums.PGBlock }

func (s *pgStream) Write(p []byte)    { s.b.Write(p) }
func (s *pgStream) Sum() uint64       { return uint64(sums.PGFold(s.b.Sum32(), 0)) }
func (s *pgStream) Clone() stream     { c := *s; return &c }
func (s *pgStream) CopyFrom(o stream) { *s = *o.(*pgStream) }

// The xxHash digests hold only values (xxh3's key pointer points at the
// shared default secret), so a struct copy is a copy of the state.
type xxhStream struct{ d xxhash.Digest }

func (s *xxhStream) Write(p []byte)    { s.d.Write(p) }
func (s *xxhStream) Sum() uint64       { return s.d.Sum64() }
func (s *xxhStream) Clone() stream     { c := *s; return &c }
func (s *xxhStream) CopyFrom(o stream) { *s = *o.(*xxhStream) }

type xxh3Stream struct{ h xxh3.Hasher }

func (s *xxh3Stream) Write(p []byte)    { s.h.Write(p) }
func (s *xxh3Stream) Sum() uint64       { return s.h.Sum64() }
func (s *xxh3Stream) Clone() stream     { c := *s; return &c }
func (s *xxh3Stream) CopyFrom(o stream) { *s = *o.(*xxh3Stream) }
