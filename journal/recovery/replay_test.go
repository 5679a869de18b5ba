package recovery_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

// txnOps is one transaction's op headers: START, a region op for each
// region, COMMIT (commit false: the COMMIT is left out).
func txnOps(tid uint32, commit bool, regions ...[]byte) []logbuf.Op {
	ops := []logbuf.Op{{TID: tid, ClientID: logbuf.ClientTransaction, Flags: logbuf.FlagStart}}
	for _, r := range regions {
		ops = append(ops, logbuf.Op{TID: tid, ClientID: logbuf.ClientTransaction, Data: r})
	}
	if commit {
		ops = append(ops, logbuf.Op{TID: tid, ClientID: logbuf.ClientTransaction, Flags: logbuf.FlagCommit})
	}
	return ops
}

// scanOf is a scan of records holding the given ops, one slice a record.
func scanOf(records ...[]logbuf.Op) *xlog.Scan {
	s := &xlog.Scan{}
	for _, ops := range records {
		s.Records = append(s.Records, xlog.ScannedRecord{Record: &logbuf.Record{Ops: ops}})
	}
	return s
}

// createRegion is the region of a create of a regular file name as inode
// ino in the root.
func createRegion(ino meta.Ino, name string) []byte {
	op := meta.Op{Type: meta.OpCreate, Ino: ino, Parent: meta.RootIno, Name: name, Mode: meta.ModeReg | 0o644, Ctime: int64(ino)}
	return op.Encode(nil)
}

// replayNames replays s onto a fresh model and returns the result and the
// names of the creates applied, in order.
func replayNames(t *testing.T, s *xlog.Scan, lastTID uint32) (recovery.Replayed, []string, *meta.Model, error) {
	t.Helper()
	m := meta.NewModel(0)
	var names []string
	r, err := recovery.Replay(s, lastTID, func(op *meta.Op) error {
		names = append(names, op.Name)
		return m.Apply(op)
	})
	return r, names, m, err
}

// TestReplaySkipsCheckpointed: Replay applies, in log order, only the
// committed transactions newer than the checkpoint's last, by serial
// number arithmetic (so across the wrap of transaction ids at 2^32), and
// reports the newest it applied.
func TestReplaySkipsCheckpointed(t *testing.T) {
	tids := []uint32{0xfffffffe, 0xffffffff, 0, 1, 2}
	var recs [][]logbuf.Op
	for i, tid := range tids {
		recs = append(recs, txnOps(tid, true, createRegion(meta.RootIno+1+meta.Ino(i), fmt.Sprintf("f%d", i))))
	}
	s := scanOf(recs...)
	for k := range len(tids) + 1 {
		last := tids[0] - 1 // older than every one
		if k > 0 {
			last = tids[k-1]
		}
		// The checkpoint holds the first k: build its model by applying them.
		m := meta.NewModel(0)
		for i := range k {
			op, err := meta.DecodeOp(recs[i][1].Data)
			check(t, err)
			check(t, m.Apply(&op))
		}
		var names []string
		r, err := recovery.Replay(s, last, func(op *meta.Op) error {
			names = append(names, op.Name)
			return m.Apply(op)
		})
		if err != nil {
			t.Fatalf("checkpoint at tid %#x: %v", last, err)
		}
		want := tids[len(tids)-1]
		if k == len(tids) {
			want = last
		}
		if r.Transactions != len(tids)-k || r.LastTID != want || r.Dropped != 0 {
			t.Errorf("checkpoint at tid %#x: replayed %+v, want %d transactions up to %#x", last, r, len(tids)-k, want)
		}
		if got, wantNames := strings.Join(names, ","), strings.Join(fileNames(k, len(tids)), ","); got != wantNames {
			t.Errorf("checkpoint at tid %#x: applied %q, want %q", last, got, wantNames)
		}
	}
}

func fileNames(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("f%d", i))
	}
	return out
}

