package cksum

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// oracle is the reference every implementation is held to.
func oracle(crc uint32, p []byte) uint32 {
	return crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), p)
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestCheckValue(t *testing.T) {
	// The catalogue check value of CRC-32/ISCSI (CRC-32C).
	const want = 0xE3069283
	for _, im := range Impls() {
		if got := im.Update(0, []byte("123456789")); got != want {
			t.Errorf("%s: crc32c(\"123456789\") = %#08x, want %#08x", im.Name, got, want)
		}
	}
	if got := Checksum([]byte("123456789")); got != want {
		t.Errorf("Checksum = %#08x, want %#08x", got, want)
	}
}

func TestImplsHaveGenericAndStdlib(t *testing.T) {
	seen := map[string]bool{}
	for _, im := range Impls() {
		if seen[im.Name] {
			t.Errorf("implementation %q listed twice", im.Name)
		}
		seen[im.Name] = true
		got, err := Lookup(im.Name)
		if err != nil || got.Name != im.Name {
			t.Errorf("Lookup(%q) = %q, %v", im.Name, got.Name, err)
		}
	}
	for _, name := range []string{"generic", "stdlib"} {
		if !seen[name] {
			t.Errorf("implementation %q missing from Impls()", name)
		}
	}
	if b, _ := Lookup("auto"); b.Name != Best().Name {
		t.Errorf("Lookup(auto) = %q, want %q", b.Name, Best().Name)
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup(nope) succeeded")
	}
}

// TestEveryLengthAndAlignment covers every length 0..4096 at every start
// alignment 0..63, where the kernels switch between their head, bulk and
// tail paths. Odd lengths start from a non-zero CRC to cover chaining too.
func TestEveryLengthAndAlignment(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := randBytes(r, 4096+64)
	for _, im := range Impls() {
		t.Run(im.Name, func(t *testing.T) {
			fails := 0
			for align := 0; align < 64; align++ {
				for n := 0; n <= 4096; n++ {
					p := buf[align : align+n]
					init := uint32(0)
					if n%2 == 1 {
						init = r.Uint32()
					}
					if got, want := im.Update(init, p), oracle(init, p); got != want {
						t.Errorf("len %d align %d init %#x: got %#08x, want %#08x", n, align, init, got, want)
						if fails++; fails > 10 {
							t.Fatal("too many failures")
						}
					}
				}
			}
		})
	}
}

func TestRandomLongInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := randBytes(r, 1<<20+64)
	for _, im := range Impls() {
		for range 40 {
			n := r.IntN(1<<20 + 1)
			off := r.IntN(64)
			init := r.Uint32()
			p := buf[off : off+n]
			if got, want := im.Update(init, p), oracle(init, p); got != want {
				t.Errorf("%s: len %d off %d: got %#08x, want %#08x", im.Name, n, off, got, want)
			}
		}
	}
}

func TestChainedSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, im := range Impls() {
		for range 200 {
			p := randBytes(r, r.IntN(300000))
			want := oracle(0, p)
			var crc uint32
			rest := p
			for len(rest) > 0 {
				k := r.IntN(len(rest) + 1)
				if r.IntN(4) == 0 {
					k = min(len(rest), r.IntN(100)) // many short pieces too
				}
				crc = im.Update(crc, rest[:k])
				rest = rest[k:]
			}
			if crc != want {
				t.Fatalf("%s: chained over %d bytes = %#08x, want %#08x", im.Name, len(p), crc, want)
			}
		}
	}
}

func FuzzUpdate(f *testing.F) {
	f.Add(uint32(0), []byte("123456789"), 3)
	f.Add(uint32(0xffffffff), make([]byte, 4096), 1000)
	f.Add(uint32(1), make([]byte, 257), 0)
	f.Fuzz(func(t *testing.T, init uint32, p []byte, split int) {
		want := oracle(init, p)
		if split < 0 {
			split = -split
		}
		if len(p) > 0 {
			split %= len(p) + 1
		} else {
			split = 0
		}
		for _, im := range Impls() {
			if got := im.Update(init, p); got != want {
				t.Fatalf("%s: len %d: got %#08x, want %#08x", im.Name, len(p), got, want)
			}
			if got := im.Update(im.Update(init, p[:split]), p[split:]); got != want {
				t.Fatalf("%s: len %d split %d: got %#08x, want %#08x", im.Name, len(p), split, got, want)
			}
		}
	})
}

func TestModesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, hblks := range []int{1, 2, 4, 8} {
		for _, payload := range []int{0, 512, 4096, 32768 - 512*hblks, 8 * 32768 / 2} {
			rec := randBytes(r, hblks*BlockSize+payload)
			want := oracle(0, rec)
			for _, m := range Modes() {
				got, calls := Sum(m, Best().Update, rec, hblks*BlockSize)
				if got != want {
					t.Errorf("%s hblks %d payload %d: crc %#08x, want %#08x", m, hblks, payload, got, want)
				}
				var wantCalls int
				switch m {
				case Batched:
					wantCalls = 1
				case XFS:
					wantCalls = 2 + (hblks - 1) // header, ext headers, payload
				case Sector:
					wantCalls = len(rec) / BlockSize
				case Inline:
					wantCalls = 2 // header blocks, payload
				}
				if calls != wantCalls {
					t.Errorf("%s hblks %d payload %d: %d calls, want %d", m, hblks, payload, calls, wantCalls)
				}
			}
		}
	}
}

