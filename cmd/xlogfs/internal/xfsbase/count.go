package xfsbase

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FsyncEvents are the kernel's tracepoints at the start of XFS's fsync of
// a file and of a directory: fsync and fdatasync calls XFS served, on
// every XFS mounted (as /proc/fs/xfs/stat counts), the kernel's count of
// what xlogfs's .stats calls fsyncs.
var FsyncEvents = []string{"xfs:xfs_file_fsync", "xfs:xfs_dir_fsync"}

// Counter is a perf stat -a counting events over the workload.
type Counter struct {
	*controlled
	Out    string
	Events []string
}

// StartCount starts perf stat on the whole machine, events disabled; its
// counts go to out (CSV).
func StartCount(perf, out string, events ...string) (*Counter, error) {
	args := []string{"-a", "-x,", "-o", out}
	for _, e := range events {
		args = append(args, "-e", e)
	}
	c, err := startControlled(perf, "stat", args...)
	if err != nil {
		return nil, err
	}
	return &Counter{controlled: c, Out: out, Events: events}, nil
}

// Counts reads the counts perf stat wrote, after Stop.
func (c *Counter) Counts() (map[string]uint64, error) {
	b, err := os.ReadFile(c.Out)
	if err != nil {
		return nil, err
	}
	counts, err := ParseStatCSV(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Out, err)
	}
	for _, e := range c.Events {
		if _, ok := counts[e]; !ok {
			return nil, fmt.Errorf("%s: perf stat counted no %s", c.Out, e)
		}
	}
	return counts, nil
}

// ParseStatCSV reads perf stat -x, output: a line per event, its count,
// unit and name first ("12,,xfs:xfs_file_fsync,..."); comments (#) and
// blank lines skipped. An event perf could not count ("<not counted>",
// "<not supported>") is an error naming it.
func ParseStatCSV(b []byte) (map[string]uint64, error) {
	counts := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, ",")
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: %q is no perf stat -x, line", n, l)
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %q is no count", n, f[2], f[0])
		}
		counts[f[2]] += v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return counts, nil
}
