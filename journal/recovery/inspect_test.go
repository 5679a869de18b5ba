package recovery_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// inspectMatches fails the test unless rep, of the store before recovery,
// says what Recover then found.
func inspectMatches(t *testing.T, what string, rep *recovery.LogReport, r *recovery.Recovered, m mountOf) {
	t.Helper()
	if rep.Replayed != r.Transactions || len(rep.Records) != r.Records || rep.Clean != r.Clean || rep.Dropped != r.Dropped {
		t.Errorf("%s: Inspect found %d transactions in %d records (clean %v, %d dropped); Recover %+v",
			what, rep.Replayed, len(rep.Records), rep.Clean, rep.Dropped, r.Report)
	}
	if rep.Torn != (r.TornLSN != 0) || rep.Torn && rep.Bad.LSN() != r.TornLSN || len(rep.Later) != r.DroppedLater {
		t.Errorf("%s: Inspect: torn %v at %v, %d later; Recover cut at %v dropping %d", what, rep.Torn, rep.Bad, len(rep.Later), r.TornLSN, r.DroppedLater)
	}
	if rep.Model.Digest() != m.Checkpoint.Model.Digest() {
		t.Errorf("%s: Inspect's replayed model differs from Recover's", what)
	}
	if !rep.Sound() || rep.Corrupt != nil || rep.ReplayErr != nil || len(rep.Problems) != 0 || rep.Mounted {
		t.Errorf("%s: Inspect: sound %v (corrupt %v, replay %v, problems %q, mounted %v)", what, rep.Sound(), rep.Corrupt, rep.ReplayErr, rep.Problems, rep.Mounted)
	}
}

