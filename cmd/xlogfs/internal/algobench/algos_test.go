package algobench

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func algoByName(t *testing.T, name string) *Algo {
	t.Helper()
	for _, a := range Algos() {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no algorithm %s", name)
	return nil
}

// Every algorithm against its published check values: the CRC catalogue's
// check ("123456789"), zlib's and Fletcher's quoted values, PostgreSQL's
// pageinspect regression output, and the xxHash reference vectors.
func TestCheckValues(t *testing.T) {
	page01 := bytes.Repeat([]byte{0x01}, 8192)
	page01[8], page01[9] = 0, 0 // pd_checksum, as PostgreSQL checksums a page
	pageFF := bytes.Repeat([]byte{0xff}, 8192)
	pageFF[8], pageFF[9] = 0, 0
	cases := map[string][]struct {
		in   []byte
		want uint64
	}{
		"crc32c/best":    {{[]byte("123456789"), 0xE3069283}},
		"crc32c/generic": {{[]byte("123456789"), 0xE3069283}},
		"crc32-ieee":     {{[]byte("123456789"), 0xCBF43926}},
		"crc64-ecma":     {{[]byte("123456789"), 0x995DC9BBDF1939FA}},
		"adler32":        {{[]byte("Wikipedia"), 0x11E60398}, {[]byte("123456789"), 0x091E01DE}},
		"fletcher16":     {{[]byte("abcde"), 0xC8F0}, {[]byte("abcdef"), 0x2057}, {[]byte("abcdefgh"), 0x0627}},
		"fletcher32":     {{[]byte("abcde"), 0xF04FC729}, {[]byte("abcdef"), 0x56502D2A}, {[]byte("abcdefgh"), 0xEBE19591}},
		"pg-fnv":         {{page01, 1175}, {pageFF, 3612}},
		"xxhash64":       {{[]byte(""), 0xEF46DB3751D8E999}, {[]byte("a"), 0xD24EC4F1A98C6E5B}, {[]byte("abc"), 0x44BC2CF5AD770999}},
		"xxh3":           {{[]byte(""), 0x2D06800538D394C2}, {[]byte("abc"), 0x78AF5F94892F3950}},
	}
	all := Algos()
	if len(all) != len(cases) {
		t.Errorf("%d algorithms, %d with check values", len(all), len(cases))
	}
	for _, a := range all {
		cs, ok := cases[a.Name]
		if !ok {
			t.Errorf("%s: no check value", a.Name)
		}
		for _, c := range cs {
			if got := a.Sum(c.in); got != c.want {
				t.Errorf("%s(%.12q) = %#x, want %#x", a.Name, c.in, got, c.want)
			}
		}
	}
	if all[0].Name != "crc32c/best" {
		t.Errorf("first algorithm %s, want the reference crc32c/best", all[0].Name)
	}
}

// The streaming forms the harness uses give the one-shot checksum of every
// prefix, and a clone taken part way through resumes to the same result.
func TestStreamsMatchOneShot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range Shapes {
		buf := make([]byte, s.Bytes)
		s.fill(r, buf)
		nb := s.Bytes / BlockSize
		for _, a := range Algos() {
			st := a.newStream()
			var clones []stream
			for k := range nb {
				clones = append(clones, st.Clone())
				st.Write(buf[k*BlockSize : (k+1)*BlockSize])
				if k%37 == 0 || k == nb-1 {
					if got, want := st.Sum(), a.Sum(buf[:(k+1)*BlockSize]); got != want {
						t.Fatalf("%s, %s: prefix of %d blocks streams to %#x, one shot %#x", a.Name, s.Title, k+1, got, want)
					}
				}
			}
			want := a.Sum(buf)
			for _, k := range []int{0, 1, nb / 2, nb - 1} {
				other := a.newStream()
				other.CopyFrom(clones[k])
				other.Write(buf[k*BlockSize:])
				if got := other.Sum(); got != want {
					t.Errorf("%s, %s: resumed at block %d: %#x, want %#x", a.Name, s.Title, k, got, want)
				}
			}
		}
	}
}

func TestSelectAlgos(t *testing.T) {
	got, err := SelectAlgos("xxh3,fletcher16")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range got {
		names = append(names, a.Name)
	}
	if len(names) != 3 || names[0] != "crc32c/best" || names[1] != "fletcher16" || names[2] != "xxh3" {
		t.Errorf("selected %v, want the reference and the two asked for, in table order", names)
	}
	if _, err := SelectAlgos("md5"); err == nil {
		t.Errorf("unknown algorithm accepted")
	}
}
