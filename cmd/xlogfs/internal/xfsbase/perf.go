package xfsbase

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// CksumSymbol is the kernel's log record checksum: it checksums the record
// header, the extension headers' cycle data and the payload (with crc32c).
const CksumSymbol = "xlog_cksum"

// Profile is a system-wide cpu-clock profile (perf record -a -g), its
// samples classified:
//
//   - A sample's context is its call chain from the leaf up to, not
//     including, the first frame of interrupt or softirq handling (a frame
//     whose name contains "softirq", one of the kernel's interrupt entries:
//     asm_sysvec_*, sysvec_*, __sysvec_*, asm_common_interrupt,
//     common_interrupt, irq_exit_rcu, __irq_exit_rcu, do_IRQ). Work an
//     interrupt or a softirq does is its own, whatever it interrupted: the
//     block layer's completions that run when crc32c re-enables bottom
//     halves are not the checksum's, nor an idle CPU's.
//   - Idle: the idle task (pid 0) with its idle loop (do_idle; on older
//     kernels cpu_idle_loop or cpu_idle_poll) in its context: halted
//     (default_idle, pv_native_safe_halt, acpi_idle, cpuidle drivers) or in
//     the idle loop's own bookkeeping. Interrupts served on an idle CPU are
//     busy.
//   - Self: samples of perf's own process (its pid), which is the
//     measurement, not the workload.
//   - Busy: every other sample.
//   - Cksum: busy samples with xlog_cksum in their context: the kernel's
//     log checksum CPU. CksumCRC: those with a crc32c* frame below
//     xlog_cksum (the rest is xlog_cksum's own code). CRC32C: busy samples
//     with a crc32c* frame in their context, xlog_cksum's or any other's
//     (XFS's metadata buffer CRCs, for instance).
//
// Each sample weighs its period: for cpu-clock, the nanoseconds of CPU
// time it stands for.
type Profile struct {
	Samples, Idle, Self, Busy int64
	Cksum, CksumCRC, CRC32C   int64
	UnresolvedKernel          int64 // busy samples whose leaf is a kernel address perf could not name
	TotalNs, IdleNs, SelfNs   uint64
	BusyNs, CksumNs, CRC32CNs uint64
	CksumCRCNs                uint64
	NoPeriod                  int64 // samples without a period (then weighed 1e9/rate ns)
}

// header of a sample in "perf script -F comm,pid,tid,period,ip,sym": the
// command (which may hold spaces), pid/tid and the period.
var scriptHeader = regexp.MustCompile(`^(.*\S)\s+(-?\d+)/(-?\d+)\s+(\d+)\s*$`)

// ScriptFields are the fields ParseScript reads.
const ScriptFields = "comm,pid,tid,period,ip,sym"

// ParseScript reads the output of perf script -F ScriptFields: samples
// separated by blank lines, each a header line and its call chain, one
// frame a line ("\tADDRESS SYMBOL", leaf first). selfPID is perf's own
// process; rateHz weighs samples that carry no period.
func ParseScript(r io.Reader, selfPID, rateHz int) (Profile, error) {
	var p Profile
	var frames []string
	var leafAddr string
	pid, period := 0, uint64(0)
	inSample := false
	line := 0
	flush := func() {
		if !inSample {
			return
		}
		p.add(pid, period, frames, leafAddr, selfPID, rateHz)
		frames, leafAddr, inSample = frames[:0], "", false
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			flush()
			continue
		}
		if text[0] == ' ' || text[0] == '\t' {
			if !inSample {
				return p, fmt.Errorf("perf script line %d: a frame outside a sample: %q", line, text)
			}
			addr, sym, _ := strings.Cut(strings.TrimSpace(text), " ")
			if len(frames) == 0 {
				leafAddr = addr
			}
			frames = append(frames, frameName(sym))
			continue
		}
		flush()
		m := scriptHeader.FindStringSubmatch(text)
		if m == nil {
			return p, fmt.Errorf("perf script line %d: %q is no sample header (comm pid/tid period)", line, text)
		}
		pid, _ = strconv.Atoi(m[2])
		period, _ = strconv.ParseUint(m[4], 10, 64)
		inSample = true
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("perf script line %d: %w", line, err)
	}
	flush()
	if p.Samples == 0 {
		return p, errors.New("perf script printed no samples")
	}
	return p, nil
}

// frameName is a frame's symbol without an offset (+0x1f) or a DSO in
// parentheses, as perf prints them when asked.
func frameName(sym string) string {
	sym = strings.TrimSpace(sym)
	if i := strings.Index(sym, " ("); i >= 0 {
		sym = sym[:i]
	}
	if i := strings.LastIndex(sym, "+0x"); i > 0 {
		sym = sym[:i]
	}
	return sym
}

