package journal

import (
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// OpenFileDevice opens a store's log file.
func OpenFileDevice(path string) (xlog.Device, error) {
	return recovery.OpenLogDevice(store.OSFS(), path)
}

// Recovery says what mounting found in the log (FS.Recovery).
type Recovery = recovery.Report

// FollowedFile is an inode recovery grew to its data file's size.
type FollowedFile = recovery.FollowedFile

// MissingData is a regular file whose data file lacks bytes that were
// durable (recovery.MissingData).
type MissingData = recovery.MissingData

// MissingDataError is a mount's refusal of such files
// (recovery.MissingDataError).
type MissingDataError = recovery.MissingDataError

// LogReport is what a store holds, read without changing anything: for
// xlogfs logprint and xlogfs check.
type LogReport = recovery.LogReport

// Inspect reads a store's superblock, checkpoint and log and replays the
// log onto a copy of the checkpoint's metadata in memory.
func Inspect(dir string) (*LogReport, error) { return recovery.Inspect(dir) }

// InspectAll is Inspect that also reads the records behind the tail.
func InspectAll(dir string) (*LogReport, error) { return recovery.InspectAll(dir) }

// InspectStore is Inspect of a store on st.
func InspectStore(st store.StoreFS, dir string) (*LogReport, error) {
	return recovery.InspectStore(st, dir)
}

// Repair cuts the log at the bad record r found (recovery.Repair).
func Repair(dir string, r *LogReport) error { return recovery.Repair(dir, r) }
