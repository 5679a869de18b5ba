package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/xlogfs/xlogfs/profiling"
)

func init() {
	register(command{name: "pprof-share", summary: "share of CPU time spent checksumming, from CPU profiles", args: "PROFILE...", min: 1, max: -1, setup: runPprofShare})
}

var pprofShareAbout = `
Reads CPU profiles (from "xlogfs mount --cpuprofile", the bench, or any Go
program's runtime/pprof) and reports how much of their CPU time went to
checksum code: the samples with, anywhere on their stack, a function of

	` + strings.Join(profiling.ChecksumPackages(), "\n\t") + `

each sample counted once and weighted by its CPU time. Several profiles are
added up as if merged (the bench writes one per round).

It also breaks the CPU time down by the pprof labels the journal's checksum
work runs under: phase=checksum, and cksum_mode (batched, xfs, sector,
inline). In inline mode the work done as ops are copied into the log runs
under the labels too, and its fused copy+checksum kernels count as checksum
code: the copy is in the share.`

// pprofShareResult is the --json output.
type pprofShareResult struct {
	Files []string `json:"files"`
	profiling.Share
}

func runPprofShare(fs *flagSet) func(pos []string) error {
	fs.about = pprofShareAbout
	asJSON := fs.Bool("json", false, "print the result as JSON")
	return func(files []string) (err error) {
		share, err := profiling.AnalyzeFiles(files...)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(os.Stdout, pprofShareResult{Files: files, Share: share})
		}
		printPprofShare(os.Stdout, share)
		return nil
	}
}

func printPprofShare(w io.Writer, s profiling.Share) {
	plural := ""
	if s.Profiles != 1 {
		plural = "s"
	}
	fmt.Fprintf(w, "%d CPU profile%s, %.1f s profiled: %d samples, %.2f s CPU\n\n", s.Profiles, plural, s.DurationSeconds, s.Samples, s.CPUSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "checksum code on the stack\t%.2f s\t%s of CPU\n", s.ChecksumSeconds, percent(s.ChecksumShare))
	fmt.Fprintf(tw, "labelled phase=checksum\t%.2f s\t%s\n", s.PhaseSeconds, percent(s.PhaseShare))
	if s.TimingSeconds > 0 {
		fmt.Fprintf(tw, "timing the checksum (left out above)\t%.2f s\t%s\n", s.TimingSeconds, percent(s.TimingShare))
	}
	tw.Flush()
	if len(s.Modes) == 0 {
		fmt.Fprintf(w, "\nno samples carry the %s label\n", profiling.LabelMode)
		return
	}
	fmt.Fprintf(w, "\nby %s label (shares of all CPU)\n\n", profiling.LabelMode)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tCPU s\tshare\tchecksum s\tchecksum share\t")
	for _, m := range s.Modes {
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.2f\t%s\t\n", m.Mode, m.CPUSeconds, percent(m.Share), m.ChecksumSeconds, percent(m.ChecksumShare))
	}
	tw.Flush()
}

func percent(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }
