package amd64

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The avx2-vpclmul kernel runs on CPUs without AVX-512, so none of its
// routines may hold an EVEX-encoded instruction (an AVX-512 one: zmm or
// opmask registers, xmm/ymm 16-31, VPTERNLOGQ, or an EVEX form of an AVX
// instruction, which Go's assembler emits for registers above 15). The
// AVX-512 machines its tests run on would execute one without complaint,
// so the test disassembles the routines in this test binary with GNU
// objdump and looks at every instruction's encoding. (qemu-user 7.2, the
// emulator Debian 12 has, lacks VPCLMULQDQ altogether, so the routines
// cannot run on an emulated CPU without AVX-512 here.)

// vexRoutines are the assembly routines the avx2-vpclmul kernel runs:
// Update, CopyUpdate and Combine, and what they share with the others.
var vexRoutines = []string{"scalar", "threeway", "foldVEX", "fusedVEX", "copyScalar", "copyFoldVEX", "copyFusedVEX", "shift"}

// evexOperand matches what only EVEX can encode: zmm and opmask registers,
// and xmm or ymm registers 16-31 (AT&T syntax).
var evexOperand = regexp.MustCompile(`%zmm|%k[0-7]\b|%[xy]mm(1[6-9]|2[0-9]|3[01])\b`)

// evexInstructions disassembles routine (a TEXT symbol of this package)
// in the running test binary and returns its EVEX instructions, one line
// each, and how many instructions it read.
func evexInstructions(t *testing.T, objdump, exe, routine string) (bad []string, count int) {
	t.Helper()
	sym := "github.com/xlogfs/xlogfs/amd64." + routine + ".abi0"
	out, err := exec.Command(objdump, "-d", "--insn-width=16", "--disassemble="+sym, exe).Output()
	if err != nil {
		t.Fatalf("objdump --disassemble=%s: %v", sym, err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) < 3 || !strings.HasSuffix(strings.TrimSpace(f[0]), ":") {
			continue
		}
		count++
		asm := strings.TrimSpace(f[2])
		if evexOperand.MatchString(asm) || strings.HasPrefix(asm, "vpternlog") || isEVEX(strings.Fields(f[1])) {
			bad = append(bad, fmt.Sprintf("%s: %s  (%s)", routine, asm, strings.TrimSpace(f[1])))
		}
	}
	return bad, count
}

// isEVEX reports whether an instruction's bytes (hex) start, after any
// segment or address-size prefix, with 0x62: in 64-bit mode that byte
// starts an EVEX prefix and nothing else.
func isEVEX(hex []string) bool {
	for _, h := range hex {
		b, err := strconv.ParseUint(h, 16, 8)
		if err != nil {
			return false
		}
		switch b {
		case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x67:
			continue
		}
		return b == 0x62
	}
	return false
}

func TestVEXRoutinesHaveNoEVEX(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("GNU objdump (binutils) is not installed: the encoding of the avx2-vpclmul routines cannot be checked")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, n := evexInstructions(t, objdump, exe, "foldYMM"); n == 0 {
		// go test links without a symbol table; go test -c keeps it.
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		exe = filepath.Join(t.TempDir(), "amd64.test")
		if out, err := exec.Command(goTool, "test", "-c", "-o", exe, ".").CombinedOutput(); err != nil {
			t.Fatalf("go test -c: %v\n%s", err, out)
		}
	}
	// The check must see EVEX where there is some: foldYMM's VPTERNLOGQ,
	// foldZMM's zmm registers.
	for _, r := range []string{"foldYMM", "foldZMM"} {
		if bad, n := evexInstructions(t, objdump, exe, r); n == 0 || len(bad) == 0 {
			t.Fatalf("%s: %d instructions, %d EVEX found: the check cannot see EVEX", r, n, len(bad))
		}
	}
	for _, r := range vexRoutines {
		bad, n := evexInstructions(t, objdump, exe, r)
		if n < 10 {
			t.Errorf("%s: objdump shows %d instructions (a stripped binary?)", r, n)
		}
		for _, b := range bad {
			t.Errorf("EVEX instruction in a routine of the avx2-vpclmul kernel: %s", b)
		}
	}
}