// TestReplayUncommitted: a transaction whose COMMIT is not in the log is
// counted as dropped and never applied; one split across two records is
// applied once its COMMIT is read; an unmount record is no transaction.
func TestReplayUncommitted(t *testing.T) {
	split := txnOps(3, true, createRegion(4, "split"))
	unmount := []logbuf.Op{{TID: 9, ClientID: logbuf.ClientLog, Flags: logbuf.FlagUnmount}}
	s := scanOf(
		txnOps(1, true, createRegion(2, "a")),
		append(txnOps(2, false, createRegion(3, "never")), split[:2]...), // tid 2 never commits; tid 3 commits in the next record
		append(split[2:], txnOps(4, true, createRegion(4, "b"))...),
		unmount,
	)
	r, names, m, err := replayNames(t, s, 0)
	// tid 4 creates inode 4 too, after tid 3 did: the model refuses it.
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("replaying a create of an inode that exists: %v, want EINVAL", err)
	}
	if r.Transactions != 2 || r.LastTID != 3 || strings.Join(names, ",") != "a,split,b" {
		t.Errorf("replayed %+v, applied %q; want tids 1 and 3, then tid 4 refused", r, names)
	}
	for _, want := range []string{"transaction 0x4", "create"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}

	s.Records[2].Record.Ops = split[2:] // without tid 4
	r, names, m, err = replayNames(t, s, 0)
	check(t, err)
	if r.Transactions != 2 || r.Dropped != 1 || r.LastTID != 3 || strings.Join(names, ",") != "a,split" {
		t.Errorf("replayed %+v, applied %q; want tids 1 and 3, tid 2 dropped", r, names)
	}
	if m.Inodes[3] != nil || m.Inodes[4] == nil {
		t.Error("the uncommitted create was applied, or the split one was not")
	}
}

// TestReplayBadTransactions: a transaction that is not a decodable op
// (followed by well-formed log items, if any: a second op is none), or
// whose ops do not reassemble, stops replay with an error
// naming it; what came before it stays applied and counted.
func TestReplayBadTransactions(t *testing.T) {
	good := txnOps(1, true, createRegion(2, "a"))
	for _, c := range []struct {
		name string
		ops  []logbuf.Op
		want string
	}{
		{"two ops", txnOps(2, true, createRegion(3, "x"), createRegion(4, "y")), "transaction 0x2 (LSN 0,0) create ino 3 at 1/\"x\" mode 0100644 uid 0 gid 0: item region 0"},
		{"no region", txnOps(2, true), "has no regions"},
		{"undecodable region", txnOps(2, true, []byte{0xff, 0xff}), "transaction 0x2"},
		{"started twice", append(txnOps(2, false), txnOps(2, true, createRegion(3, "x"))...), "started twice"},
		{"unknown client", []logbuf.Op{{TID: 2, ClientID: 0x11, Flags: logbuf.FlagStart}}, "unknown client id"},
	} {
		r, names, _, err := replayNames(t, scanOf(good, c.ops), 0)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "replay: ") {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
		if r.Transactions != 1 || r.LastTID != 1 || len(names) != 1 {
			t.Errorf("%s: replayed %+v (applied %q), want the good transaction before it", c.name, r, names)
		}
	}
}

// TestReplayApplyError: an error of apply stops replay, wrapped with the
// transaction and the LSN of its COMMIT's record; the transactions before
// it are counted.
func TestReplayApplyError(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(4))
	s, ck, _ := scanStore(t, c.dir)
	stop := errors.New("stop here")
	n := 0
	r, err := recovery.Replay(s, ck.LastTID, func(op *meta.Op) error {
		if n == 5 {
			return stop
		}
		n++
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Replay: %v, want apply's error wrapped", err)
	}
	if r.Transactions != 5 {
		t.Errorf("replayed %+v, want the 5 transactions before the failing one", r)
	}
	// The 6th transaction (the 3rd file's write) commits in the 3rd record.
	if lsn := s.Records[2].LSN().String(); !strings.Contains(err.Error(), "(LSN "+lsn+")") || !strings.Contains(err.Error(), "write") {
		t.Errorf("error %q does not name the write committed in the record at %v", err, lsn)
	}
}

// FuzzReplayRegion: whatever bytes a committed transaction's region holds,
// Replay decodes or refuses them with an error, never panics, and counts
// only what it applied.
func FuzzReplayRegion(f *testing.F) {
	f.Add(createRegion(2, "a"), uint32(1))
	f.Add([]byte{}, uint32(0))
	f.Add([]byte{byte(meta.OpWrite), 2, 0, 5}, uint32(7))
	f.Fuzz(func(t *testing.T, region []byte, tid uint32) {
		s := scanOf(txnOps(tid, true, createRegion(2, "a")), txnOps(tid+1, true, region))
		m := meta.NewModel(0)
		applied := 0
		r, err := recovery.Replay(s, tid-1, func(op *meta.Op) error {
			applied++
			return m.Apply(op)
		})
		if r.Transactions > applied || (err == nil && r.Transactions != 2) {
			t.Fatalf("replayed %+v with error %v after applying %d", r, err, applied)
		}
	})
}
