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
		Edits:  []Edit{{"cksum/mode.go", "crc = update(crc, r[off:min(off+BlockSize, len(r))])", "crc = update(crc, r[off:min(off+BlockSize-1, len(r))])"}},
		Checks: []Check{{Pkg: "./cksum", Tests: []string{"TestModesAgree"}}},
	},
	{
		Name:   "xfs-coverage-short",
		Bug:    "xfs CRC coverage leaves out the last extension header h_len needs: the xfs mode is not xlog_cksum",
		Edits:  []Edit{{"cksum/coverage.go", "for i := 1; i <= ExtHeaders(payloadLen); i++ {", "for i := 1; i < ExtHeaders(payloadLen); i++ {"}},
		Checks: []Check{{Pkg: "./logbuf", Tests: []string{"TestXFSCoverageIsXlogCksum"}}, {Pkg: "./cksum", Tests: []string{"TestXFSModeIsXlogCksum"}}},
	},
	{
		Name:   "watermark-complement-unchecked",
		Bug:    "under xfs coverage a durable watermark that disagrees with its complement is believed: a damaged watermark goes unseen",
		Edits:  []Edit{{"logbuf/decode.go", "x != ^uint64(h.Durable) {", "false && x != ^uint64(h.Durable) {"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestHeaderAndCycleWordDamage"}}, {Pkg: "./logbuf", Tests: []string{"TestXFSCoverageUncovered"}}},
	},
	{
		Name:   "uncovered-cycle-unchecked",
		Bug:    "under xfs coverage an extension header the CRC leaves out is not checked for the record's cycle: a damaged or torn one is refused as corruption",
		Edits:  []Edit{{"logbuf/decode.go", "c := be.Uint32(xh[xoffCycle:]); c != h.Cycle {", "c := be.Uint32(xh[xoffCycle:]); false && c != h.Cycle {"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestHeaderAndCycleWordDamage"}}, {Pkg: "./logbuf", Tests: []string{"TestXFSCoverageUncovered"}}},
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
		Edits:  []Edit{{"journal/xlog/recover.go", "\t\tif rr, ok := restamped(img, p, cov); ok {\n\t\t\treturn rr, true\n\t\t}\n\t\t// Some block", "\t\t// Some block"}},
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
		Edits: []Edit{{"journal/checkpointer.go", "\tm, b := fs.shadow.Clone(), fs.bound\n\tfs.shadowMu.Unlock()\n",
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
		Edits:  []Edit{{"journal/datafile/io.go", "\t\t\tif err := f.e.Force(lsn); err != nil {\n", "\t\t\tif _ = lsn; false {\n"}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "replay-unsynced",
		Bug:    "recovery checkpoints before the data files it replayed into are durable",
		Edits:  []Edit{{"journal/datafile/files.go", "\t\treturn file.Datasync()\n", "\t\treturn nil\n"}},
		Checks: []Check{powerLoss},
	},
	{
		Name:   "fdatasync-skips-size",
		Bug:    "fdatasync does not force the log for a write that changed the file's size",
		Edits:  []Edit{{"journal/commit.go", "if op.Type == meta.OpCreate || in != nil && in.Size != oldSize || op.Data != nil", "if op.Type == meta.OpCreate || in != nil && oldSize < -1 || op.Data != nil"}},
		Checks: []Check{powerLoss},
	},
	{
		Name: "model-before-log",
		Bug:  "an operation changes the model before the log takes it: a failed commit still changes the namespace",
		Edits: []Edit{{"journal/commit.go",
			"\tlsn, err := fs.x.Commit(fs.regions(op, region), &kept)\n\tif err != nil {\n\t\tif fs.items != nil {\n\t\t\tfs.items.Reset()\n\t\t}\n\t\treturn 0, err\n\t}\n\tif err := fs.model.Apply(op); err != nil {",
			"\tapplied := fs.model.Apply(op)\n\tlsn, err := fs.x.Commit(fs.regions(op, region), &kept)\n\tif err != nil {\n\t\treturn 0, err\n\t}\n\tif err := applied; err != nil {"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestFaultMatrix", "TestFullDisk"}}},
	},

	// Log items (--log-items xfs): the op is the first region, the rest are
	// checked, never applied.
	{
		Name:   "replay-last-region",
		Bug:    "replay decodes a transaction's last region as its op: a transaction with XFS log items is refused, or the wrong region applied",
		Edits:  []Edit{{"journal/recovery/replay.go", "op, err := meta.DecodeOp(tx.Regions[0])", "op, err := meta.DecodeOp(tx.Regions[len(tx.Regions)-1])"}},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestReplayMixedLog"}}, {Pkg: "./tests", Tests: []string{"TestLogItemsAcrossMounts"}}},
	},
	{
		Name:   "replay-skips-items",
		Bug:    "replay does not check a transaction's log items: a damaged item region is replayed as if the transaction were whole",
		Edits:  []Edit{{"journal/recovery/replay.go", "xfsitems.Parse(tx.Regions[1:])", "xfsitems.Parse(nil)"}},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestReplayRefusesBadItem"}}},
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

	// mkfs of a store in use, a lost superblock, what a cut drops.
	{
		Name:   "mkfs-no-lock",
		Bug:    "mkfs --force remakes a store without taking its lock: a mount's store is remade under it, and its files read back as zeros",
		Edits:  []Edit{{"journal/store/store.go", "\tif IsStore(st, dir) {\n\t\tlock, err := Lock(st, dir)", "\tif false {\n\t\tlock, err := Lock(st, dir)"}},
		Checks: []Check{{Pkg: "./journal/store", Tests: []string{"TestMkfsInUse", "TestMkfsForceHoldsLock"}}},
	},
	{
		Name:   "mkfs-no-mount-table",
		Bug:    "mkfs asks only the lock, not the mount table: a store still mounted by a daemon that let go of the lock is remade",
		Edits:  []Edit{{"cmd/xlogfs/mkfs.go", "if err := refuseMounted(pos[0]); err != nil {", "if err := refuseMounted(pos[0]); false && err != nil {"}},
		Checks: []Check{{Pkg: "./tests", Tests: []string{"TestMkfsMountedStore"}}},
	},
	{
		Name:   "lost-superblock-half-built",
		Bug:    "a store that lost its superblock is called half-built and sent to mkfs --force, which throws away its log and checkpoint",
		Edits:  []Edit{{"journal/store/rebuild.go", "func (r *remains) lost() bool { return !r.fresh() }", "func (r *remains) lost() bool { return false }"}},
		Checks: []Check{{Pkg: "./journal/store", Tests: []string{"TestRebuildLostSuperblock"}}},
	},
	{
		Name:   "rebuild-new-uuid",
		Bug:    "a rebuilt superblock gets a new UUID, not the one every log record carries",
		Edits:  []Edit{{"journal/store/rebuild.go", "\tif p.Records == 0 {\n", "\tif true {\n"}},
		Checks: []Check{{Pkg: "./journal/store", Tests: []string{"TestRebuildLostSuperblock"}}},
	},
	{
		Name:   "stake-skips-bad-record",
		Bug:    "what a cut drops leaves the damaged record out: the count is not 'at least', and its transactions are not said to be unknown",
		Edits:  []Edit{{"journal/xlog/recover.go", "unread := []UnreadRecord{bad}", "unread := []UnreadRecord(nil)"}},
		Checks: []Check{{Pkg: "./journal/xlog", Tests: []string{"TestAtStakeFromVerifiedRecords", "TestAtStakeUnreadableHeader"}}},
	},

	// The end of the log, and records longer than the bytes there are.
	{
		Name:   "scan-wraps-late",
		Bug:    "recovery wraps the log one block late: after a record ending where the largest record no longer fits, it looks for the next there, not at block 0 of the next cycle, and cuts the records after the wrap",
		Edits:  []Edit{{"journal/xlog/recover.go", "uint64(h.Size/logbuf.BBSize), logBlocks)", "uint64(h.Size/logbuf.BBSize)-1, logBlocks)"}},
		Checks: []Check{{Pkg: "./journal/xlog", Tests: []string{"TestScanEveryEndNearTheWrap"}}},
	},
	{
		Name:   "hsize-unchecked",
		Bug:    "recovery reads a record whose h_size reaches past the end of the log: the mount panics instead of refusing it",
		Edits:  []Edit{{"journal/xlog/recover.go", "\tif off+n > int64(len(img)) {\n", "\tif false && off+n > int64(len(img)) {\n"}},
		Checks: []Check{{Pkg: "./journal/xlog", Tests: []string{"TestScanRefusesSizePastTheEnd"}}},
	},
	{
		Name:   "record-length-unchecked",
		Bug:    "VerifyRecord checksums a record its buffer does not hold whole (cut short, or h_size grown): it panics instead of refusing it",
		Edits:  []Edit{{"logbuf/decode.go", "\tif len(rec) < n {\n", "\tif false && len(rec) < n {\n"}},
		Checks: []Check{{Pkg: "./logbuf", Tests: []string{"TestRecordCutShortRefused"}}},
	},
	{
		Name: "fsync-forces-stale-lsn",
		Bug:  "fsync forces the log up to the LSN it had before learning what the kernel wrote through passthrough: the learned size is not durable",
		Edits: []Edit{
			{"journal/fsops.go", "\tst := fs.files.State(ino)\n\tif in.IsRegular() {\n", "\tst := fs.files.State(ino)\n\tfs.mu.RLock()\n\tearly := fs.forces[ino].data\n\tfs.mu.RUnlock()\n\tif in.IsRegular() {\n"},
			{"journal/fsops.go", "\t\tlsn = fs.forces[ino].data\n", "\t\tlsn = early\n"},
		},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestPassthroughLearnsSizeAndTimes"}}},
	},
	{
		Name:   "inline-ext-saves-zero",
		Bug:    "inline mode saves zero, not the displaced word, for payload blocks 64 on (the extension headers' cycle data), with a CRC to match: those words read back as zero",
		Edits:  []Edit{{"logbuf/iclog.go", "\t\t\tic.pay.Save(saved, cycleDataSlot(ic.stamped)-BBSize)\n", "\t\t\tclear(saved)\n\t\t\tic.pay.Save(saved, cycleDataSlot(ic.stamped)-BBSize)\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestInlineStoreMountsInOtherModes"}}},
	},

	// Data files that lost durable bytes (#23).
	{
		Name:   "missing-data-read-as-zeros",
		Bug:    "recovery takes a data file shorter than the checkpoint made durable: a deleted data file reads as zeros",
		Edits:  []Edit{{"journal/recovery/recover.go", "\tif !m.AllowMissingData {\n\t\treturn nil, &MissingDataError", "\tif false {\n\t\treturn nil, &MissingDataError"}},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestMissingDataRefused"}}},
	},
	{
		Name: "missing-data-refused-after-replay",
		Bug:  "recovery refuses missing data only after data-journal replay wrote the data files: the refused mount changed the store",
		Edits: []Edit{
			{"journal/recovery/recover.go", "\tmissing, err := m.missingData(scan)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n", "\tmissing, merr := m.missingData(scan)\n"},
			{"journal/recovery/recover.go", "\tr := &Recovered{LastTID: rep.LastTID, PrevBlock: scan.Prev}\n", "\tif merr != nil {\n\t\treturn nil, merr\n\t}\n\tr := &Recovered{LastTID: rep.LastTID, PrevBlock: scan.Prev}\n"},
		},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestMissingDataRefused"}}},
	},
	{
		Name:   "data-floor-ignores-shrink",
		Bug:    "what a data file must hold stays the checkpoint's size through a logged shrink: a crash after a truncate is refused as missing data",
		Edits:  []Edit{{"journal/recovery/datafiles.go", "\t\tf[op.Ino] = in.Size\n", "\t\tf[op.Ino] = floor\n"}},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestMissingDataShrunkThenGrown"}}, powerLoss},
	},
	{
		Name:   "reconcile-leaves-data-file-missing",
		Bug:    "recovery does not make the data file a crash lost of a file written since the checkpoint: after the next checkpoint the store is refused as missing data",
		Edits:  []Edit{{"journal/datafile/files.go", "in.Size > 0 && !have[ino] && !f.Missing(ino)", "in.Size > 0 && !have[ino] && false"}},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestMissingDataAfterCheckpointAllowed"}}, powerLoss},
	},
	{
		Name:   "missing-data-read-ignores-mark",
		Bug:    "a file mounted with --allow-missing-data reads its data file's zeros, not EIO",
		Edits:  []Edit{{"journal/datafile/io.go", "\tif err := f.missingErr(ino, st); err != nil {\n\t\treturn 0, err\n\t}\n\tdefer st.doneWithFile()\n\tfile, err := f.openFile(ino, st, false)", "\tdefer st.doneWithFile()\n\tfile, err := f.openFile(ino, st, false)"}},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestAllowMissingData"}}, {Pkg: "./tests", Tests: []string{"TestMissingDataFiles"}}},
	},
	{
		Name:   "missing-data-replayed-into",
		Bug:    "data-journal replay writes logged bytes into a data file that lost durable bytes: the next mount takes the zeros before them",
		Edits:  []Edit{{"journal/recovery/recover.go", "\tif m.Files.Missing(op.Ino) {\n", "\tif false {\n"}},
		Checks: []Check{{Pkg: "./journal/recovery", Tests: []string{"TestAllowMissingDataReplaysNothing"}}},
	},

	// The fsync path: a caller that forces the log runs the round itself,
	// and forces that find one in flight share the next (#25).
	{
		Name:   "caller-round-skips-sync",
		Bug:    "a round a forcing caller runs itself publishes its records as durable without syncing the log device",
		Edits:  []Edit{{"journal/xlog/xlog.go", "\tif err == nil && sync {\n\t\tstart := time.Now()", "\tif err == nil && sync && labels != context.Background() {\n\t\tstart := time.Now()"}},
		Checks: []Check{crashTest, powerLoss},
	},
	{
		Name:   "sleeper-not-served",
		Bug:    "a force that slept on another goroutine's round returns when that round ends, though its record was forming behind it and is not durable",
		Edits:  []Edit{{"journal/xlog/xlog.go", "\t\t\t\tslept = true\n\t\t\t}\n\t\t\tx.cond.Wait()\n\t\t\tcontinue\n", "\t\t\t\tslept = true\n\t\t\t}\n\t\t\tx.cond.Wait()\n\t\t\treturn nil\n"}},
		Checks: []Check{{Pkg: "./journal/xlog", Tests: []string{"TestCallerForces"}}, crashTest},
	},

	// Freed space.
	{
		Name:   "reap-before-durable",
		Bug:    "a freed inode's data file is deleted once its free is in the log, before it is durable: a crash that undoes the free leaves the file without its bytes",
		Edits:  []Edit{{"journal/checkpointer.go", "\t_, _, _, durable := fs.x.SnapshotStats()\n\treturn fs.files.Reap(durable)\n", "\t_, head, _, _ := fs.x.SnapshotStats()\n\treturn fs.files.Reap(head.LSN())\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestFreedSpaceCrashAnywhere"}}},
	},
	{
		Name:   "go-on-reuses-tid",
		Bug:    "a mount that goes on from the old checkpoint (no room for a fresh one) reuses the id of a transaction recovery dropped as incomplete: the next recovery finds it started twice",
		Edits:  []Edit{{"journal/mount.go", "return rec.Tail, rec.SeenTID, nil", "return rec.Tail, rec.LastTID, nil"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestGoOnFromCheckpointAfterIncompleteTransaction"}}},
	},
	{
		Name:   "data-check-by-checkpoint",
		Bug:    "a mount checks the data files against the checkpoint's model, not the replayed one: a store whose freed file's data file went once its free was durable is refused",
		Edits:  []Edit{{"journal/recovery/recover.go", "\tmissing := floors.missing(dry, sizes, m.Files.Path)\n", "\t_ = floors\n\tmissing := newDataFloors(m.Checkpoint.Model).missing(m.Checkpoint.Model, sizes, m.Files.Path)\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestDeleteGivesSpaceBackOnFullDisk"}}},
	},
	{
		Name:   "replay-writes-freed",
		Bug:    "data-journal replay writes the logged bytes of files the log frees later: on a full disk the mount has no room for them and is refused",
		Edits:  []Edit{{"journal/recovery/recover.go", "\tif m.gone[op.Ino] {\n", "\tif false {\n"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestDataJournalReplayNeedsNoRoomForFreedFiles"}}},
	},
	{
		Name:   "hold-per-lookup",
		Bug:    "every lookup makes a new go-fuse node that holds the journal inode; go-fuse throws away those of inodes it knows, and their holds keep a removed file, and its data file's space, until the next mount",
		Edits:  []Edit{{"fusefs/fusefs.go", "if v, loaded := n.m.nodes.LoadOrStore(a.Ino, cn); loaded {", "if v, loaded := n.m.nodes.LoadOrStore(a.Ino, cn); loaded && false {"}},
		Checks: []Check{{Pkg: "./tests", Tests: []string{"TestRemovedAfterLookupsGivesSpaceBack"}}},
	},
	{
		Name:   "log-outruns-marked-names",
		Bug:    "the log's writer writes a record creating a marked file before its data file's name is durable: after a power cut the file exists without the bytes the kernel synced into it",
		Edits:  []Edit{{"journal/datafile/names.go", "if f.markedNames.Load() <= f.namesSynced.Load() {", "if true {"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestCreatedMarkedOpensWithoutForce"}}},
	},
	{
		Name:   "create-drops-mark",
		Bug:    "a file created marked in a passthrough mount is unmarked in the model: its first open forces nothing, and recovery cuts the appends the kernel synced",
		Edits:  []Edit{{"journal/meta/model.go", "SizeFollows: op.Flags&SizeFollowsSet != 0,", "SizeFollows: false,"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestCreatedMarkedOpensWithoutForce"}}, {Pkg: "./journal/meta", Tests: []string{"TestOldCreateDecodes"}}},
	},
	{
		Name:   "route-ignores-logged-bytes",
		Bug:    "a file whose logged bytes recovery may still replay is opened in passthrough: replay writes them over the kernel's newer bytes",
		Edits:  []Edit{{"journal/datafile/route.go", "\tcase st.loggedLSN != 0 && st.loggedLSN >= f.e.TailLSN():\n\t\treturn true\n", ""}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestLoggedBytesKeepTheLogRoute"}}},
	},
	{
		Name:   "logged-while-passthrough",
		Bug:    "a write through the daemon to an inode open in passthrough is logged with its bytes: replay writes them over the kernel's newer bytes",
		Edits:  []Edit{{"journal/datafile/io.go", "logged := f.immediate(len(p)) && n > 0 && !st.passthroughKind()", "logged := f.immediate(len(p)) && n > 0"}},
		Checks: []Check{{Pkg: "./journal", Tests: []string{"TestPowerLoss"}, Env: []string{"XLOGFS_POWERLOSS_STATES=20000"}, Timeout: "10m"}},
	},
	{
		Name:   "route-kind-not-sticky",
		Bug:    "an inode's opens change kind while the kernel still knows it: the kernel refuses an open through the daemon of an inode it keeps a passthrough backing file for (EIO)",
		Edits:  []Edit{{"journal/datafile/route.go", "\treturn st.kind == kindPassthrough || st.ptOpens.Load() > 0\n", "\treturn st.ptOpens.Load() > 0\n"}, {"journal/datafile/route.go", "\tcase st.kind == kindDaemon || st.dataMissing || st.daemonOpens > 0:\n", "\tcase st.dataMissing || st.daemonOpens > 0:\n"}},
		Checks: []Check{{Pkg: "./tests", Tests: []string{"TestReadWhileReplaced"}}},
	},
}
