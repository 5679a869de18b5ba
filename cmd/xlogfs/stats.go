package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
histogram, and more, as "name value" lines. The first, "state", is the
journal's: ok; "degraded: checkpoint failed: ..." while checkpoints fail but
the log has room; "failed: <reason>" once it takes no more changes (also
said on stderr).`)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if _, err := os.Stat(pos[0]); err != nil {
		return fmt.Errorf("%s: %w", pos[0], unwrapPath(err))
	}
	b, err := os.ReadFile(filepath.Join(pos[0], fusefs.StatsName))
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%s is not an xlogfs mount (no %s)", pos[0], fusefs.StatsName)
		}
		return err
	}
	if _, err := os.Stdout.Write(b); err != nil {
		return err
	}
	// The journal's state leads the counters; one that is not "ok" is
	// also said on stderr, where a script's reader will see it.
	for _, line := range strings.Split(string(b), "\n") {
		if state, ok := strings.CutPrefix(line, "state "); ok && state != "ok" {
			fmt.Fprintf(os.Stderr, "xlogfs: %s: journal %s\n", pos[0], state)
		}
	}
	return nil
}
