package journal

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// TestInspectAllAfterCleanUnmount: after a clean unmount the live log is
// the unmount record alone, and InspectAll finds the workload's records
// behind the tail, in order, ending where the unmount record starts.
func TestInspectAllAfterCleanUnmount(t *testing.T) {
	dir := mkfs(t, 4<<20, 32<<10)
	fs := mount(t, dir, Options{})
	for i := range 20 {
		a := must[Attr](t)(fs.Create(meta.RootIno, fmt.Sprintf("f%02d", i), meta.ModeReg|0o644, 0, 0, 0, ""))
		check(t, fs.Fsync(a.Ino, false))
	}
	check(t, fs.Close())
	rep, err := recovery.InspectAll(dir)
	check(t, err)
	if !rep.Clean || len(rep.Records) != 1 {
		t.Fatalf("after a clean unmount: clean %v, %d live records; want the unmount record alone", rep.Clean, len(rep.Records))
	}
	if len(rep.Old) < 20 {
		t.Fatalf("%d old records, want the 20 fsynced creates' at least", len(rep.Old))
	}
	checkChain(t, rep.Old, 4<<20)
	last := rep.Old[len(rep.Old)-1]
	if end := xlog.After(last.At, last.Header, 4<<20/logbuf.BBSize); end.LSN() != rep.Records[0].LSN() {
		t.Errorf("the newest old record %v ends at %v, not at the unmount record %v", last.LSN(), end.LSN(), rep.Records[0].LSN())
	}
	creates := 0
	for _, r := range rep.Old {
		for _, op := range r.Record.Ops {
			if d, err := meta.DecodeOp(op.Data); err == nil && d.Type == meta.OpCreate {
				creates++
			}
		}
	}
	if creates != 20 {
		t.Errorf("%d creates in the old records, want 20", creates)
	}
	// Inspect alone does not read them.
	plain, err := recovery.Inspect(dir)
	check(t, err)
	if plain.Old != nil {
		t.Errorf("Inspect read %d old records", len(plain.Old))
	}
}

// TestInspectAllAfterWraps: a log written round several times holds old
// records of two passes, the previous one's from the head to the end of
// the log and the current one's from block 0 to the tail; the walk finds
// them in LSN order, contiguous, all valid.
func TestInspectAllAfterWraps(t *testing.T) {
	const logSize = 1 << 20
	dir := mkfs(t, logSize, 32<<10)
	fs := mount(t, dir, Options{Journal: JournalData, CheckpointInterval: time.Hour})
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	buf := []byte(strings.Repeat("w", 3000))
	for i := range 2000 {
		must[int](t)(fs.Write(a.Ino, buf, int64(i%50)*3000))
		check(t, fs.Fsync(a.Ino, false))
	}
	head := fs.Stats().Head
	check(t, fs.Close())
	if head.Cycle() < 3 {
		t.Fatalf("the log reached cycle %d only; the test wants two wraps", head.Cycle())
	}
	rep, err := recovery.InspectAll(dir)
	check(t, err)
	cycles := map[uint32]int{}
	for _, r := range rep.Old {
		if r.Err != nil {
			t.Errorf("old record %v: %v", r.LSN(), r.Err)
		}
		cycles[r.LSN().Cycle()]++
	}
	tail := rep.Checkpoint.TailLSN
	if len(cycles) != 2 || cycles[tail.Cycle()] == 0 || cycles[xlog.PrevCycle(tail.Cycle())] == 0 {
		t.Errorf("old records by cycle %v; want cycles %d and %d (tail %v)", cycles, xlog.PrevCycle(tail.Cycle()), tail.Cycle(), tail)
	}
	checkChain(t, rep.Old, logSize)
	// Together they fill most of the log: only the part of a record the
	// head overwrote the start of, and a wrap gap, hold none.
	var blocks uint64
	for _, r := range rep.Old {
		blocks += uint64(r.Header.RecordBlocks())
	}
	if free := uint64(logSize/logbuf.BBSize) - 1; blocks < free-2*32<<10/logbuf.BBSize {
		t.Errorf("old records cover %d of %d free blocks", blocks, free)
	}
}

// checkChain checks that records follow each other as the writer placed
// them: each starts where the one before ends.
func checkChain(t *testing.T, recs []xlog.ScannedRecord, logSize int64) {
	t.Helper()
	for i := 1; i < len(recs); i++ {
		p := recs[i-1]
		if next := xlog.After(p.At, p.Header, uint64(logSize/logbuf.BBSize)); next.LSN() != recs[i].LSN() {
			t.Errorf("record %d at %v follows %v, which ends at %v", i, recs[i].LSN(), p.LSN(), next.LSN())
		}
	}
}
