package profiling

import "strings"

// checksumPackages are the import paths whose functions are checksum code:
// the modes and counters (cksum), the slicing-by-8 method the generic
// implementation and ppc64's short inputs run (cksum/crc32c), the
// architecture kernels (amd64, ppc64), and Go's hash/crc32, which the stdlib
// implementation calls.
var checksumPackages = []string{
	"github.com/xlogfs/xlogfs/cksum",
	"github.com/xlogfs/xlogfs/cksum/crc32c",
	"github.com/xlogfs/xlogfs/amd64",
	"github.com/xlogfs/xlogfs/ppc64",
	"hash/crc32",
}

// ChecksumPackages returns the import paths whose functions IsChecksumFunc
// counts as checksum code.
func ChecksumPackages() []string { return append([]string(nil), checksumPackages...) }

// IsChecksumFunc reports whether name, a function name as a Go profile
// records it, belongs to one of the ChecksumPackages: the name is the
// package's import path, a dot, and the rest. That covers every form the
// toolchain produces:
//
//	github.com/xlogfs/xlogfs/cksum.Sum                  function
//	github.com/xlogfs/xlogfs/cksum.(*Summer).Record     method
//	github.com/xlogfs/xlogfs/cksum.init.func1           closure
//	github.com/xlogfs/xlogfs/amd64.crc32cAVX512         assembly (TEXT ·crc32cAVX512)
//	github.com/xlogfs/xlogfs/amd64.scalar.abi0          assembly ABI wrapper
//	hash/crc32.castagnoliSSE42Triple                    Go's own kernels
//
// Matching the whole import path keeps out packages that merely start
// alike (.../cksumtest), subpackages not listed (.../cksum/internal), the
// external test package (.../cksum_test), and generic code elsewhere
// instantiated with a checksum type (pkg.F[github.com/xlogfs/xlogfs/cksum.Mode]).
func IsChecksumFunc(name string) bool {
	for _, pkg := range checksumPackages {
		if len(name) > len(pkg) && name[len(pkg)] == '.' && strings.HasPrefix(name, pkg) {
			return true
		}
	}
	return false
}

// timingFuncs are cksum.Summer's bookkeeping around each record and, in
// inline mode, each op copied in: Record, Seal and Copy themselves (their
// clock reads, counters and observer call, outside the time they count),
// the tally's timing they share (cksum/timer.go) and its reads of the tick
// counter. They measure the checksum rather than compute it. (What Seal and Copy call back into
// the iclog for, the cycle stamps, is no checksum code either, as stamping
// is not in the other modes.)
var timingFuncs = []string{
	"github.com/xlogfs/xlogfs/cksum.ticks",
	"github.com/xlogfs/xlogfs/cksum.monotonicTicks",
	"github.com/xlogfs/xlogfs/cksum.(*tally).start",
	"github.com/xlogfs/xlogfs/cksum.(*tally).stop",
	"github.com/xlogfs/xlogfs/cksum.(*tally).timedDelta",
	"github.com/xlogfs/xlogfs/cksum.(*tally).estimated",
	"github.com/xlogfs/xlogfs/cksum.(*tally).adapt",
	"github.com/xlogfs/xlogfs/cksum.(*Payload).sample",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).copied",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).Record",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).RecordCovered",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).SealRegions",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).sealed",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).Seal",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).Copy",
}

// IsTimingFunc reports whether name is (or is a closure inside) one of the
// Summer's bookkeeping functions. A sample whose innermost checksum-code
// function is one of them (Record's own code, or what it calls that is not
// checksum code: the clocks, the observer) is not checksum work, though it
// runs on a checksum stack; one whose innermost is Sum or a kernel is.
func IsTimingFunc(name string) bool {
	for _, f := range timingFuncs {
		if name == f || len(name) > len(f) && name[len(f)] == '.' && strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}

// plainFuncs are cksum.Summer's wrappers of work that is not checksum work
// but is timed beside it (the Plain* counters): CopyPlain's copy of an op
// into an iclog, and PackRecord's pack, the cycle stamps, in the modes that
// checksum at seal. What runs inside them (memmove, the iclog's stamping)
// is neither checksum work nor the counters' bookkeeping.
var plainFuncs = []string{
	"github.com/xlogfs/xlogfs/cksum.(*Summer).CopyPlain",
	"github.com/xlogfs/xlogfs/cksum.(*Summer).PackRecord",
}

// IsPlainFunc reports whether name is (or is a closure inside) one of the
// Summer's wrappers of work that is not checksum work (plainFuncs). A
// sample whose innermost checksum-code function is one of them is not
// checksum work; one whose innermost is SumCovered or a kernel, called
// from PackRecord, is.
func IsPlainFunc(name string) bool {
	for _, f := range plainFuncs {
		if name == f || len(name) > len(f) && name[len(f)] == '.' && strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}
