package store_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// someModel is a model with a little of everything.
func someModel(t *testing.T) *meta.Model {
	t.Helper()
	m := meta.NewModel(10)
	for _, op := range []meta.Op{
		{Type: meta.OpCreate, Parent: meta.RootIno, Name: "d", Ino: 2, Mode: meta.ModeDir | 0o755, Ctime: 11},
		{Type: meta.OpCreate, Parent: 2, Name: "f", Ino: 3, Mode: meta.ModeReg | 0o644, UID: 1000, Ctime: 12},
		{Type: meta.OpWrite, Ino: 3, Off: 0, Len: 5000, Ctime: 13},
		{Type: meta.OpSetxattr, Ino: 3, Name: "user.k", Data: []byte("v"), Ctime: 14},
		{Type: meta.OpCreate, Parent: meta.RootIno, Name: "s", Ino: 4, Mode: meta.ModeLink | 0o777, Target: "d/f", Ctime: 15},
		{Type: meta.OpSizeFollows, Ino: 3, Flags: meta.SizeFollowsSet},
	} {
		if err := m.Apply(&op); err != nil {
			t.Fatalf("%s: %v", op.String(), err)
		}
	}
	return m
}

func someCheckpoint(t *testing.T, seq uint64) *store.Checkpoint {
	return &store.Checkpoint{
		Seq: seq, TailLSN: logbuf.MakeLSN(3, 1234), LastTID: 0xfffffffe,
		LogBufs: logbuf.MaxLogBufs, LogBSize: logbuf.MaxLogBSize, Model: someModel(t),
	}
}

