package recovery_test

import (
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/logbuf"
)

// itemRegions is the regions of op with the XFS log items a tracker gives
// it in record rec: the op first, then the items.
func itemRegions(t *testing.T, tr *xfsitems.Tracker, m *meta.Model, op meta.Op, rec logbuf.LSN) [][]byte {
	t.Helper()
	regs := tr.Build(m, &op, op.Encode(nil), rec, 0)
	if len(regs) < 2 {
		t.Fatalf("%s: %d regions, want the op and its items", op.String(), len(regs))
	}
	out := make([][]byte, len(regs))
	for i, r := range regs {
		out[i] = append([]byte(nil), r...)
	}
	if err := m.Apply(&op); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplayMixedLog: a log holding transactions of both kinds (one region,
// and the op with XFS log items after it, as mounts with --log-items
// logical and xfs write them) replays every op, in order, and the items
// are not mistaken for ops.
func TestReplayMixedLog(t *testing.T) {
	m := meta.NewModel(0)
	tr := xfsitems.NewTracker()
	create := func(ino meta.Ino, name string) meta.Op {
		return meta.Op{Type: meta.OpCreate, Ino: ino, Parent: meta.RootIno, Name: name, Mode: meta.ModeReg | 0o644, Ctime: int64(ino)}
	}
	a := create(2, "a")
	if err := m.Apply(&a); err != nil {
		t.Fatal(err)
	}
	b := itemRegions(t, tr, m, create(3, "b"), logbuf.MakeLSN(1, 8))
	c := create(4, "c")
	d := itemRegions(t, tr, m, create(5, "d"), logbuf.MakeLSN(1, 16))
	s := scanOf(
		append(txnOps(1, true, a.Encode(nil)), txnOps(2, true, b...)...),
		append(txnOps(3, true, c.Encode(nil)), txnOps(4, true, d...)...),
	)
	r, names, got, err := replayNames(t, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "a,b,c,d" || r.Transactions != 4 || r.LastTID != 4 {
		t.Fatalf("replayed %v (%+v), want a,b,c,d: 4 transactions", names, r)
	}
	if len(got.Inodes[meta.RootIno].Entries) != 4 {
		t.Fatalf("root holds %v, want the four files", got.Inodes[meta.RootIno].Entries)
	}
}

// TestReplayRefusesBadItem: a transaction whose log items do not parse (a
// core region cut short, an unknown item type) is a bad transaction:
// replay stops there and says which, with its tid and LSN, as for a bad
// op.
func TestReplayRefusesBadItem(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(regs [][]byte) [][]byte
		want  string
	}{
		{"core cut short", func(regs [][]byte) [][]byte {
			for i, r := range regs {
				if len(r) == xfsitems.DinodeCoreSize {
					regs[i] = r[:len(r)-4]
					return regs
				}
			}
			t.Fatal("no inode core among the regions")
			return nil
		}, "has 172 bytes, want 176"},
		{"unknown type", func(regs [][]byte) [][]byte {
			return append(regs, []byte{0x99, 0x12, 1, 0, 0, 0, 0, 0})
		}, "unknown log item type 0x1299"},
		{"a region missing", func(regs [][]byte) [][]byte { return regs[:len(regs)-1] }, "item region"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := meta.NewModel(0)
			tr := xfsitems.NewTracker()
			op := meta.Op{Type: meta.OpCreate, Ino: 2, Parent: meta.RootIno, Name: "a", Mode: meta.ModeReg | 0o644}
			regs := c.spoil(itemRegions(t, tr, m, op, logbuf.MakeLSN(1, 8)))
			_, names, _, err := replayNames(t, scanOf(txnOps(7, true, regs...)), 0)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "transaction 0x7") {
				t.Fatalf("replay of a bad item: %v (applied %v), want an error of transaction 0x7 saying %q", err, names, c.want)
			}
			if len(names) != 0 {
				t.Fatalf("applied %v from a bad transaction", names)
			}
		})
	}
}
