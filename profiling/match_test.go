package profiling_test

import (
	"testing"

	"github.com/xlogfs/xlogfs/profiling"
)

func TestIsChecksumFunc(t *testing.T) {
	for name, want := range map[string]bool{
		// Go functions, methods and closures of the checksum packages.
		"github.com/xlogfs/xlogfs/cksum.Sum":                   true,
		"github.com/xlogfs/xlogfs/cksum.(*Summer).Record":      true,
		"github.com/xlogfs/xlogfs/cksum.Summer.Stats":          true,
		"github.com/xlogfs/xlogfs/cksum.init.func1":            true,
		"github.com/xlogfs/xlogfs/cksum.crc32cGeneric":         true,
		"github.com/xlogfs/xlogfs/cksum/crc32c.Slicing8Update": true,
		"github.com/xlogfs/xlogfs/amd64.updateAVX512":          true,
		"github.com/xlogfs/xlogfs/ppc64.(*kernel).update":      true,
		"hash/crc32.Update":                                    true,
		"hash/crc32.(*digest).Write":                           true,
		"hash/crc32.ieeeInit.func1":                            true,
		"github.com/xlogfs/xlogfs/cksum.sumGeneric[...]":       true,
		"github.com/xlogfs/xlogfs/cksum.(*table[...]).get":     true,
		// Assembly, as TEXT ·name and through ABI wrappers.
		"github.com/xlogfs/xlogfs/amd64.crc32cAVX512":        true,
		"github.com/xlogfs/xlogfs/amd64.scalar":              true,
		"github.com/xlogfs/xlogfs/amd64.foldZMM.abi0":        true,
		"github.com/xlogfs/xlogfs/ppc64.vpmsumUpdate":        true,
		"hash/crc32.castagnoliSSE42Triple":                   true,
		"hash/crc32.ieeeCLMUL":                               true,
		"github.com/xlogfs/xlogfs/amd64.updateFusedZMM.abi0": true,

		// Not checksum code.
		"":                                  false,
		"main.main":                         false,
		"runtime.mallocgc":                  false,
		"crypto/sha256.block":               false,
		"hash/crc64.Update":                 false,
		"hash/crc32":                        false, // a package, not a function in it
		"hash/crc32x.Update":                false,
		"hash.Hash32.Sum32":                 false,
		"github.com/xlogfs/xlogfs/cksum":    false,
		"github.com/xlogfs/xlogfs/cksumx.F": false,
		"github.com/xlogfs/xlogfs/cksum_test.TestSum":                     false,
		"github.com/xlogfs/xlogfs/cksum/internal.F":                       false,
		"github.com/xlogfs/xlogfs/journal.(*Log).force":                   false,
		"github.com/xlogfs/xlogfs/logbuf.(*Iclog).Seal":                   false,
		"github.com/xlogfs/xlogfs/journal.run[...]":                       false,
		"slices.SortFunc[go.shape.[]github.com/xlogfs/xlogfs/cksum.Mode]": false,
		"example.com/fork/github.com/xlogfs/xlogfs/cksum.Sum":             false,
		"vendor/hash/crc32.Update":                                        false,
	} {
		if got := profiling.IsChecksumFunc(name); got != want {
			t.Errorf("IsChecksumFunc(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestChecksumPackagesIsACopy(t *testing.T) {
	pkgs := profiling.ChecksumPackages()
	if len(pkgs) != 5 {
		t.Fatalf("ChecksumPackages() = %q, want 5 packages", pkgs)
	}
	for _, pkg := range pkgs {
		if !profiling.IsChecksumFunc(pkg + ".F") {
			t.Errorf("IsChecksumFunc(%q) = false for a listed package", pkg+".F")
		}
	}
	pkgs[0] = "main"
	if profiling.IsChecksumFunc("main.main") {
		t.Error("changing the returned slice changed the matcher")
	}
}

func TestIsTimingFunc(t *testing.T) {
	for name, want := range map[string]bool{
		"github.com/xlogfs/xlogfs/cksum.ticks":               true,
		"github.com/xlogfs/xlogfs/cksum.(*tally).stop":       true,
		"github.com/xlogfs/xlogfs/cksum.ticksX":              false,
		"github.com/xlogfs/xlogfs/cksum.(*Summer).Record":    true,
		"github.com/xlogfs/xlogfs/cksum.(*Summer).Seal":      true,
		"github.com/xlogfs/xlogfs/cksum.(*Summer).Copy":      true,
		"github.com/xlogfs/xlogfs/cksum.(*tally).timedDelta": true,
		"github.com/xlogfs/xlogfs/cksum.Sum":                 false,
		"github.com/xlogfs/xlogfs/cksum.(*Payload).Copy":     false,
		"github.com/xlogfs/xlogfs/cksum.(*Payload).Stamp":    false,
	} {
		if got := profiling.IsTimingFunc(name); got != want {
			t.Errorf("IsTimingFunc(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsPlainFunc(t *testing.T) {
	for name, want := range map[string]bool{
		"github.com/xlogfs/xlogfs/cksum.(*Summer).CopyPlain":   true,
		"github.com/xlogfs/xlogfs/cksum.(*Summer).PackRecord":  true,
		"github.com/xlogfs/xlogfs/cksum.(*Summer).PackRecordX": false,
		"github.com/xlogfs/xlogfs/cksum.SumCovered":            false,
		"github.com/xlogfs/xlogfs/amd64.crc32cVEX":             false,
	} {
		if got := profiling.IsPlainFunc(name); got != want {
			t.Errorf("IsPlainFunc(%q) = %v, want %v", name, got, want)
		}
	}
}
