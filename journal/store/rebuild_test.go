package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// logRecords writes n records into dir's log from block `from` of cycle 1,
// each holding one committed transaction and carrying uuid, as a mount
// writes them.
func logRecords(t *testing.T, dir string, uuid [16]byte, logbsize int, from uint32, n int) {
	t.Helper()
	logRecordsCov(t, dir, uuid, logbsize, logbuf.CoverWhole, from, n)
}

// logRecordsCov is logRecords under CRC coverage cov.
func logRecordsCov(t *testing.T, dir string, uuid [16]byte, logbsize int, cov logbuf.Coverage, from uint32, n int) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, store.LogName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block, prev := from, from
	for i := range n {
		ic, err := logbuf.NewIclog(logbsize, uuid, cov)
		if err != nil {
			t.Fatal(err)
		}
		sum := cksum.NewSummer(cksum.Batched, cksum.Best())
		ic.Start(1, sum)
		tid := uint32(i + 1)
		ic.AppendOp(tid, logbuf.ClientTransaction, logbuf.FlagStart, nil, false)
		ic.AppendOp(tid, logbuf.ClientTransaction, 0, []byte("a region"), false)
		ic.AppendOp(tid, logbuf.ClientTransaction, logbuf.FlagCommit, nil, false)
		var durable logbuf.LSN // none yet: below every LSN
		if i > 0 {
			durable = logbuf.MakeLSN(1, prev)
		}
		rec := ic.Seal(logbuf.MakeLSN(1, block), logbuf.MakeLSN(1, from), durable, prev, sum)
		if _, err := f.WriteAt(rec, int64(block)*logbuf.BBSize); err != nil {
			t.Fatal(err)
		}
		prev = block
		block += uint32(len(rec) / logbuf.BBSize)
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rebuild(t *testing.T, dir string) *store.SuperblockPlan {
	t.Helper()
	p, err := store.PlanSuperblock(store.OSFS(), dir)
	if err != nil {
		t.Fatalf("PlanSuperblock: %v", err)
	}
	if err := store.RebuildSuperblock(store.OSFS(), dir, p); err != nil {
		t.Fatalf("RebuildSuperblock: %v", err)
	}
	return p
}

// TestRebuildLostSuperblock: a store whose superblock is gone, but whose
// log holds records and whose checkpoint is there, is a store that lost
// its superblock, not a half-built one: ReadSuperblock and mkfs point at
// the rebuild, never at mkfs --force, and the rebuild writes the very
// superblock mkfs wrote, its UUID taken from the log records.
func TestRebuildLostSuperblock(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{LogSize: 2 << 20, LogBSize: 64 << 10})
	path := filepath.Join(dir, store.SuperblockName)
	orig := readBytes(t, path)
	logRecords(t, dir, sb.UUID, sb.LogBSize, 0, 3)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err := store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, dir, "lost its superblock", "3 valid records", fmt.Sprintf("uuid %x", sb.UUID), "'xlogfs check --rebuild-superblock "+dir+"'")
	if strings.Contains(err.Error(), "mkfs") || strings.Contains(err.Error(), "half-built") {
		t.Fatalf("a store that lost its superblock is called half-built or sent to mkfs: %v", err)
	}
	_, err = store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize})
	wantErr(t, err, "lost its superblock", "check --rebuild-superblock", "--force would throw the store away")
	if _, err := os.Stat(filepath.Join(dir, store.CheckpointName)); err != nil {
		t.Fatalf("a refused mkfs removed the checkpoint: %v", err)
	}

	p := rebuild(t, dir)
	if p.Superblock != *sb || p.Records != 3 || p.Problem != "missing" || p.Fresh {
		t.Errorf("plan %+v, want superblock %+v from 3 records", p, *sb)
	}
	if got := readBytes(t, path); !bytes.Equal(got, orig) {
		t.Errorf("the rebuilt superblock differs from the one mkfs wrote")
	}
	if n := names(t, dir); strings.Contains(strings.Join(n, " "), ".tmp") {
		t.Errorf("the rebuild left %q", n)
	}
	if _, err := store.PlanSuperblock(store.OSFS(), dir); !errors.Is(err, store.ErrSuperblockSound) {
		t.Errorf("plan for a store with its superblock: %v, want ErrSuperblockSound", err)
	}
}

