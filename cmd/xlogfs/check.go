package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

func init() {
	register(command{name: "check", summary: "check a store's superblock, checkpoint and log (--repair cuts a bad log)", args: "DIR", min: 1, max: 1, setup: runCheck})
}

func runCheck(fs *flagSet) func(pos []string) error {
	fs.about = `
Checks an unmounted store: the superblock and checkpoint CRCs, every log
record from the tail (CRC, cycle stamps, op headers), that the log replays
onto the checkpoint, and that the resulting metadata is consistent (every
entry names an inode, link counts match). Exits 0 only when a mount would
succeed without losing acknowledged data; a torn tail (from a crash) is
reported but is sound.

A bad record is a torn write only if it may have been in flight at a crash:
some of its blocks do not carry its cycle, no later valid record's durable
watermark covers it, and at most logbufs records lie from it to the last
valid one. Any other bad record is corruption: the store is not sound, and
a mount refuses it.

--repair cuts the log at the first bad record, after printing the records
and transactions that will be lost.

--rebuild-superblock writes the superblock of a store that lost it (deleted,
or damaged: no magic, a CRC that does not verify) from what the rest of the
store says: the UUID from the log records that verify (every record carries
it), the log size from the log file's size, the default logbsize from the
checkpoint (its writer's iclog size). It prints the superblock, writes it
as mkfs does (a temporary file renamed into place) under the store's lock,
touches nothing else, and goes on to check the store. A log without any
record names no UUID: nothing can then be lost, and the superblock gets a
new one. It is a flag of its own, not part of --repair: it loses nothing,
where --repair drops transactions. A store whose superblock is missing is
never to be remade with mkfs --force while its log and checkpoint are there:
that throws away every file.

Data files are checked too: each regular file's data file (DIR/data/<inode>)
must hold at least the bytes the store had made durable, the least size the
file had from the checkpoint on (a crash may lose unsynced writes made since,
never those). One that is missing or shorter was deleted or cut outside
xlogfs: check names the inode, a path of it and the data file, and the store
is not sound (a mount refuses it; mount --allow-missing-data mounts it, those
files failing reads and writes with EIO).

--json prints the report as one JSON object: what check prints, and
missing_data, the files whose data files lack bytes, with their count.

A mounted store is in use, not unsound: check says so and exits 1 without
checking. A store that is locked but no longer mounted (a daemon finishing
its unmount) is waited for, up to --wait.`
	repair := fs.Bool("repair", false, "cut the log at the first bad record (what follows it is lost)")
	rebuildSB := fs.Bool("rebuild-superblock", false, "write a lost or damaged superblock again from the log and checkpoint, then check")
	wait := fs.Duration("wait", defaultStoreWait, "how long to wait for a store whose unmount is finishing")
	asJSON := fs.Bool("json", false, "print the report as one JSON object, with the data files that lack durable bytes (missing_data)")
	return func(pos []string) (err error) {
		if *asJSON && *repair {
			return fs.usagef("--json reports only: run --repair without it")
		}
		dir := pos[0]
		if *rebuildSB {
			if err := rebuildSuperblock(dir); err != nil {
				return err
			}
		}
		rep, err := inspectWaiting(dir, *wait, "check", false)
		if err != nil {
			return err
		}
		if *asJSON {
			return printCheckJSON(rep)
		}
		sb, ck := rep.Superblock, rep.Checkpoint
		fmt.Printf("superblock: ok (format %d, uuid %x, log %s, logbsize %s, crc %s)\n", sb.Version, sb.UUID, humanSize(sb.LogSize), humanSize(int64(sb.LogBSize)), sb.Coverage)
		fmt.Printf("checkpoint: ok (#%d, tail %v, %s, last tid %#x)\n", ck.Seq, ck.TailLSN, plural(len(ck.Model.Inodes), "inode"), ck.LastTID)
		fmt.Printf("log: %s from %v to head %v, %s; %s to replay, %d incomplete\n",
			plural(len(rep.Records), "valid record"), ck.TailLSN, rep.Head, logState(rep.Clean, len(rep.Records)), plural(rep.Replayed, "transaction"), rep.Dropped)
		sound := rep.Sound()
		switch {
		case rep.Corrupt != nil:
			fmt.Printf("log: CORRUPT: %s\n", corruptText(rep.Corrupt, dir))
		case rep.Torn:
			fmt.Printf("log: torn write at LSN %v (offset %d): %v; it may have been in flight (%s from it on, at most %d in flight), so a mount cuts the log there, dropping %s and %s\n",
				rep.Bad.LSN(), rep.Bad.Offset, rep.Bad.Err, plural(rep.InFlight, "record"), rep.LogBufs, plural(len(rep.Later), "later in-flight record"), rep.Stake().Count())
		}
		for _, r := range rep.Records {
			if r.Restamped > 0 {
				fmt.Printf("log: record %v: %d blocks do not carry its cycle, but its CRC verifies with their cycle words restored (replayed as is)\n", r.LSN(), r.Restamped)
			}
		}
		if rep.ReplayErr != nil {
			fmt.Printf("replay: FAILED: %v\n", rep.ReplayErr)
		}
		for _, p := range rep.Problems {
			fmt.Printf("metadata: %s\n", p)
		}
		if rep.ReplayErr == nil && len(rep.Problems) == 0 {
			fmt.Printf("metadata: ok (%s after replay)\n", plural(len(rep.Model.Inodes), "inode"))
		}
		printDataFiles(rep)

		if *repair && rep.Bad != nil {
			fmt.Printf("\nrepair: cutting the log at LSN %v (offset %d). Lost with it:\n", rep.Bad.LSN(), rep.Bad.Offset)
			printLost(rep)
			fmt.Printf("  %s:\n", rep.Stake().Count())
			for _, t := range rep.AtStake {
				fmt.Printf("    %v\n", t)
			}
			if err := recovery.Repair(dir, rep); err != nil {
				return fmt.Errorf("repair: %w", err)
			}
			again, err := recovery.Inspect(dir)
			if err != nil {
				return err
			}
			fmt.Printf("repair: done; the log now ends at %v with %s, %s to replay\n", again.Head, plural(len(again.Records), "record"), plural(again.Replayed, "transaction"))
			sound = again.Sound()
		} else if *repair {
			fmt.Println("repair: nothing to cut")
		}
		if !sound {
			fmt.Fprintln(os.Stderr, "xlogfs check: the store is not sound")
			return exitCode(1)
		}
		return nil
	}
}

