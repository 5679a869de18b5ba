package cksum

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/amd64"
)

// TestLinuxX86Rule builds the x86 dispatch for CPUs of every class Linux
// tells apart and checks which routine each length reaches. The routines
// are stand-ins (hash/crc32 with a name), so the rule is checked on any
// CPU; the real routines are checked in package amd64 and by Impls' tests.
func TestLinuxX86Rule(t *testing.T) {
	zen5 := amd64.CPUInfo{Vendor: "AuthenticAMD", Family: 0x1a, Model: 2, SSE42: true, PCLMULQDQ: true, AVX2: true,
		VPCLMULQDQ: true, AVX512F: true, AVX512VL: true, AVX512BW: true}
	zen3 := zen5
	zen3.Family, zen3.Model, zen3.AVX512F, zen3.AVX512VL, zen3.AVX512BW = 0x19, 0x1, false, false, false
	iceLake := zen5
	iceLake.Vendor, iceLake.Family, iceLake.Model = "GenuineIntel", 6, 0x6a
	sapphire := iceLake
	sapphire.Model = 0x8f
	skylakeX := iceLake
	skylakeX.Model, skylakeX.VPCLMULQDQ = 0x55, false
	all := []string{"scalar", "threeway", "foldzmm"}
	for _, c := range []struct {
		name      string
		cpu       amd64.CPUInfo
		have      []string // routines the CPU has
		short     string   // below 512 bytes
		long      string   // from 512
		descWords string
	}{
		{"Zen 5 (fast AVX-512)", zen5, all, "scalar", "foldzmm", "crc32_lsb_vpclmul_avx512"},
		{"Sapphire Rapids (fast AVX-512)", sapphire, all, "scalar", "foldzmm", "crc32_lsb_vpclmul_avx512"},
		{"Zen 3 (VPCLMULQDQ, no AVX-512)", zen3, []string{"scalar", "threeway"}, "scalar", "threeway", "crc32c_x86_3way"},
		{"Ice Lake (PREFER_YMM)", iceLake, all, "scalar", "threeway", "crc32c_x86_3way"},
		{"Skylake-X (no VPCLMULQDQ)", skylakeX, []string{"scalar", "threeway"}, "scalar", "threeway", "crc32c_x86_3way"},
		{"no PCLMULQDQ", zen3, []string{"scalar"}, "scalar", "scalar", "without PCLMULQDQ"},
		{"no SSE4.2", zen3, nil, "", "", "crc32c_base"},
	} {
		var called []string
		stand := func(name string) func(uint32, []byte) uint32 {
			return func(crc uint32, p []byte) uint32 {
				called = append(called, name)
				return oracle(crc, p)
			}
		}
		var r amd64.Routines
		for _, h := range c.have {
			switch h {
			case "scalar":
				r.Scalar = stand(h)
			case "threeway":
				r.ThreeWay = stand(h)
			case "foldzmm":
				r.FoldZMM = stand(h)
			}
		}
		update, _, desc := crc32cLinuxX86(c.cpu, r)
		if !strings.Contains(desc, c.descWords) {
			t.Errorf("%s: desc %q does not say %q", c.name, desc, c.descWords)
		}
		rnd := rand.New(rand.NewPCG(35, 36))
		buf := randBytes(rnd, 5000)
		for _, n := range []int{0, 1, 64, 200, 511, 512, 513, 4096, 5000} {
			called = nil
			crc := rnd.Uint32()
			if got, want := update(crc, buf[:n]), oracle(crc, buf[:n]); got != want {
				t.Fatalf("%s: len %d: got %#08x, want %#08x", c.name, n, got, want)
			}
			want := c.short
			if n >= 512 {
				want = c.long
			}
			if want == "" && len(called) != 0 || want != "" && (len(called) != 1 || called[0] != want) {
				t.Errorf("%s: len %d ran %v, want %q", c.name, n, called, want)
			}
		}
	}
}

// On this CPU, linux says which of the rules it follows.
func TestLinuxOnThisCPU(t *testing.T) {
	im, err := Lookup("linux")
	if err != nil {
		t.Fatal(err)
	}
	cpu, r := amd64.CPU(), amd64.Methods()
	var want string
	switch {
	case !cpu.SSE42:
		want = "crc32c_base"
	case !cpu.PCLMULQDQ:
		want = "without PCLMULQDQ"
	case linuxFastAVX512(cpu) && r.FoldZMM != nil:
		want = "crc32_lsb_vpclmul_avx512"
	default:
		want = "crc32c_x86_3way"
	}
	if !strings.Contains(im.Desc, want) {
		t.Errorf("linux on %s: %q, want it to say %q", cpu, im.Desc, want)
	}
	t.Logf("linux on %s: %s", cpu, im.Desc)
}