// TestRebuildDamagedSuperblock: a superblock that fails its CRC, or lost
// its magic, is rebuilt too, under its lock; one whose CRC verifies but
// that this xlogfs does not take is not.
func TestRebuildDamagedSuperblock(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{})
	path := filepath.Join(dir, store.SuperblockName)
	orig := readBytes(t, path)
	logRecords(t, dir, sb.UUID, sb.LogBSize, 0, 2)
	for _, c := range []struct {
		name string
		off  int
		want string
	}{{"a flipped UUID bit", 20, "CRC mismatch"}, {"a zeroed magic", 0, "no \"XLOGFSSB\" magic"}} {
		bad := bytes.Clone(orig)
		bad[c.off] ^= 0xff
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := store.ReadSuperblock(store.OSFS(), dir)
		wantErr(t, err, c.want, "check --rebuild-superblock "+dir)
		p, err := store.PlanSuperblock(store.OSFS(), dir)
		if err != nil || !strings.Contains(p.Problem, c.want) || p.Superblock != *sb {
			t.Fatalf("%s: plan %+v, %v", c.name, p, err)
		}
		// A process holding the damaged superblock's lock uses the store.
		l, err := store.OSFS().Lock(path, false)
		if err != nil {
			t.Fatal(err)
		}
		var iu *store.InUseError
		if err := store.RebuildSuperblock(store.OSFS(), dir, p); !errors.As(err, &iu) {
			t.Fatalf("%s: rebuild under another's lock: %v, want an InUseError", c.name, err)
		}
		l.Close()
		if err := store.RebuildSuperblock(store.OSFS(), dir, p); err != nil {
			t.Fatal(err)
		}
		if got := readBytes(t, path); !bytes.Equal(got, orig) {
			t.Fatalf("%s: the rebuilt superblock differs from the one mkfs wrote", c.name)
		}
	}

	// Intact, but of another format version: not rebuilt.
	superblockWith(t, dir, func(b []byte) { b[11] = 2 })
	_, err := store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, "format version 2")
	if strings.Contains(err.Error(), "rebuild") {
		t.Errorf("a superblock of another version is offered a rebuild: %v", err)
	}
	_, err = store.PlanSuperblock(store.OSFS(), dir)
	wantErr(t, err, "format version 2", "not rebuilt")
}

// TestRebuildHalfBuilt: what an interrupted mkfs leaves (a zeroed log and
// the first checkpoint, no superblock) holds nothing: it is half-built,
// mkfs --force may make it again, and a rebuild gives it a new UUID.
func TestRebuildHalfBuilt(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{})
	if err := os.Remove(filepath.Join(dir, store.SuperblockName)); err != nil {
		t.Fatal(err)
	}
	_, err := store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, "half-built", "mkfs --force", "check --rebuild-superblock")
	p := rebuild(t, dir)
	if !p.Fresh || p.Records != 0 || p.Superblock.UUID == sb.UUID || p.Superblock.UUID == [16]byte{} ||
		p.Superblock.LogSize != sb.LogSize || p.Superblock.LogBSize != sb.LogBSize {
		t.Errorf("plan %+v for a half-built store of %+v", p, *sb)
	}
	if _, err := store.ReadSuperblock(store.OSFS(), dir); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildRefused: no rebuild without a checkpoint (and no advice to
// mkfs --force a store whose log holds records), with a log of a size mkfs
// never makes, with records of two UUIDs, or in a directory that is no
// store.
func TestRebuildRefused(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{})
	logRecords(t, dir, sb.UUID, sb.LogBSize, 0, 2)
	for _, name := range []string{store.SuperblockName, store.CheckpointName} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, "lost its superblock", "2 valid records", "cannot be rebuilt", "checkpoint: missing")
	if strings.Contains(err.Error(), "mkfs") {
		t.Errorf("a store whose log holds records is sent to mkfs: %v", err)
	}
	_, err = store.PlanSuperblock(store.OSFS(), dir)
	wantErr(t, err, "cannot rebuild the superblock", "checkpoint: missing")

	dir = t.TempDir()
	sb = mkfs(t, dir, store.MkfsOptions{})
	other := sb.UUID
	other[0] ^= 1
	logRecords(t, dir, sb.UUID, sb.LogBSize, 0, 2)
	logRecords(t, dir, other, sb.LogBSize, 100, 1)
	if err := os.Remove(filepath.Join(dir, store.SuperblockName)); err != nil {
		t.Fatal(err)
	}
	_, err = store.PlanSuperblock(store.OSFS(), dir)
	wantErr(t, err, "2 different uuids", fmt.Sprintf("%x (2 records)", sb.UUID), fmt.Sprintf("%x (1 record)", other))
	if err := os.Truncate(filepath.Join(dir, store.LogName), store.MinLogSize+100); err != nil {
		t.Fatal(err)
	}
	_, err = store.PlanSuperblock(store.OSFS(), dir)
	wantErr(t, err, "not a log mkfs makes")

	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = store.PlanSuperblock(store.OSFS(), foreign)
	wantErr(t, err, "not an xlogfs store")
}
