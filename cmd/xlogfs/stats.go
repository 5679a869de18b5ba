package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/xlogfs/xlogfs/fusefs"
)

func init() {
	register(command{name: "stats", summary: "print a mounted filesystem's counters (MOUNTPOINT/.stats)", run: runStats})
}

func runStats(args []string) error {
	fs := newFlags("stats", "MOUNTPOINT", `
Prints the counters of the xlogfs mounted at MOUNTPOINT, read from its
hidden, read-only .stats file: log forces, records, bytes and crc32c calls
checksummed, time in checksum, fsyncs per log force, the fsync latency
histogram, and more, as "name value" lines.`)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(pos[0], fusefs.StatsName))
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%s is not an xlogfs mount (no %s)", pos[0], fusefs.StatsName)
		}
		return err
	}
	_, err = os.Stdout.Write(b)
	return err
}
