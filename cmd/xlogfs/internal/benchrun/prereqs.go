package benchrun

import (
	"errors"
	"os"
	"slices"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchwork"
)

// Prereqs checks that what the bench needs is installed. It installs
// nothing: a missing package is named, with the command that installs it
// (make bench does, for what the default bench needs).
func Prereqs(cfg benchreport.Config, targets []benchreport.Target) error {
	needFuse := slices.ContainsFunc(targets, func(t benchreport.Target) bool { return t.Kind == "xlogfs" || t.Kind == "loopback" })
	if needFuse {
		if _, err := os.Stat("/dev/fuse"); err != nil {
			return errors.New("/dev/fuse is missing: this machine cannot mount FUSE filesystems")
		}
		if err := benchwork.RequireCommand("fusermount3", "fuse3"); err != nil {
			return err
		}
	}
	switch cfg.Workload {
	case "dbench":
		return benchwork.RequireCommand("dbench", "dbench")
	case "mariadb":
		return benchwork.MariadbPrereqs()
	}
	return nil
}