func TestSummerCounts(t *testing.T) {
	rec := make([]byte, 8*BlockSize+64*BlockSize)
	s := NewSummer(Sector, Best())
	s.Record(rec, 8*BlockSize)
	s.Record(rec, 8*BlockSize)
	st := s.Stats()
	if st.Records != 2 || st.Calls != 2*72 || st.Bytes != uint64(2*len(rec)) {
		t.Errorf("stats = %+v, want 2 records, 144 calls, %d bytes", st, 2*len(rec))
	}
	if st.Nanos > st.WallNanos {
		t.Errorf("CPU time %d ns > wall time %d ns", st.Nanos, st.WallNanos)
	}
}

func TestSummerObserve(t *testing.T) {
	rec := make([]byte, 8*BlockSize+24*BlockSize)
	s := NewSummer(XFS, Best())
	var got []Cost
	s.Observe(func(c Cost) { got = append(got, c) })
	s.Record(rec, 8*BlockSize)
	s.Record(rec[:2*BlockSize], BlockSize)
	if len(got) != 2 || got[0].Bytes != len(rec) || got[0].Calls != 9 || got[1].Bytes != 2*BlockSize || got[1].Calls != 2 {
		t.Fatalf("observed %+v, want 2 records: %d bytes in 9 calls, 1024 bytes in 2", got, len(rec))
	}
	var cpu, wall time.Duration
	for _, c := range got {
		if c.CPU < 0 || c.CPU > c.Wall {
			t.Errorf("cost %+v: CPU time outside [0, wall]", c)
		}
		cpu, wall = cpu+c.CPU, wall+c.Wall
	}
	if st := s.Stats(); st.Nanos != uint64(cpu) || st.WallNanos != uint64(wall) {
		t.Errorf("stats %d ns CPU, %d ns wall; observed %d, %d", st.Nanos, st.WallNanos, cpu, wall)
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes() {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
	if len(Modes()) != 4 || Modes()[3] != Inline || Inline.String() != "inline" {
		t.Errorf("Modes() = %v, want inline fourth", Modes())
	}
	if m, err := ParseMode("per-chunk"); err != nil || m != XFS {
		t.Errorf("ParseMode(per-chunk) = %v, %v", m, err)
	}
	if _, err := ParseMode("bogus"); err == nil {
		t.Error("ParseMode(bogus) succeeded")
	}
}

// Sizes the issue asks about; the AVX-512 warm-up makes "short after long"
// worth measuring too, which BenchmarkShortAfterLong does.
var benchSizes = []int{64, 512, 4096, 32768, 262144}

func BenchmarkUpdate(b *testing.B) {
	for _, im := range Impls() {
		for _, n := range benchSizes {
			buf := make([]byte, n)
			b.Run(fmt.Sprintf("%s/%d", im.Name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				var crc uint32
				for b.Loop() {
					crc = im.Update(crc, buf)
				}
			})
		}
	}
}

// BenchmarkShortAfterLong checksums a 256 KiB buffer then a short one in
// each iteration, so the short call runs right after a long one and pays any
// vector-unit warm-up or frequency change the long call caused.
func BenchmarkShortAfterLong(b *testing.B) {
	long := make([]byte, 262144)
	for _, im := range Impls() {
		for _, n := range []int{64, 512} {
			short := make([]byte, n)
			b.Run(fmt.Sprintf("%s/%d", im.Name, n), func(b *testing.B) {
				b.SetBytes(int64(n + len(long)))
				var crc uint32
				for b.Loop() {
					crc = im.Update(crc, long)
					crc = im.Update(crc, short)
				}
			})
		}
	}
}

func BenchmarkModes256K(b *testing.B) {
	rec := make([]byte, 262144)
	for _, m := range Modes() {
		b.Run(m.String(), func(b *testing.B) {
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				Sum(m, Best().Update, rec, 8*BlockSize)
			}
		})
	}
}

// Every implementation's functions are named so that a profile finds them
// with go tool pprof -focus crc32c: named functions containing "crc32c", or
// closures inside one, or functions of package cksum/crc32c.
func TestKernelsNamedCRC32C(t *testing.T) {
	for _, im := range Impls() {
		for what, f := range map[string]any{"Update": im.Update, "Combine": im.Combine, "CopyUpdate": im.CopyUpdate} {
			name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
			if !strings.Contains(name, "crc32c") {
				t.Errorf("%s's %s is %s: go tool pprof -focus crc32c would not find it", im.Name, what, name)
			}
		}
	}
}
