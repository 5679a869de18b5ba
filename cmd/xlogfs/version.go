package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/xlogfs/xlogfs/cksum"
)

// Version is the release of xlogfs; the store format has its own version.
const Version = "0.1.0"

func init() {
	register(command{name: "version", summary: "print the version, Go toolchain and chosen crc32c kernel", run: runVersion})
}

func runVersion(args []string) error {
	fs := newFlags("version", "", "Print the xlogfs version, the Go toolchain, and the crc32c implementation this CPU uses.")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " (" + s.Value[:12] + ")"
			}
		}
	}
	fmt.Printf("xlogfs %s%s\n", Version, rev)
	fmt.Printf("go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("crc32c %s: %s\n", cksum.Best().Name, cksum.Best().Desc)
	return nil
}
