package main

import (
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal"
)

// TestAtStakeAgrees: 30 fsynced files, one record each (two transactions:
// create and write), and the header block of the 2nd record zeroed, so its
// transactions cannot be read. check, the mount's refusal and check
// --repair all say the same: at least 56 committed transactions (those of
// the 28 records after it), and the 2nd record's transactions unknown.
// Before, all three said "56 committed transactions" and left the 2nd
// record out, where the cut drops 58. The repaired store then replays the
// 1st record's 2 transactions: 58 were dropped, and "at least 56" held.
func TestAtStakeAgrees(t *testing.T) {
	dir, recs := fsyncedStore(t, 30)
	second := recs[1]
	damageLog(t, dir, func(img []byte) { clear(img[second.Offset : second.Offset+512]) })
	const count = "at least 56 committed transactions"
	unknown := "record " + second.LSN + ": its transactions are unknown"

	code, out, errs := runCapture(t, "check", dir)
	if code != 1 || !strings.Contains(out, "at stake: "+count+" after it, possibly acknowledged") || !strings.Contains(out, unknown) {
		t.Fatalf("check: exit %d\n%s%s\nwant %q and %q", code, out, errs, count, unknown)
	}
	mountRefuses(t, dir, "At stake: "+count, unknown)

	code, out, errs = runCapture(t, "check", "--repair", dir)
	lost := strings.Index(out, "Lost with it")
	done := strings.Index(out, "repair: done")
	if code != 0 || lost < 0 || done < lost || !strings.Contains(out[lost:done], "\n  "+unknown) || !strings.Contains(out[lost:done], "\n  "+count+":\n") ||
		strings.Count(out[lost:done], "\n    tid ") != 56 {
		t.Fatalf("check --repair: exit %d\n%s%s", code, out, errs)
	}
	fs, err := journal.Open(dir, journal.Options{Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatalf("mount after repair: %v", err)
	}
	defer fs.Close()
	if r := fs.Recovery(); r.Transactions != 2 {
		t.Fatalf("after repair: recovery %+v, want the 1st record's 2 transactions", r)
	}
}

// TestCheckPlurals: one of a thing is not "1 things".
func TestCheckPlurals(t *testing.T) {
	dir, _ := fsyncedStore(t, 1)
	code, out, errs := runCapture(t, "check", dir)
	if code != 0 || !strings.Contains(out, "log: 1 valid record from") || !strings.Contains(out, "; 2 transactions to replay") {
		t.Fatalf("check: exit %d\n%s%s", code, out, errs)
	}
	for _, bad := range []string{"1 valid records", "1 records", "1 inodes", "1 committed transactions", "1 transactions"} {
		if strings.Contains(out, bad) {
			t.Errorf("check says %q:\n%s", bad, out)
		}
	}
}