// TestInspectMatchesRecover: Inspect of a crashed store, whole or with a
// torn tail, reports what Recover then does, and changes nothing.
func TestInspectMatchesRecover(t *testing.T) {
	for _, torn := range []bool{false, true} {
		what := map[bool]string{false: "crashed", true: "torn tail"}[torn]
		c := crashAfter(t, journal.Options{}, fsyncWork(4))
		s, ck, _ := scanStore(t, c.dir)
		last := s.Records[len(s.Records)-1]
		if torn {
			patchLog(t, c.dir, last.Offset+512, make([]byte, 512))
		}
		before := snapshot(t, c.dir)
		rep, err := recovery.Inspect(c.dir)
		check(t, err)
		sameFiles(t, what+": Inspect", c.dir, before)
		if rep.Checkpoint.TailLSN != ck.TailLSN || rep.Superblock.LogSize != testLogSize {
			t.Errorf("%s: Inspect read tail %v, log size %d; want %v, %d", what, rep.Checkpoint.TailLSN, rep.Superblock.LogSize, ck.TailLSN, testLogSize)
		}
		if torn != (rep.Bad != nil) || torn && rep.Bad.LSN() != last.LSN() {
			t.Errorf("%s: Inspect's bad record %v", what, rep.Bad)
		}
		if rep.Old != nil {
			t.Errorf("%s: Inspect read %d records behind the tail", what, len(rep.Old))
		}
		r, m, err := recoverStore(t, c.dir, false, nil)
		check(t, err)
		inspectMatches(t, what, rep, r, m)
		if want := c.txns - txnsIn(last)*b2i(torn); r.Transactions != want {
			t.Errorf("%s: %d transactions, want %d", what, r.Transactions, want)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestInspectCleanStore: a cleanly unmounted store inspects clean and
// sound, its model the checkpoint's; InspectAll also finds the workload's
// records behind the tail.
func TestInspectCleanStore(t *testing.T) {
	dir := newStore(t)
	fs := mountStore(t, dir, journal.Options{})
	fsyncWork(5)(fs, &crash{ino: map[string]meta.Ino{}})
	check(t, fs.Close())
	ck, err := store.ReadCheckpoint(store.OSFS(), dir)
	check(t, err)
	rep, err := recovery.Inspect(dir)
	check(t, err)
	if !rep.Clean || !rep.Sound() || rep.Replayed != 0 || len(rep.Records) != 1 || rep.Bad != nil {
		t.Errorf("clean store: clean %v, sound %v, %d replayed from %d records, bad %v", rep.Clean, rep.Sound(), rep.Replayed, len(rep.Records), rep.Bad)
	}
	if rep.Model.Digest() != ck.Model.Digest() {
		t.Error("clean store: the inspected model is not the checkpoint's")
	}
	all, err := recovery.InspectAll(dir)
	check(t, err)
	if len(all.Old) < 5 {
		t.Errorf("InspectAll found %d records behind the tail, want the 5 fsynced files' at least", len(all.Old))
	}
	for _, r := range all.Old {
		if r.Err != nil {
			t.Errorf("old record %v: %v", r.LSN(), r.Err)
		}
	}
}

// TestInspectMounted: a store another process holds is reported mounted,
// so not sound, yet read; Repair refuses to cut it.
func TestInspectMounted(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(3))
	lock, err := store.Lock(store.OSFS(), c.dir)
	check(t, err)
	defer lock.Close()
	rep, err := recovery.Inspect(c.dir)
	check(t, err)
	if !rep.Mounted || rep.Sound() || rep.Replayed != c.txns {
		t.Errorf("held store: mounted %v, sound %v, %d replayed; want mounted, not sound, %d replayed", rep.Mounted, rep.Sound(), rep.Replayed, c.txns)
	}
	// A report with a bad record, to make Repair try.
	s, _, _ := scanStore(t, c.dir)
	rep.Bad = &s.Records[1]
	before := snapshot(t, c.dir)
	if err := recovery.Repair(c.dir, rep); err == nil {
		t.Error("Repair cut a log another process holds")
	}
	sameFiles(t, "Repair of a held store", c.dir, before)
}

// TestRepairCorrupt: Inspect of a corrupt log reports the corruption and
// what a cut loses; Repair cuts the log at the bad record, zeroing it and
// everything after it, so the next Inspect is sound, and a mount recovers
// what came before it.
func TestRepairCorrupt(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(6))
	s, ck, img0 := scanStore(t, c.dir)
	const v = 2
	victim := s.Records[v]
	flipLogBit(t, c.dir, victim.Offset+700, 0x10)
	before := snapshot(t, c.dir)

	rep, err := recovery.Inspect(c.dir)
	check(t, err)
	sameFiles(t, "Inspect of a corrupt log", c.dir, before)
	var ce *xlog.CorruptionError
	if !errors.As(rep.Corrupt, &ce) || ce.LSN != victim.LSN() || ce.Offset != victim.Offset {
		t.Fatalf("Inspect: corrupt %v, want a *CorruptionError at %v (offset %d)", rep.Corrupt, victim.LSN(), victim.Offset)
	}
	if rep.Sound() || rep.Torn || rep.Bad == nil || rep.Bad.LSN() != victim.LSN() {
		t.Errorf("Inspect: sound %v, torn %v, bad %v; want not sound, the bad record %v", rep.Sound(), rep.Torn, rep.Bad, victim.LSN())
	}
	kept := 0
	for _, r := range s.Records[:v] {
		kept += txnsIn(r)
	}
	// At stake: the transactions after the victim, and the victim's own,
	// unknown (counted as "at least").
	stake := c.txns - kept - txnsIn(victim)
	if len(rep.Records) != v || rep.Replayed != kept || len(rep.AtStake) != stake || len(rep.Later) != len(s.Records)-v-1 ||
		len(rep.Unread) != 1 || rep.Unread[0].LSN != victim.LSN() || rep.Stake().Count() != fmt.Sprintf("at least %d committed transactions", stake) {
		t.Errorf("Inspect: %d records, %d replayed, %d at stake (%s, unread %v), %d later; want %d, %d, %d (and the victim unread), %d",
			len(rep.Records), rep.Replayed, len(rep.AtStake), rep.Stake().Count(), rep.Unread, len(rep.Later), v, kept, stake, len(s.Records)-v-1)
	}

	check(t, recovery.Repair(c.dir, rep))
	img, err := os.ReadFile(filepath.Join(c.dir, store.LogName))
	check(t, err)
	tail := int64(ck.TailLSN.Block()) * 512
	if !bytes.Equal(img[tail:victim.Offset], img0[tail:victim.Offset]) {
		t.Error("Repair changed the log before the bad record")
	}
	if rest := img[victim.Offset:]; !bytes.Equal(rest, make([]byte, len(rest))) {
		t.Error("Repair left bytes from the bad record on")
	}
	again, err := recovery.Inspect(c.dir)
	check(t, err)
	if !again.Sound() || again.Bad != nil || again.Corrupt != nil || again.Replayed != kept || len(again.Records) != v {
		t.Errorf("after Repair: sound %v, bad %v, corrupt %v, %d replayed from %d records; want sound, %d from %d",
			again.Sound(), again.Bad, again.Corrupt, again.Replayed, len(again.Records), kept, v)
	}
	r, m, err := recoverStore(t, c.dir, false, nil)
	check(t, err)
	inspectMatches(t, "after Repair", again, r, m)
}

// TestRepairNothingBad: Repair of a sound report changes nothing.
func TestRepairNothingBad(t *testing.T) {
	c := crashAfter(t, journal.Options{}, fsyncWork(2))
	rep, err := recovery.Inspect(c.dir)
	check(t, err)
	before := snapshot(t, c.dir)
	check(t, recovery.Repair(c.dir, rep))
	sameFiles(t, "Repair of a sound log", c.dir, before)
}

// TestInspectMissingStore: Inspect of a directory that holds no store
// fails, naming the superblock.
func TestInspectMissingStore(t *testing.T) {
	dir := t.TempDir()
	rep, err := recovery.Inspect(dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "superblock") {
		t.Errorf("Inspect of an empty directory: %v, want an error naming it and its missing superblock", err)
	}
	if rep != nil {
		t.Errorf("Inspect of an empty directory returned a report %+v", rep)
	}
}
