package benchrun

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// Geometry is a log's size and its buffers: what the kernel XFS baseline
// copies from the xlogfs stores.
type Geometry struct {
	LogBytes int64
	LogBSize int // iclog size
	LogBufs  int // iclog count
}

func (g Geometry) String() string {
	return fmt.Sprintf("log %d KiB, logbsize %dk, logbufs %d", g.LogBytes>>10, g.LogBSize>>10, g.LogBufs)
}

// XlogfsGeometry is the log geometry of the bench's xlogfs stores: mount
// makes each with mkfs's defaults (the default log size, the largest iclog
// that suits it), and mounts it with --logbsize and --logbufs as
// --mount-flags gives them, else mount's defaults (the store's iclog size;
// 8 iclogs, fewer if the log is small). The xlogfs runs report theirs in
// .stats, which the bench checks against this.
func XlogfsGeometry(mountFlags []string) (Geometry, error) {
	g := Geometry{LogBytes: store.DefaultLogSize &^ (logbuf.BBSize - 1)}
	g.LogBSize = logbuf.MaxLogBSize
	for g.LogBSize > logbuf.MinLogBSize && !store.LogFits(g.LogBytes, logbuf.MinLogBufs, g.LogBSize) {
		g.LogBSize /= 2
	}
	bufsSet := false
	for i := 0; i < len(mountFlags); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(mountFlags[i], "-"), "=")
		if name != "logbsize" && name != "logbufs" || !strings.HasPrefix(mountFlags[i], "-") {
			continue
		}
		if !hasVal {
			if i+1 >= len(mountFlags) {
				return g, fmt.Errorf("--mount-flags: --%s without a value", name)
			}
			i++
			val = mountFlags[i]
		}
		if name == "logbsize" {
			n, err := parseSize(val)
			if err != nil || logbuf.CheckLogBSize(int(n)) != nil {
				return g, fmt.Errorf("--mount-flags: --logbsize %s: want a power of two from 32k to 256k", val)
			}
			g.LogBSize = int(n)
		} else {
			n, err := strconv.Atoi(val)
			if err != nil || n < logbuf.MinLogBufs || n > logbuf.MaxLogBufs {
				return g, fmt.Errorf("--mount-flags: --logbufs %s: want %d to %d", val, logbuf.MinLogBufs, logbuf.MaxLogBufs)
			}
			g.LogBufs, bufsSet = n, true
		}
	}
	if !bufsSet {
		g.LogBufs = logbuf.MaxLogBufs
		for g.LogBufs > logbuf.MinLogBufs && !store.LogFits(g.LogBytes, g.LogBufs, g.LogBSize) {
			g.LogBufs--
		}
	}
	return g, nil
}

// parseSize reads 256k, 1m, 4096 (k, m and g are binary).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch strings.ToLower(s[len(s)-min(len(s), 1):]) {
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is no size", s)
	}
	return n * mult, nil
}

// checkGeometry compares an xlogfs run's log geometry (its .stats) with
// the one the kernel XFS baseline used; "" when they agree.
func checkGeometry(st map[string]float64, g Geometry) string {
	got := Geometry{LogBytes: int64(st["log_size"]), LogBSize: int(st["logbsize"]), LogBufs: int(st["logbufs"])}
	if got.LogBSize == 0 || got == g {
		return ""
	}
	return fmt.Sprintf("this xlogfs store ran with %v, but the xfs baseline was made with %v: the two are not at the same log geometry", got, g)
}

// checkCoverage compares an xlogfs run's CRC coverage (its .stats) with
// the one the bench asked for (--crc; "" is whole); "" when they agree.
func checkCoverage(got, want string) string {
	if want == "" {
		want = "whole"
	}
	if got == want {
		return ""
	}
	return fmt.Sprintf("the store's CRCs cover %q, but the bench asked for --crc %s: its checksum figures would not be what was asked", got, want)
}
