package journal

import (
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// DecodeOp is meta.DecodeOp.
func DecodeOp(b []byte) (Op, error) { return meta.DecodeOp(b) }

// DefaultLogForceInterval is xlog.DefaultLogForceInterval.
const DefaultLogForceInterval = xlog.DefaultLogForceInterval

// DefaultLogSize is store.DefaultLogSize.
const DefaultLogSize = store.DefaultLogSize

// FileFd is store.FileFd.
func FileFd(f StoreFile) (uintptr, bool) { return store.FileFd(f) }

// InUse is store.InUse.
func InUse(dir string) (bool, error) { return store.InUse(dir) }

// Ino is meta.Ino.
type Ino = meta.Ino

// LockPath is store.LockPath.
func LockPath(dir string) string { return store.LockPath(dir) }

// MaxLogSize is store.MaxLogSize.
const MaxLogSize = store.MaxLogSize

// MinLogSize is store.MinLogSize.
const MinLogSize = store.MinLogSize

// Mkfs is store.Mkfs.
func Mkfs(dir string, o MkfsOptions) (*Superblock, error) { return store.Mkfs(dir, o) }

// MkfsOptions is store.MkfsOptions.
type MkfsOptions = store.MkfsOptions

// ModeDir is meta.ModeDir.
const ModeDir = meta.ModeDir

// ModeReg is meta.ModeReg.
const ModeReg = meta.ModeReg

// Op is meta.Op.
type Op = meta.Op

// OpType is meta.OpType.
type OpType = meta.OpType

// RootIno is meta.RootIno.
const RootIno = meta.RootIno

// ScannedRecord is xlog.ScannedRecord.
type ScannedRecord = xlog.ScannedRecord

// SetAtime is meta.SetAtime.
const SetAtime = meta.SetAtime

// SetGID is meta.SetGID.
const SetGID = meta.SetGID

// SetMode is meta.SetMode.
const SetMode = meta.SetMode

// SetMtime is meta.SetMtime.
const SetMtime = meta.SetMtime

// SetSize is meta.SetSize.
const SetSize = meta.SetSize

// SetUID is meta.SetUID.
const SetUID = meta.SetUID

// StoreFile is store.StoreFile.
type StoreFile = store.StoreFile

// Superblock is store.Superblock.
type Superblock = store.Superblock

// Checkpoint is store.Checkpoint.
type Checkpoint = store.Checkpoint

// Device is xlog.Device.
type Device = xlog.Device

// StoreFS is store.StoreFS.
type StoreFS = store.StoreFS

// StoreLog is xlog.StoreLog.
type StoreLog = xlog.StoreLog

// FailedError is xlog.FailedError.
type FailedError = xlog.FailedError

// CorruptionError is xlog.CorruptionError.
type CorruptionError = xlog.CorruptionError

// StakedTxn is xlog.StakedTxn.
type StakedTxn = xlog.StakedTxn

// Model is meta.Model.
type Model = meta.Model

// Inode is meta.Inode.
type Inode = meta.Inode

// Space is store.Space.
type Space = store.Space

// FileStat is store.FileStat.
type FileStat = store.FileStat

// ReadCheckpoint loads and checks DIR/checkpoint.
func ReadCheckpoint(dir string) (*store.Checkpoint, error) {
	return store.ReadCheckpoint(store.OSFS(), dir)
}

// ReadSuperblock reads and checks DIR/superblock.
func ReadSuperblock(dir string) (*store.Superblock, error) {
	return store.ReadSuperblock(store.OSFS(), dir)
}

// IsStore reports whether dir holds a superblock (valid or not).
func IsStore(dir string) bool { return store.IsStore(store.OSFS(), dir) }

// Stats is statsfile.Stats.
type Stats = statsfile.Stats

// File is statsfile.File.
type StatsFile = statsfile.File

// Parse is statsfile.Parse.
func ParseStats(b []byte) (*StatsFile, error) { return statsfile.Parse(b) }

// Line is statsfile.Line.
type StatLine = statsfile.Line

// Hist is statsfile.Hist.
type Hist = statsfile.Hist

// Bucket is statsfile.Bucket.
type Bucket = statsfile.Bucket

// HistSummary is statsfile.HistSummary.
type HistSummary = statsfile.HistSummary

// HistNames is statsfile.HistNames.
var HistNames = statsfile.HistNames

// HistFsync is statsfile.HistFsync.
const HistFsync = statsfile.HistFsync

// HistCksumRecord is statsfile.HistCksumRecord.
const HistCksumRecord = statsfile.HistCksumRecord

// HistForceCksum is statsfile.HistForceCksum.
const HistForceCksum = statsfile.HistForceCksum

// HistForce is statsfile.HistForce.
const HistForce = statsfile.HistForce

// HistBounds is statsfile.HistBounds.
func HistBounds(i int) (lo uint64, hi uint64) { return statsfile.HistBounds(i) }

// HistPercentile is statsfile.HistPercentile.
func HistPercentile(h []uint64, p float64) float64 { return statsfile.HistPercentile(h, p) }

// InUseError is store.InUseError.
type InUseError = store.InUseError

// SuperblockPlan is store.SuperblockPlan.
type SuperblockPlan = store.SuperblockPlan

// ErrSuperblockSound is store.ErrSuperblockSound.
var ErrSuperblockSound = store.ErrSuperblockSound

// PlanSuperblock is store.PlanSuperblock on the real filesystem.
func PlanSuperblock(dir string) (*SuperblockPlan, error) {
	return store.PlanSuperblock(store.OSFS(), dir)
}

// RebuildSuperblock is store.RebuildSuperblock on the real filesystem.
func RebuildSuperblock(dir string, p *SuperblockPlan) error {
	return store.RebuildSuperblock(store.OSFS(), dir, p)
}

// LogItem is xfsitems.Item: one XFS log item of a transaction.
type LogItem = xfsitems.Item

// ParseLogItemRegions is xfsitems.Parse: the log items of a transaction's
// regions after its op.
func ParseLogItemRegions(regions [][]byte) ([]LogItem, error) { return xfsitems.Parse(regions) }

// DescribeLogItemFormat is xfsitems.DescribeFormat.
func DescribeLogItemFormat(r []byte) (string, int, bool) { return xfsitems.DescribeFormat(r) }
