package profiling

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/xlogfs/xlogfs/profiling/labels"
)

// The pprof labels the journal's checksum work runs under (package labels
// defines them for both sides).
const (
	LabelMode     = labels.Mode          // the checksum mode: batched, xfs, sector or inline
	LabelPhase    = labels.Phase         // what the labelled code is doing
	PhaseChecksum = labels.PhaseChecksum // LabelPhase's value while checksumming
)

// Share is how much of the CPU time in one or more CPU profiles went to
// checksum code. Shares are fractions of CPUSeconds, 0 when it is 0.
type Share struct {
	Profiles        int     `json:"profiles"`         // profiles analysed
	Samples         int64   `json:"samples"`          // CPU samples in them
	DurationSeconds float64 `json:"duration_seconds"` // wall time profiled, summed over profiles
	CPUSeconds      float64 `json:"cpu_seconds"`      // CPU time of all samples

	// CPU time of the samples with checksum code (IsChecksumFunc) anywhere
	// on their stack, and its share of CPUSeconds.
	ChecksumSeconds float64 `json:"checksum_seconds"`
	ChecksumShare   float64 `json:"checksum_share"`

	// CPU time of the samples labelled phase=checksum, and its share.
	PhaseSeconds float64 `json:"phase_checksum_seconds"`
	PhaseShare   float64 `json:"phase_checksum_share"`

	// CPU time of the samples in the checksum counters' own bookkeeping
	// (IsTimingFunc: the clock reads and counting of Record, Seal and
	// Copy), and its share.
	// They are left out of ChecksumSeconds and PhaseSeconds (and the
	// modes' checksum time), as the counters leave them out of their own
	// time.
	TimingSeconds float64 `json:"timing_seconds"`
	TimingShare   float64 `json:"timing_share"`

	// One entry per value of the cksum_mode label, in the order batched,
	// xfs, sector, inline, then any others by name. Samples without the label are
	// in none.
	Modes []ModeShare `json:"modes"`
}

// ModeShare is the part of a Share labelled with one checksum mode.
type ModeShare struct {
	Mode string `json:"mode"` // value of the cksum_mode label

	// CPU time of the samples with this label, and its share of all CPU
	// time in the profiles.
	CPUSeconds float64 `json:"cpu_seconds"`
	Share      float64 `json:"share"`

	// The same for those of the labelled samples with checksum code on
	// their stack.
	ChecksumSeconds float64 `json:"checksum_seconds"`
	ChecksumShare   float64 `json:"checksum_share"`
}

// modeOrder is the order of the modes in a Share, as the bench compares
// them; other label values follow, sorted.
var modeOrder = []string{"batched", "xfs", "sector", "inline"}

// Analyze computes the Share of checksum code in the given CPU profiles,
// taken together (as if merged). Each must be a Go CPU profile, or a merge
// of them: a profile whose samples have a cpu/nanoseconds value, which is
// the CPU time a sample stands for; a sample counts once however many of its
// frames are checksum code.
func Analyze(profiles ...*profile.Profile) (Share, error) {
	var t tally
	for i, p := range profiles {
		if err := t.add(p); err != nil {
			if len(profiles) > 1 {
				return Share{}, fmt.Errorf("profile %d of %d: %w", i+1, len(profiles), err)
			}
			return Share{}, err
		}
	}
	return t.share(), nil
}

// AnalyzeFiles reads the CPU profiles at paths (as written by
// runtime/pprof or StartCPUProfile, gzipped or not) and returns the Share
// of checksum code in them together. Errors name the file.
func AnalyzeFiles(paths ...string) (Share, error) {
	if len(paths) == 0 {
		return Share{}, errors.New("no profile files given")
	}
	var t tally
	for _, path := range paths {
		p, err := ReadProfile(path)
		if err != nil {
			return Share{}, err
		}
		if err := t.add(p); err != nil {
			return Share{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	return t.share(), nil
}

// ReadProfile reads and parses the profile in the file at path.
func ReadProfile(path string) (p *profile.Profile, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // names the file
	}
	defer f.Close()
	// A damaged file must be an error, never a crash of the command
	// reading it; the parser is not ours to vouch for.
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%s: not a valid profile (parser failed: %v)", path, r)
		}
	}()
	p, err = profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err) // "parsing profile: ..."
	}
	return p, nil
}

// tally adds up CPU time, in nanoseconds, over profiles.
type tally struct {
	profiles        int
	samples         int64
	duration        int64
	cpu, cksum      int64
	phase, timing   int64
	modeCPU, modeCk map[string]int64
}