func sameCheckpoint(t *testing.T, got, want *store.Checkpoint) {
	t.Helper()
	if got.Seq != want.Seq || got.TailLSN != want.TailLSN || got.LastTID != want.LastTID ||
		got.LogBufs != want.LogBufs || got.LogBSize != want.LogBSize {
		t.Errorf("checkpoint %+v, want %+v", *got, *want)
	}
	if got.Model.Digest() != want.Model.Digest() {
		t.Errorf("checkpoint's model differs")
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	mkfs(t, dir, store.MkfsOptions{})
	want := someCheckpoint(t, 7)
	if err := store.WriteCheckpoint(store.OSFS(), dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := store.ReadCheckpoint(store.OSFS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	sameCheckpoint(t, got, want)
	if f := got.Model.SizeFollows(); len(f) != 1 || f[0] != 3 {
		t.Errorf("SizeFollows marks %v, want [3]", f)
	}
	if _, err := os.Stat(filepath.Join(dir, store.CheckpointName+".tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary checkpoint is left: %v", err)
	}
	// A later one replaces it.
	next := someCheckpoint(t, 8)
	next.Model = meta.NewModel(0)
	if err := store.WriteCheckpoint(store.OSFS(), dir, next); err != nil {
		t.Fatal(err)
	}
	got, err = store.ReadCheckpoint(store.OSFS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	sameCheckpoint(t, got, next)
}

// TestWriteCheckpointFailure fails each step WriteCheckpoint takes: until
// the rename the old checkpoint stays in force; after it, the new one is.
func TestWriteCheckpointFailure(t *testing.T) {
	for _, c := range []struct {
		op, name string
		newOne   bool
	}{
		{"create", store.CheckpointName + ".tmp", false},
		{"write", store.CheckpointName + ".tmp", false},
		{"fsync", store.CheckpointName + ".tmp", false},
		{"rename", store.CheckpointName + ".tmp", false},
		{"syncdir", "", true},
	} {
		dir := t.TempDir()
		old := someCheckpoint(t, 1)
		if err := store.WriteCheckpoint(store.OSFS(), dir, old); err != nil {
			t.Fatal(err)
		}
		ffs := testfs.NewFaultFS(store.OSFS())
		ffs.SetFault(func(fc testfs.FaultCall) syscall.Errno {
			if fc.Op == c.op && (c.name == "" && fc.Name == dir || c.name != "" && filepath.Base(fc.Name) == c.name) {
				return syscall.ENOSPC
			}
			return 0
		})
		next := someCheckpoint(t, 2)
		next.Model = meta.NewModel(99)
		err := store.WriteCheckpoint(ffs, dir, next)
		wantErr(t, err, "writing checkpoint")
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s failing: %v does not wrap ENOSPC", c.op, err)
		}
		got, err := store.ReadCheckpoint(store.OSFS(), dir)
		if err != nil {
			t.Fatalf("%s failing: the checkpoint is lost: %v", c.op, err)
		}
		if c.newOne {
			sameCheckpoint(t, got, next)
		} else {
			sameCheckpoint(t, got, old)
		}
		// The next write, without faults, goes through.
		ffs.SetFault(nil)
		if err := store.WriteCheckpoint(ffs, dir, someCheckpoint(t, 3)); err != nil {
			t.Errorf("%s failed once: the next checkpoint: %v", c.op, err)
		}
	}
}

func TestReadCheckpointMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := store.ReadCheckpoint(store.OSFS(), dir)
	wantErr(t, err, filepath.Join(dir, store.CheckpointName)+": missing; the store is damaged")
}

// sealCheckpoint makes a checkpoint file of payload p with a good header:
// magic, CRC (over the whole file, itself read as zero), length.
func sealCheckpoint(p []byte) []byte {
	b := make([]byte, 20, 20+len(p))
	copy(b, "XLGCKPT1")
	binary.BigEndian.PutUint64(b[12:], uint64(len(p)))
	b = append(b, p...)
	binary.LittleEndian.PutUint32(b[8:], cksum.Checksum(b))
	return b
}

// payload is a checkpoint's payload: its numbers, then the model.
func payload(seq, tail, tid, logbufs, logbsize uint64, model []byte) []byte {
	var p []byte
	for _, v := range []uint64{seq, tail, tid, logbufs, logbsize} {
		p = binary.AppendUvarint(p, v)
	}
	return append(p, model...)
}

func TestDecodeCheckpointCorrupt(t *testing.T) {
	dir := t.TempDir()
	want := someCheckpoint(t, 5)
	if err := store.WriteCheckpoint(store.OSFS(), dir, want); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, store.CheckpointName))
	if err != nil {
		t.Fatal(err)
	}
	model := want.Model.Encode()
	// The format as documented, rebuilt here, is what WriteCheckpoint wrote.
	if sealed := sealCheckpoint(payload(5, uint64(want.TailLSN), uint64(want.LastTID), 8, 256<<10, model)); !bytes.Equal(sealed, good) {
		t.Fatalf("checkpoint file differs from its format:\n%x\n%x", good, sealed)
	}
	const path = "/the/checkpoint"
	ck, err := store.DecodeCheckpoint(good, path)
	if err != nil {
		t.Fatal(err)
	}
	sameCheckpoint(t, ck, want)

	// Every bit is covered: any one flipped is an error, never a panic.
	for i := range len(good) * 8 {
		b := bytes.Clone(good)
		b[i/8] ^= 1 << (i % 8)
		if _, err := store.DecodeCheckpoint(b, path); err == nil {
			t.Fatalf("bit %d of %d flipped: no error", i, len(good)*8)
		}
	}
	// So is every truncation.
	for n := range len(good) {
		_, err := store.DecodeCheckpoint(good[:n], path)
		wantErr(t, err, path+": ")
	}

	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "not an xlogfs checkpoint"},
		{"short header", good[:19], "not an xlogfs checkpoint"},
		{"magic", append([]byte("XLGCKPT2"), good[8:]...), "not an xlogfs checkpoint"},
		{"truncated", good[:len(good)-1], "header says"},
		{"longer", append(bytes.Clone(good), 0), "(truncated?)"},
		{"payload bit", func() []byte { b := bytes.Clone(good); b[25] ^= 4; return b }(), "checkpoint CRC mismatch: stored"},
		{"crc bit", func() []byte { b := bytes.Clone(good); b[9] ^= 4; return b }(), "checkpoint CRC mismatch"},
		// Sound CRC, wrong contents.
		{"no payload", sealCheckpoint(nil), "ends early"},
		{"one iclog", sealCheckpoint(payload(1, 0, 0, 1, 32<<10, model)), "bad log geometry 1 × 32768"},
		{"nine iclogs", sealCheckpoint(payload(1, 0, 0, 9, 32<<10, model)), "bad log geometry 9 × 32768"},
		{"odd iclog size", sealCheckpoint(payload(1, 0, 0, 2, 48<<10, model)), "bad log geometry 2 × 49152"},
		{"tid out of range", sealCheckpoint(payload(1, 0, 1<<32, 2, 32<<10, model)), "out of range"},
		{"no model", sealCheckpoint(payload(1, 0, 0, 2, 32<<10, nil)), "model: "},
		{"model stray bytes", sealCheckpoint(payload(1, 0, 0, 2, 32<<10, append(bytes.Clone(model), 0))), "model: "},
		{"model without root", sealCheckpoint(payload(1, 0, 0, 2, 32<<10, []byte{5, 0})), "model: no root directory"},
	} {
		_, err := store.DecodeCheckpoint(c.b, path)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		wantErr(t, err, path+": ", c.want)
	}

	// ReadCheckpoint names the file it read.
	if err := os.WriteFile(filepath.Join(dir, store.CheckpointName), good[:len(good)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = store.ReadCheckpoint(store.OSFS(), dir)
	wantErr(t, err, filepath.Join(dir, store.CheckpointName)+": ", "truncated?")
}