// interruptBoundary reports whether a frame begins interrupt or softirq
// handling (see Profile).
func interruptBoundary(sym string) bool {
	if strings.Contains(sym, "softirq") {
		return true
	}
	for _, p := range []string{"asm_sysvec_", "sysvec_", "__sysvec_", "asm_common_interrupt", "common_interrupt"} {
		if strings.HasPrefix(sym, p) {
			return true
		}
	}
	switch sym {
	case "irq_exit_rcu", "__irq_exit_rcu", "irq_exit", "do_IRQ":
		return true
	}
	return false
}

// idleLoop reports whether a frame is the idle task's idle loop.
func idleLoop(sym string) bool {
	switch sym {
	case "do_idle", "cpu_idle_loop", "cpu_idle_poll":
		return true
	}
	return false
}

// Context is the part of a call chain (leaf first) that ran in the
// sample's own context: up to the first interrupt or softirq frame.
func Context(frames []string) []string {
	for i, f := range frames {
		if interruptBoundary(f) {
			return frames[:i]
		}
	}
	return frames
}

func (p *Profile) add(pid int, period uint64, frames []string, leafAddr string, selfPID, rateHz int) {
	if period == 0 {
		p.NoPeriod++
		if rateHz > 0 {
			period = uint64(1e9 / rateHz)
		}
	}
	p.Samples++
	p.TotalNs += period
	ctx := Context(frames)
	idle := false
	if pid == 0 {
		for _, f := range ctx {
			if idleLoop(f) {
				idle = true
				break
			}
		}
	}
	switch {
	case idle:
		p.Idle++
		p.IdleNs += period
		return
	case selfPID > 0 && pid == selfPID:
		p.Self++
		p.SelfNs += period
		return
	}
	p.Busy++
	p.BusyNs += period
	if len(frames) > 0 && frames[0] == "[unknown]" && strings.HasPrefix(leafAddr, "ffff") {
		p.UnresolvedKernel++
	}
	cksumAt, crcAt := slices.Index(ctx, CksumSymbol), slices.IndexFunc(ctx, isCRC32C)
	if cksumAt >= 0 {
		p.Cksum++
		p.CksumNs += period
		if crcAt >= 0 && crcAt < cksumAt { // leaf first: below xlog_cksum
			p.CksumCRC++
			p.CksumCRCNs += period
		}
	}
	if crcAt >= 0 {
		p.CRC32C++
		p.CRC32CNs += period
	}
}

// isCRC32C reports whether a kernel function computes crc32c: crc32c
// itself and its arch kernels (crc32c_x86_3way, crc32c_pcl_intel_update,
// __crc32c_le, crc32c_arch, ...).
func isCRC32C(sym string) bool {
	return strings.HasPrefix(strings.TrimLeft(sym, "_"), "crc32c")
}

// Recorder is a perf record -a of cpu-clock with call chains, started
// with its events disabled and switched on and off through its control
// pipe, so that the profile covers the workload alone.
type Recorder struct {
	*controlled
	Out    string // perf.data
	RateHz int
}

// StartRecord starts perf record on the whole machine, events disabled.
func StartRecord(perf, out string, rateHz int) (*Recorder, error) {
	c, err := startControlled(perf, "record", "-a", "-e", "cpu-clock", "-F", strconv.Itoa(rateHz), "-g", "-o", out)
	if err != nil {
		return nil, err
	}
	return &Recorder{controlled: c, Out: out, RateHz: rateHz}, nil
}

// Lost is what perf said of events it lost, if anything.
func (r *Recorder) Lost() string {
	var out []string
	for _, l := range strings.Split(r.stderr.String(), "\n") {
		if strings.Contains(strings.ToLower(l), "lost") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "; ")
}

// Script runs perf script over a recording and classifies its samples.
func Script(perf, data string, selfPID, rateHz int) (Profile, error) {
	cmd := exec.Command(perf, "script", "-i", data, "-F", ScriptFields, "--no-inline")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Profile{}, err
	}
	if err := cmd.Start(); err != nil {
		return Profile{}, fmt.Errorf("starting %s script: %w", perf, err)
	}
	p, perr := ParseScript(out, selfPID, rateHz)
	io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if werr != nil {
		return p, fmt.Errorf("perf script -i %s: %v: %s", data, werr, strings.TrimSpace(stderr.String()))
	}
	if perr != nil {
		return p, fmt.Errorf("perf script -i %s: %w", data, perr)
	}
	return p, nil
}
