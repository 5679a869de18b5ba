package main

import (
	"fmt"
	"os"

	"github.com/xlogfs/xlogfs/journal"
)

func init() {
	register(command{name: "check", summary: "check a store's superblock, checkpoint and log (--repair cuts a bad log)", run: runCheck})
}

func runCheck(args []string) error {
	fs := newFlags("check", "DIR", `
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

A mounted store is in use, not unsound: check says so and exits 1 without
checking. A store that is locked but no longer mounted (a daemon finishing
its unmount) is waited for, up to --wait.`)
	repair := fs.Bool("repair", false, "cut the log at the first bad record (what follows it is lost)")
	wait := fs.Duration("wait", defaultStoreWait, "how long to wait for a store whose unmount is finishing")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	dir := pos[0]
	rep, err := inspectWaiting(dir, *wait, "check", false)
	if err != nil {
		return err
	}
	sb, ck := rep.Superblock, rep.Checkpoint
	fmt.Printf("superblock: ok (format %d, uuid %x, log %s, logbsize %s, crc %s)\n", sb.Version, sb.UUID, humanSize(sb.LogSize), humanSize(int64(sb.LogBSize)), sb.Coverage)
	fmt.Printf("checkpoint: ok (#%d, tail %v, %d inodes, last tid %#x)\n", ck.Seq, ck.TailLSN, len(ck.Model.Inodes), ck.LastTID)
	fmt.Printf("log: %d valid records from %v to head %v, %s; %d transactions to replay, %d incomplete\n",
		len(rep.Records), ck.TailLSN, rep.Head, logState(rep.Clean, len(rep.Records)), rep.Replayed, rep.Dropped)
	sound := rep.Sound()
	switch {
	case rep.Corrupt != nil:
		fmt.Printf("log: CORRUPT: %v\n", rep.Corrupt)
	case rep.Torn:
		fmt.Printf("log: torn write at LSN %v (offset %d): %v; it may have been in flight (%d record(s) from it on, at most %d in flight), so a mount cuts the log there, dropping %d later in-flight records and %d committed transactions\n",
			rep.Bad.LSN(), rep.Bad.Offset, rep.Bad.Err, rep.InFlight, rep.LogBufs, len(rep.Later), len(rep.AtStake))
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
		fmt.Printf("metadata: ok (%d inodes after replay)\n", len(rep.Model.Inodes))
	}

	if *repair && rep.Bad != nil {
		fmt.Printf("\nrepair: cutting the log at LSN %v (offset %d). Lost with it:\n", rep.Bad.LSN(), rep.Bad.Offset)
		fmt.Printf("  record %v: %v\n", rep.Bad.LSN(), rep.Bad.Err)
		for _, l := range rep.Later {
			fmt.Printf("  record %v (%d ops)\n", l.LSN(), l.Header.NumLogOps)
		}
		fmt.Printf("  %d committed transactions:\n", len(rep.AtStake))
		for _, t := range rep.AtStake {
			fmt.Printf("    %v\n", t)
		}
		if err := journal.Repair(dir, rep); err != nil {
			return fmt.Errorf("repair: %w", err)
		}
		again, err := journal.Inspect(dir)
		if err != nil {
			return err
		}
		fmt.Printf("repair: done; the log now ends at %v with %d records, %d transactions to replay\n", again.Head, len(again.Records), again.Replayed)
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
