package main

import (
	"go/parser"
	"go/token"
)

// Mutant is one deliberate bug: edits to the tree, and the tests that must
// catch it, run in order until one does.
type Mutant struct {
	Name   string
	Bug    string // what the bug is, in a line
	Edits  []Edit
	Checks []Check
}

// Edit replaces Old, which must occur exactly once in File (a path from
// the module root), with New.
type Edit struct {
	File, Old, New string
}

// Check is one go test run: the named top-level tests of package Pkg (as
// go test names it, ./journal), with Env added to the environment.
type Check struct {
	Pkg     string
	Tests   []string
	Env     []string
	Timeout string // go test -timeout; 5m if empty
}

func parses(file string, src []byte) error {
	_, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	return err
}

// The crash tests with few states: enough to catch what the list needs
// them for, in seconds. The seeds are random, as in make test.
var (
	powerLoss = Check{Pkg: "./journal", Tests: []string{"TestPowerLoss"}, Env: []string{"XLOGFS_POWERLOSS_STATES=2000"}}
	crashTest = Check{Pkg: "./journal", Tests: []string{"TestRandomizedCrashRecovery"}, Env: []string{"XLOGFS_CRASH_STATES=2000"}}
)

// Mutants is the list make mutation plants. Keep each snippet short but
// unique in its file; when the code it names changes, change the snippet
// with it (the package's test says which no longer match).
var Mutants = []Mutant{
	// Checksums and the record format.
	{
		Name:   "sector-off-by-one",
		Bug:    "sector mode leaves the last byte of every 512-byte block out of the CRC",
		Edits:  []Edit{{"cksum/mode.go", "crc = update(crc, rec[off:min(off+BlockSize, len(rec))])", "crc = update(crc, rec[off:min(off+BlockSize-1, len(rec))])"}},
		Checks: []Check{{Pkg: "./cksum", Tests: []string{"TestModesAgree"}}},
	},
	{
		Name:   "stamp-skips-block",
		Bug:    "packing a record saves block 1's first word but leaves it unstamped with the cycle",
		Edits:  []Edit{{"logbuf/iclog.go", "\tbe.PutUint32(stamp, cycle)\n", "\tif i != 1 {\n\t\tbe.PutUint32(stamp, cycle)\n\t}\n"}},
		Checks: []Check{{Pkg: "./logbuf", Tests: []string{"TestCycleEvidence"}}},
	},
	{
		Name:   "checkpoint-crc-ignored",
		Bug:    "a checkpoint file whose CRC does not match is loaded anyway",
		Edits:  []Edit{{"journal/store/checkpoint.go", "computed != stored {", "computed != stored && stored == 0 {"}},
		Checks: []Check{powerLoss},
	},

	// Torn versus corrupt.
	{
		Name:   "inflight-x8",
		Bug:    "the torn-write allowance is 8 × logbufs records: durable records cut as torn",
		Edits:  []Edit{{"journal/xlog/recover.go", "int { return w.LogBufs }", "int { return 8 * w.LogBufs }"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestInFlightAllowance", "TestFortyFsyncedFiles"}}},
	},
	{
		Name:   "inflight-minus-1",
		Bug:    "the torn-write allowance is logbufs−1 records: a real torn tail refused as corruption",
		Edits:  []Edit{{"journal/xlog/recover.go", "int { return w.LogBufs }", "int { return w.LogBufs - 1 }"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestInFlightAllowance", "TestTornWriteAtEveryBoundary"}}},
	},
	{
		Name:   "inflight-undercount",
		Bug:    "recovery counts one record fewer in flight than it found",
		Edits:  []Edit{{"journal/xlog/recover.go", "\tn := 1\n\tnext := s.Head", "\tn := 0\n\tnext := s.Head"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestInFlightAllowance"}}},
	},
	{
		Name:   "watermark-zero",
		Bug:    "records carry no durable watermark: a lost block in a durable record is cut as torn",
		Edits:  []Edit{{"journal/xlog/xlog.go", "Seal(ic.at.LSN(), ic.tail, durable, ic.prevBlock, x.Sum)", "Seal(ic.at.LSN(), ic.tail, 0, ic.prevBlock, x.Sum)"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestWatermarkProvesDurable"}}},
	},
	{
		Name:   "watermark-ahead",
		Bug:    "a record's durable watermark names the record itself: a torn tail with a record after it is refused",
		Edits:  []Edit{{"journal/xlog/xlog.go", "Seal(ic.at.LSN(), ic.tail, durable, ic.prevBlock, x.Sum)", "Seal(ic.at.LSN(), ic.tail, ic.at.LSN(), ic.prevBlock, x.Sum)"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestTornWriteAtEveryBoundary", "TestInFlightAllowance"}}, crashTest},
	},
	{
		Name:   "restamp-ignored",
		Bug:    "a record whose CRC verifies once its cycle words are restored is treated as torn",
		Edits:  []Edit{{"journal/xlog/recover.go", "\t\tif rr, ok := restamped(img, p); ok {\n\t\t\treturn rr, true\n\t\t}\n\t\t// Some block", "\t\t// Some block"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestHeaderAndCycleWordDamage"}}},
	},
	{
		Name:   "stale-blocks-kept",
		Bug:    "a mount after a crash does not clear the blocks past the head before writing",
		Edits:  []Edit{{"journal/recovery/recover.go", "\tif !scan.Clean && m.Overlay == nil {\n", "\tif false && m.Overlay == nil {\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestCutThenTearAgain"}}},
	},

	// Durability order: what must be durable before what.
	{
		Name:   "data-fdatasync-dropped",
		Bug:    "fsync of a file (meta journal) skips the fdatasync of its data file",
		Edits:  []Edit{{"journal/datafile/sync.go", "\tif st.file != nil {\n\t\terr = f.syncAndMeasure(st)\n\t} else {\n\t\terr = f.With(ino, false, f.fdatasync)\n\t}\n", ""}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "data-dir-fsync-dropped",
		Bug:    "fsync of a new file does not fsync the data directory that names its data file",
		Edits:  []Edit{{"journal/datafile/sync.go", "if err := f.SyncDir(); err != nil { // the new data file's name", "if err := error(nil); err != nil { // the new data file's name"}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "log-sync-dropped",
		Bug:    "a log force returns without the log file's fdatasync",
		Edits:  []Edit{{"journal/xlog/device.go", "func (d *fileDevice) Sync() error { return d.f.Datasync() }", "func (d *fileDevice) Sync() error { return nil }"}},
		Checks: []Check{powerLoss},
	},
	{
		Name: "checkpoint-before-durable",
		Bug:  "a checkpoint claims the log up to its head, records not yet durable (nor in its model) included",
		Edits: []Edit{{"journal/fs.go", "\tm, b := fs.shadow.Clone(), fs.bound\n\tfs.shadowMu.Unlock()\n",
			"\tm, b := fs.shadow.Clone(), fs.bound\n\tfs.shadowMu.Unlock()\n\t_, head, _, _ := fs.x.SnapshotStats()\n\tb = xlog.Boundary{Tail: head, LastTID: fs.x.LastCommitted()}\n"}},
		Checks: []Check{powerLoss, crashTest},
	},
	{
		Name: "checkpoint-unsynced",
		Bug:  "a checkpoint is renamed into place before its bytes are durable (no fsync of checkpoint.tmp)",
		Edits: []Edit{{"journal/store/checkpoint.go", "\tif err := writeFileSync(st, tmp, c.encode()); err != nil {\n",
			"\tif err := func() error {\n\t\tf, err := st.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n" +
				"\t\t_, err = f.WriteAt(c.encode(), 0)\n\t\tf.Close()\n\t\treturn err\n\t}(); err != nil {\n"}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "checkpoint-dir-unsynced",
		Bug:    "the log tail moves before the checkpoint's rename is durable (no fsync of the store directory)",
		Edits:  []Edit{{"journal/store/checkpoint.go", "\tif err := st.SyncDir(dir); err != nil {\n", "\tif err := error(nil); err != nil {\n"}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "cut-before-log",
		Bug:    "a shrinking truncate cuts the data file before its log record is durable",
		Edits:  []Edit{{"journal/datafile/io.go", "\t\terr = f.e.Force(lsn)\n", "\t\t_ = lsn\n"}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "replay-unsynced",
		Bug:    "recovery checkpoints before the data files it replayed into are durable",
		Edits:  []Edit{{"journal/datafile/files.go", "\t\t\t\treturn file.Datasync()\n", "\t\t\t\treturn nil\n"}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "fdatasync-skips-size",
		Bug:    "fdatasync does not force the log for a write that changed the file's size",
		Edits:  []Edit{{"journal/fs.go", "if op.Type == meta.OpCreate || in != nil && in.Size != oldSize || op.Data != nil", "if op.Type == meta.OpCreate || in != nil && oldSize < -1 || op.Data != nil"}},
		Checks: []Check{powerLoss},
	},
	{
		Name: "model-before-log",
		Bug:  "an operation changes the model before the log takes it: a failed commit still changes the namespace",
		Edits: []Edit{{"journal/fs.go",
			"\tlsn, err := fs.x.Commit(region, &kept)\n\tif err != nil {\n\t\treturn 0, err\n\t}\n\tif err := fs.model.Apply(op); err != nil {",
			"\tapplied := fs.model.Apply(op)\n\tlsn, err := fs.x.Commit(region, &kept)\n\tif err != nil {\n\t\treturn 0, err\n\t}\n\tif err := applied; err != nil {"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestFaultMatrix", "TestFullDisk"}}},
	},

	// Timestamps: the two bugs every test once let through.
	{
		Name:   "rename-times",
		Bug:    "a rename leaves the parent directories' mtime and ctime alone",
		Edits:  []Edit{{"journal/meta/model.go", "\tsin.Ctime = now\n\tod.Mtime, od.Ctime, nd.Mtime, nd.Ctime = now, now, now, now\n", "\tsin.Ctime = now\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestTimesByPOSIXRules"}}, {Pkg: "./tests", Tests: []string{"TestMetadataOracles"}, Timeout: "10m"}},
	},
	{
		Name:   "write-mtime",
		Bug:    "a write leaves the file's mtime alone",
		Edits:  []Edit{{"journal/meta/model.go", "if op.Type == OpWrite || op.Mode&(FallocPunchHole|FallocZeroRange) != 0 {", "if op.Mode&(FallocPunchHole|FallocZeroRange) != 0 {"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestTimesByPOSIXRules"}}, {Pkg: "./tests", Tests: []string{"TestMetadataOracles"}, Timeout: "10m"}},
	},

	// Passthrough: writes the kernel syncs in the data file alone.
	{
		Name:  "size-follows-ignored",
		Bug:   "recovery cuts a marked inode's data file to the logged size: appends the kernel synced (O_SYNC, O_DSYNC, RWF_DSYNC) are lost",
		Edits: []Edit{{"journal/recovery/recover.go", "\t\tif !ok || s.Size <= in.Size {\n", "\t\tif !ok || true {\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestPassthroughSyncAppendsSurvivePowerCut"}}, powerLoss,
			{Pkg: "./tests", Tests: []string{"TestPassthroughRWFDsyncAppendsSurviveKill9", "TestPassthroughSyncOpenAppendsSurviveKill9"}}},
	},
	{
		Name:   "no-size-follows-mark",
		Bug:    "an open for writing in passthrough never marks the inode: recovery cuts to the logged size",
		Edits:  []Edit{{"journal/datafile/passthrough.go", "if err := f.markSizeFollows(ino, st, true); err != nil {", "if err := error(nil); err != nil {"}},
		Checks: []Check{{Pkg: "./tests", Tests: []string{"TestPassthroughRWFDsyncAppendsSurviveKill9", "TestPassthroughSyncOpenAppendsSurviveKill9"}}},
	},
	{
		Name:   "marked-shrink-unsynced",
		Bug:    "a shrink of a marked inode returns before the data file's cut is durable: recovery keeps the longer data file",
		Edits:  []Edit{{"journal/datafile/io.go", "\t\t\tcase follows:\n", "\t\t\tcase follows && false:\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestPassthroughShrinkStaysCut"}}},
	},
	{
		Name:   "shrink-keeps-mark",
		Bug:    "a logged shrink leaves the inode marked: a crash before the data file's cut is durable keeps the longer data file, bytes that are not the file's",
		Edits:  []Edit{{"journal/meta/model.go", "\t\t\tin.SizeFollows = false\n", "\t\t\tin.SizeFollows = in.SizeFollows\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestPassthroughShrinkEndsTheMark"}}},
	},
	{
		Name:   "shrink-no-remark",
		Bug:    "a shrink of a marked inode does not mark it again: appends the kernel syncs after the truncate are cut at recovery",
		Edits:  []Edit{{"journal/datafile/io.go", "remark = err == nil", "remark = false"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestPassthroughShrinkStaysCut"}}},
	},

	// Set-ID bits.
	{
		Name:   "chown-keeps-setuid",
		Bug:    "a chown leaves S_ISUID on the file",
		Edits:  []Edit{{"journal/privs.go", "kill := mode & syscall.S_ISUID", "kill := uint32(0)"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestDropPrivs"}}},
	},
	{
		Name:   "write-keeps-setid",
		Bug:    "a write by a caller without CAP_FSETID leaves the set-ID bits (the mount ignores FUSE_WRITE_KILL_SUIDGID)",
		Edits:  []Edit{{"fusefs/handle.go", "if k := h.n.killForWrite(ctx); k.Kill {", "if k := h.n.killForWrite(ctx); k.Kill && k.InGroup == nil {"}},
		Checks: []Check{{Pkg: "./tests", Tests: []string{"TestSetIDSemantics"}, Timeout: "10m"}},
	},

	// Freed space.
	{
		Name:   "reap-before-durable",
		Bug:    "a freed inode's data file is deleted once its free is in the log, before it is durable: a crash that undoes the free leaves the file without its bytes",
		Edits:  []Edit{{"journal/fs.go", "\t_, _, _, durable := fs.x.SnapshotStats()\n\treturn fs.files.Reap(durable)\n", "\t_, head, _, _ := fs.x.SnapshotStats()\n\treturn fs.files.Reap(head.LSN())\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestFreedSpaceCrashAnywhere"}}},
	},
	{
		Name:   "go-on-reuses-tid",
		Bug:    "a mount that goes on from the old checkpoint (no room for a fresh one) reuses the id of a transaction recovery dropped as incomplete: the next recovery finds it started twice",
		Edits:  []Edit{{"journal/fs.go", "return rec.Tail, rec.SeenTID, nil", "return rec.Tail, rec.LastTID, nil"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestGoOnFromCheckpointAfterIncompleteTransaction"}}},
	},
}