func (t *tally) add(p *profile.Profile) error {
	cpuIdx, countIdx := -1, -1
	var types []string
	for i, st := range p.SampleType {
		switch {
		case st.Type == "cpu" && st.Unit == "nanoseconds":
			cpuIdx = i
		case st.Type == "samples" && st.Unit == "count":
			countIdx = i
		}
		types = append(types, st.Type+"/"+st.Unit)
	}
	if cpuIdx < 0 {
		return fmt.Errorf("not a CPU profile: its sample values are %s, want cpu/nanoseconds", orNone(types))
	}
	if len(p.Sample) > 0 && !symbolized(p) {
		return errors.New("profile has no function names (not symbolized)")
	}

	// Many samples share locations; decide each location once.
	isCk := make(map[*profile.Location]bool)
	// A sample is bookkeeping when the innermost checksum function on its
	// stack (leaf first; within a location, inlined functions come first)
	// is one of the Summer's timing functions.
	innermost := make(map[*profile.Location]string)
	// A sample whose innermost checksum function is one of the Summer's
	// wrappers of work that is not checksum (IsPlainFunc: the copy and
	// stamps it times in the modes that checksum at seal) is neither.
	innermostOf := func(s *profile.Sample) string {
		for _, loc := range s.Location {
			f, seen := innermost[loc]
			if !seen {
				f = innermostChecksumFunc(loc)
				innermost[loc] = f
			}
			if f != "" {
				return f
			}
		}
		return ""
	}
	hasChecksum := func(s *profile.Sample) bool {
		for _, loc := range s.Location {
			ck, seen := isCk[loc]
			if !seen {
				ck = locationIsChecksum(loc)
				isCk[loc] = ck
			}
			if ck {
				return true
			}
		}
		return false
	}

	if t.modeCPU == nil {
		t.modeCPU, t.modeCk = map[string]int64{}, map[string]int64{}
	}
	t.profiles++
	t.duration += p.DurationNanos
	for _, s := range p.Sample {
		if len(s.Value) != len(p.SampleType) {
			return fmt.Errorf("malformed profile: a sample has %d values for %d sample types", len(s.Value), len(p.SampleType))
		}
		v := s.Value[cpuIdx]
		if countIdx >= 0 {
			t.samples += s.Value[countIdx]
		} else {
			t.samples++
		}
		t.cpu += v
		inner := innermostOf(s)
		timing := inner != "" && IsTimingFunc(inner)
		ck := !timing && !(inner != "" && IsPlainFunc(inner)) && hasChecksum(s)
		if timing {
			t.timing += v
		}
		if ck {
			t.cksum += v
		}
		if !timing && slices.Contains(s.Label[LabelPhase], PhaseChecksum) {
			t.phase += v
		}
		modes := s.Label[LabelMode]
		for i, m := range modes {
			if slices.Contains(modes[:i], m) {
				continue // a value repeated on one sample counts once
			}
			t.modeCPU[m] += v
			if ck {
				t.modeCk[m] += v
			}
		}
	}
	return nil
}

// locationIsChecksum reports whether any function at loc, inlined ones
// included, is checksum code.
func locationIsChecksum(loc *profile.Location) bool {
	for _, ln := range loc.Line {
		if f := ln.Function; f != nil && (IsChecksumFunc(f.Name) || IsChecksumFunc(f.SystemName)) {
			return true
		}
	}
	return false
}

// innermostChecksumFunc returns the name of the innermost checksum
// function at loc (inlined ones first), or "".
func innermostChecksumFunc(loc *profile.Location) string {
	for _, ln := range loc.Line {
		if f := ln.Function; f != nil {
			if IsChecksumFunc(f.Name) {
				return f.Name
			}
			if IsChecksumFunc(f.SystemName) {
				return f.SystemName
			}
		}
	}
	return ""
}

// symbolized reports whether p has any function names at all: a profile
// of bare addresses would otherwise show, wrongly, no checksum code.
func symbolized(p *profile.Profile) bool {
	for _, loc := range p.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil && ln.Function.Name != "" {
				return true
			}
		}
	}
	return false
}

func (t *tally) share() Share {
	const sec = 1e9
	frac := func(v int64) float64 {
		if t.cpu == 0 {
			return 0
		}
		return float64(v) / float64(t.cpu)
	}
	s := Share{
		Profiles:        t.profiles,
		Samples:         t.samples,
		DurationSeconds: float64(t.duration) / sec,
		CPUSeconds:      float64(t.cpu) / sec,
		ChecksumSeconds: float64(t.cksum) / sec,
		ChecksumShare:   frac(t.cksum),
		PhaseSeconds:    float64(t.phase) / sec,
		PhaseShare:      frac(t.phase),
		TimingSeconds:   float64(t.timing) / sec,
		TimingShare:     frac(t.timing),
		Modes:           []ModeShare{},
	}
	var names []string
	for m := range t.modeCPU {
		names = append(names, m)
	}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := rank(a), rank(b)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	for _, m := range names {
		s.Modes = append(s.Modes, ModeShare{
			Mode:            m,
			CPUSeconds:      float64(t.modeCPU[m]) / sec,
			Share:           frac(t.modeCPU[m]),
			ChecksumSeconds: float64(t.modeCk[m]) / sec,
			ChecksumShare:   frac(t.modeCk[m]),
		})
	}
	return s
}

// rank is m's place in modeOrder, or after all of them.
func rank(m string) int {
	if i := slices.Index(modeOrder, m); i >= 0 {
		return i
	}
	return len(modeOrder)
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