// rebuildSuperblock is check --rebuild-superblock: it says what is wrong
// with the superblock and what it writes, and writes it. A store that is
// mounted is in use, as for mkfs; a sound superblock is left alone.
func rebuildSuperblock(dir string) error {
	if err := refuseMounted(dir); err != nil {
		return err
	}
	p, err := store.PlanSuperblock(store.OSFS(), dir)
	if errors.Is(err, store.ErrSuperblockSound) {
		fmt.Println("rebuild: the superblock is sound; nothing to rebuild")
		return nil
	}
	if err != nil {
		return inUseOf(dir, err)
	}
	sb := p.Superblock
	fmt.Printf("superblock: %s\n", p.Problem)
	uuidFrom := fmt.Sprintf("carried by the %s in the log", plural(p.Records, "valid record"))
	if p.Records == 0 {
		uuidFrom = "new: the log holds no record, so no UUID must match"
	}
	fmt.Printf("rebuild: writing %s: format %d, uuid %x (%s), log %s (the log file's size), logbsize %s (%s), crc %s (%s)\n",
		filepath.Join(dir, "superblock"), sb.Version, sb.UUID, uuidFrom, humanSize(sb.LogSize), humanSize(int64(sb.LogBSize)), p.LogBSizeFrom, sb.Coverage, p.CoverageFrom)
	if err := store.RebuildSuperblock(store.OSFS(), dir, p); err != nil {
		if errors.Is(err, store.ErrSuperblockSound) {
			fmt.Println("rebuild: another process wrote a sound superblock meanwhile; nothing written")
			return nil
		}
		return inUseOf(dir, err)
	}
	fmt.Println("rebuild: done")
	return nil
}

// printLost lists the records check --repair cuts, in log order: the bad
// one with its error, the valid later ones, and any between them whose
// transactions cannot be read.
func printLost(rep *recovery.LogReport) {
	type line struct {
		lsn  uint64
		text string
	}
	var lines []line
	for i, u := range rep.Unread {
		text := u.String()
		if i == 0 {
			// The error names the record again ("record 1,90: CRC
			// mismatch"): said once.
			why := strings.TrimPrefix(rep.Bad.Err.Error(), "record "+u.LSN.String()+": ")
			switch {
			case u.Why != "" && strings.HasSuffix(text, "("+u.Why+")") && strings.HasPrefix(why, u.Why):
				text = strings.TrimSuffix(text, "("+u.Why+")") + "(" + why + ")"
			case !strings.Contains(text, why):
				text += ": " + why
			}
		}
		lines = append(lines, line{uint64(u.LSN), text})
	}
	for _, l := range rep.Later {
		lines = append(lines, line{uint64(l.LSN()), fmt.Sprintf("record %v (%s)", l.LSN(), plural(int(l.Header.NumLogOps), "op"))})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return cmp.Compare(a.lsn, b.lsn) })
	for _, l := range lines {
		fmt.Printf("  %s\n", l.text)
	}
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// corruptText says what a *CorruptionError says in a few short lines (the
// error itself is one long sentence, kept for --json): where, what, why it
// is no torn write, what is at stake and what to do. Any other error is
// its own text.
func corruptText(err error, dir string) string {
	var ce *xlog.CorruptionError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	reason := strings.TrimPrefix(ce.Reason.Error(), "record "+ce.LSN.String()+": ")
	var b strings.Builder
	fmt.Fprintf(&b, "log corrupt at LSN %v (log offset %d): %s\n", ce.LSN, ce.Offset, reason)
	fmt.Fprintf(&b, "  not a torn write: %s\n", ce.Evidence)
	if n := len(ce.AtStake); n > 0 {
		fmt.Fprintf(&b, "  at stake: at least %d committed transactions after it, possibly acknowledged (tid %#x to %#x)\n",
			n, ce.AtStake[0].TID, ce.AtStake[n-1].TID)
	}
	for i, u := range ce.Unread {
		if i == 3 {
			fmt.Fprintf(&b, "  and %s more unread\n", plural(len(ce.Unread)-i, "record"))
			break
		}
		fmt.Fprintf(&b, "  unread: %s\n", u)
	}
	fmt.Fprintf(&b, "  to list them: xlogfs logprint --all --transactions %s\n", dir)
	fmt.Fprintf(&b, "  to cut the log there, losing them: xlogfs check --repair %s", dir)
	return b.String()
}
