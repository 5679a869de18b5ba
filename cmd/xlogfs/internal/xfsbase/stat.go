package xfsbase

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// StatPath is the kernel's XFS counters: one line per group, its name and
// its counters, summed over every XFS filesystem mounted on the machine.
const StatPath = "/proc/fs/xfs/stat"

// Stat is /proc/fs/xfs/stat read once: every line's counters by its name,
// and the names in the file's order.
type Stat struct {
	Names  []string
	Fields map[string][]uint64
}

// wide are the lines whose counters the kernel keeps in 64 bits (byte
// counts, printed with %llu); the other lines' counters are 32-bit per-CPU
// sums printed with %u, which wrap at 2^32.
var wide = map[string]bool{"xpc": true, "defer_relog": true}

// gauges are the counters that are levels, not counts of events: the
// vnodes line's first, vn_active, the XFS inodes in memory now, which
// falls whenever inodes are reclaimed (another XFS unmounted, memory
// pressure). Delta gives them no difference (0), never an error.
var gauges = map[string]int{"vnodes": 0}

// ParseStat reads the text of /proc/fs/xfs/stat: every line is a name and
// unsigned decimal counters. A line that is not (or a name seen twice) is
// an error naming the line; a line with a name and no counters (an older
// kernel's "debug" without a value) is kept with none.
func ParseStat(b []byte) (Stat, error) {
	s := Stat{Fields: map[string][]uint64{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		name := f[0]
		if _, dup := s.Fields[name]; dup {
			return Stat{}, fmt.Errorf("%s line %d: %q a second time", StatPath, n, name)
		}
		vals := make([]uint64, 0, len(f)-1)
		for i, t := range f[1:] {
			v, err := strconv.ParseUint(t, 10, 64)
			if err != nil {
				return Stat{}, fmt.Errorf("%s line %d (%s), counter %d: %q is no unsigned number", StatPath, n, name, i+1, t)
			}
			vals = append(vals, v)
		}
		s.Names = append(s.Names, name)
		s.Fields[name] = vals
	}
	if err := sc.Err(); err != nil {
		return Stat{}, fmt.Errorf("%s: %w", StatPath, err)
	}
	if len(s.Names) == 0 {
		return Stat{}, fmt.Errorf("%s: empty", StatPath)
	}
	return s, nil
}

// ReadStat reads and parses path (StatPath but in tests).
func ReadStat(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// Delta is after − before, line by line and counter by counter, for the
// lines both have. A 32-bit counter that wrapped past 2^32 is counted
// across the wrap; one that went back by more than half its range (or a
// 64-bit one that went back at all) was reset, by a write to
// /proc/sys/fs/xfs/stats_clear during the run, and is an error: its
// difference means nothing. So is a line whose counter count changed. A
// gauge (gauges) has no difference: 0.
func Delta(before, after Stat) (Stat, error) {
	d := Stat{Fields: map[string][]uint64{}}
	for _, name := range after.Names {
		a := after.Fields[name]
		b, ok := before.Fields[name]
		if !ok {
			continue
		}
		if len(a) != len(b) {
			return Stat{}, fmt.Errorf("%s: %q has %d counters, had %d", StatPath, name, len(a), len(b))
		}
		vals := make([]uint64, len(a))
		for i := range a {
			if g, ok := gauges[name]; ok && g == i {
				continue // a level: no difference
			}
			switch {
			case a[i] >= b[i]:
				vals[i] = a[i] - b[i]
			case !wide[name] && b[i] <= math.MaxUint32 && a[i] <= math.MaxUint32 && b[i]-a[i] < 1<<31:
				return Stat{}, fmt.Errorf("%s: %s counter %d went back from %d to %d: cleared during the run (stats_clear)?",
					StatPath, name, i+1, b[i], a[i])
			case !wide[name] && b[i] <= math.MaxUint32 && a[i] <= math.MaxUint32:
				vals[i] = a[i] + 1<<32 - b[i] // wrapped at 2^32
			default:
				return Stat{}, fmt.Errorf("%s: %s counter %d went back from %d to %d: cleared during the run (stats_clear)?",
					StatPath, name, i+1, b[i], a[i])
			}
		}
		d.Names = append(d.Names, name)
		d.Fields[name] = vals
	}
	return d, nil
}

// Log is the "log" line: log writes (iclogs written), the 512-byte basic
// blocks they wrote (record header blocks, payload and padding), writes
// that found no free iclog, log forces, and forces that slept.
type Log struct {
	Writes, Blocks, NoIclogs, Force, ForceSleep uint64
}

// Trans is the "trans" line: synchronous, asynchronous and empty
// transactions.
type Trans struct {
	Sync, Async, Empty uint64
}

// Log returns the "log" line; an error when it is missing or short.
func (s Stat) Log() (Log, error) {
	f, err := s.need("log", 5)
	if err != nil {
		return Log{}, err
	}
	return Log{Writes: f[0], Blocks: f[1], NoIclogs: f[2], Force: f[3], ForceSleep: f[4]}, nil
}

// Trans returns the "trans" line.
func (s Stat) Trans() (Trans, error) {
	f, err := s.need("trans", 3)
	if err != nil {
		return Trans{}, err
	}
	return Trans{Sync: f[0], Async: f[1], Empty: f[2]}, nil
}

// PushAILNames name the "push_ail" line's ten counters, in order.
var PushAILNames = []string{"try_logspace", "sleep_logspace", "push_ail", "success", "pushbuf", "pinned", "locked", "flushing", "restarts", "flush"}

// XstratNames name the "xstrat" line's two counters.
var XstratNames = []string{"quick", "split"}

// Named returns the counters of the lines the bench reports by name: log,
// trans, push_ail and xstrat, as "log_writes", "trans_sync",
// "push_ail_pinned", "xstrat_quick" and so on; an error when one is
// missing or short.
func (s Stat) Named() (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, line := range []struct {
		name   string
		fields []string
	}{
		{"log", []string{"writes", "blocks", "noiclogs", "force", "force_sleep"}},
		{"trans", []string{"sync", "async", "empty"}},
		{"push_ail", PushAILNames},
		{"xstrat", XstratNames},
	} {
		f, err := s.need(line.name, len(line.fields))
		if err != nil {
			return nil, err
		}
		for i, n := range line.fields {
			if line.name == "push_ail" && n == "push_ail" {
				out["push_ail"] = f[i]
				continue
			}
			out[line.name+"_"+n] = f[i]
		}
	}
	return out, nil
}

func (s Stat) need(name string, n int) ([]uint64, error) {
	f, ok := s.Fields[name]
	if !ok {
		return nil, fmt.Errorf("%s: no %q line", StatPath, name)
	}
	if len(f) < n {
		return nil, fmt.Errorf("%s: %q has %d counters, want %d", StatPath, name, len(f), n)
	}
	return f, nil
}

// The bytes xlog_cksum feeds crc32c for a record: its header up to and
// including h_size (struct xlog_rec_header: 328 bytes, h_crc zeroed in
// the sum), each extension header it needs past the first 32 KiB of the
// payload (struct xlog_rec_ext_header: 260 bytes), and the payload, h_len
// bytes (the record's blocks less its header blocks, padding included).
const (
	RecHeaderBytes = 328
	ExtHeaderBytes = 260
	cycleSize      = 32 << 10 // XLOG_HEADER_CYCLE_SIZE
)

// CksumBytes estimates the bytes XFS checksummed in writes log writes of
// blocks 512-byte blocks in all, with log buffers of logbsize bytes. The
// headers and the payload in all are exact; the extension headers depend
// on each record's payload, which the counters do not give, so they are
// counted from the mean payload per write.
func CksumBytes(writes, blocks uint64, logbsize int) float64 {
	if writes == 0 {
		return 0
	}
	payload := float64(blocks)*512 - float64(writes)*float64(HeaderBlocks(logbsize))*512
	if payload < 0 {
		payload = 0
	}
	mean := payload / float64(writes)
	ext := max(0, math.Ceil(mean/cycleSize)-1)
	return float64(writes)*(RecHeaderBytes+ext*ExtHeaderBytes) + payload
}
