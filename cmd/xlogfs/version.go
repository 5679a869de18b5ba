package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/xlogfs/xlogfs/cksum"
)

// Version is the release of xlogfs; the store format has its own version.
const Version = "0.1.0"

func init() {
	register(command{name: "version", summary: "print the version, commit, Go toolchain and chosen crc32c kernel", min: 0, max: 0, setup: runVersion})
}

// versionInfo is what "xlogfs version --json" prints.
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"vcs_revision,omitempty"` // the commit built, from the Go build's VCS stamp
	Time     string `json:"vcs_time,omitempty"`     // its commit time
	Modified bool   `json:"vcs_modified"`           // built from a tree with uncommitted changes
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Crc32c   string `json:"crc32c"` // the kernel this CPU uses
	Kernel   string `json:"crc32c_description"`
	// Why that kernel, what the CPU has, each kernel's methods by input
	// length as measured at start, and what the linux implementation
	// does here (cksum.Chosen).
	Crc32cWhy         string   `json:"crc32c_reason"`
	Crc32cCPU         string   `json:"crc32c_cpu"`
	Crc32cCalibration string   `json:"crc32c_calibration,omitempty"`
	Crc32cPlans       []string `json:"crc32c_plans,omitempty"`
	Crc32cLinux       string   `json:"crc32c_linux"`
}

func runVersion(fs *flagSet) func(pos []string) error {
	fs.about = `
Prints the xlogfs version, the commit it was built from and whether the
tree had uncommitted changes (the Go build's VCS stamp, which "go build" in
a git checkout records unless -buildvcs=false), the Go toolchain, and the
crc32c implementation this CPU uses: why (the CPU's features), and where
each kernel changes method by input length, as a calibration measured at
start (a few milliseconds), and what the linux implementation (Linux's own
crc32c dispatch, mirrored) does on this CPU.`
	asJSON := fs.Bool("json", false, "print JSON")
	return func(_ []string) (err error) {
		bi, _ := debug.ReadBuildInfo()
		v := buildVersion(bi)
		if *asJSON {
			return printJSON(os.Stdout, v)
		}
		printVersion(os.Stdout, v)
		return nil
	}
}

// buildVersion reads the VCS stamp from the build information (nil: none).
func buildVersion(bi *debug.BuildInfo) versionInfo {
	ch := cksum.Chosen()
	v := versionInfo{Version: Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Crc32c: cksum.Best().Name, Kernel: cksum.Best().Desc,
		Crc32cWhy: ch.Reason, Crc32cCPU: ch.CPU, Crc32cCalibration: ch.Calibration, Crc32cPlans: ch.Plans, Crc32cLinux: ch.Linux}
	if bi == nil {
		return v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func printVersion(w io.Writer, v versionInfo) {
	switch {
	case v.Revision == "":
		fmt.Fprintf(w, "xlogfs %s (commit unknown: built without VCS information)\n", v.Version)
	case v.Modified:
		fmt.Fprintf(w, "xlogfs %s (commit %.12s of %s, with uncommitted changes)\n", v.Version, v.Revision, v.Time)
	default:
		fmt.Fprintf(w, "xlogfs %s (commit %.12s of %s)\n", v.Version, v.Revision, v.Time)
	}
	fmt.Fprintf(w, "%s %s/%s\n", v.Go, v.OS, v.Arch)
	fmt.Fprintf(w, "crc32c %s: %s\n", v.Crc32c, v.Kernel)
	printChoice(w, "  ", v.Crc32cWhy, v.Crc32cCPU, v.Crc32cCalibration, v.Crc32cPlans, v.Crc32cLinux)
}

// printChoice prints why the crc32c kernel was chosen (cksum.Chosen), each
// line indented: version and cksum-bench both print it.
func printChoice(w io.Writer, indent, why, cpu, calibration string, plans []string, linux string) {
	fmt.Fprintf(w, "%swhy: %s\n", indent, why)
	fmt.Fprintf(w, "%scpu: %s\n", indent, cpu)
	if len(plans) > 0 {
		fmt.Fprintf(w, "%smethods by input length (%s):\n", indent, calibration)
		for _, p := range plans {
			fmt.Fprintf(w, "%s  %s\n", indent, p)
		}
	}
	fmt.Fprintf(w, "%slinux: %s\n", indent, linux)
}
