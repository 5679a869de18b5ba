package store_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/internal/testfs"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

func mkfs(t *testing.T, dir string, o store.MkfsOptions) *store.Superblock {
	t.Helper()
	if o.LogSize == 0 {
		o.LogSize = store.MinLogSize // the default, 64 MiB, is too slow to zero in a unit test
	}
	sb, err := store.Mkfs(dir, o)
	if err != nil {
		t.Fatalf("Mkfs(%s): %v", dir, err)
	}
	return sb
}

func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not contain %q", err, s)
		}
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	n, err := store.OSFS().ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMkfs(t *testing.T) {
	// Missing, with missing parents; the log size rounded down to 512 bytes.
	dir := filepath.Join(t.TempDir(), "a", "b", "store")
	sb := mkfs(t, dir, store.MkfsOptions{LogSize: store.MinLogSize + 1000})
	if sb.Version != 1 || sb.LogSize != store.MinLogSize+512 || sb.LogBSize != logbuf.MinLogBSize || sb.UUID == [16]byte{} {
		t.Errorf("superblock %+v", *sb)
	}
	got, err := store.ReadSuperblock(store.OSFS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *sb {
		t.Errorf("ReadSuperblock = %+v, Mkfs made %+v", *got, *sb)
	}
	if !store.IsStore(store.OSFS(), dir) {
		t.Error("IsStore false after mkfs")
	}
	want := []string{store.CheckpointName, store.DataDirName, store.LogName, store.SuperblockName}
	if n := names(t, dir); !slices.Equal(n, want) {
		t.Errorf("store holds %q, want %q", n, want)
	}
	if n := names(t, filepath.Join(dir, store.DataDirName)); len(n) != 0 {
		t.Errorf("data/ holds %q", n)
	}
	log, err := os.ReadFile(filepath.Join(dir, store.LogName))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(log)) != sb.LogSize || !bytes.Equal(log, make([]byte, len(log))) {
		t.Errorf("log: %d bytes, zero %v; want %d zeros", len(log), bytes.Equal(log, make([]byte, len(log))), sb.LogSize)
	}
	ck, err := store.ReadCheckpoint(store.OSFS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Seq != 0 || ck.TailLSN != logbuf.MakeLSN(1, 0) || ck.LastTID != 0 || ck.LogBufs != logbuf.MinLogBufs || ck.LogBSize != sb.LogBSize {
		t.Errorf("first checkpoint %+v", *ck)
	}
	m := ck.Model
	if len(m.Inodes) != 1 || m.NextIno != meta.RootIno+1 || !m.Inodes[meta.RootIno].IsDir() || m.Check() != nil {
		t.Errorf("first checkpoint's model: %d inodes, next %d", len(m.Inodes), m.NextIno)
	}

	// Each store has its own UUID.
	other := mkfs(t, t.TempDir(), store.MkfsOptions{})
	if other.UUID == sb.UUID {
		t.Error("two stores with one UUID")
	}
}

// TestMkfsLogBSize checks the iclog size mkfs picks for a log and its
// bounds, and LogFits, which both rest on.
func TestMkfsLogBSize(t *testing.T) {
	for _, c := range []struct {
		logSize  int64
		logbufs  int
		logbsize int
		fits     bool
	}{
		{4 * 3 * 32 << 10, 2, 32 << 10, true},
		{4*3*32<<10 - 1, 2, 32 << 10, false},
		{4 * 9 * 256 << 10, 8, 256 << 10, true},
		{4*9*256<<10 - 512, 8, 256 << 10, false},
		{store.MinLogSize, logbuf.MinLogBufs, 32 << 10, true}, // MinLogSize's promise: two 32 KiB iclogs
		{store.MinLogSize, logbuf.MinLogBufs, 64 << 10, false},
	} {
		if got := store.LogFits(c.logSize, c.logbufs, c.logbsize); got != c.fits {
			t.Errorf("LogFits(%d, %d, %d) = %v, want %v", c.logSize, c.logbufs, c.logbsize, got, c.fits)
		}
	}

	crash := testfs.NewCrashFS()
	for _, c := range []struct {
		logSize int64
		want    int
	}{
		{store.MinLogSize, 32 << 10},
		{1 << 20, 64 << 10},
		{3<<20 - 512, 128 << 10},
		{3 << 20, 256 << 10},
		{8 << 20, 256 << 10}, // no more than the largest
	} {
		sb := mkfs(t, "/s", store.MkfsOptions{LogSize: c.logSize, Store: crash, Force: true})
		if sb.LogBSize != c.want {
			t.Errorf("a %d-byte log: logbsize %d, want %d", c.logSize, sb.LogBSize, c.want)
		}
	}

	// Refused: nothing is made.
	for _, c := range []struct {
		o    store.MkfsOptions
		want string
	}{
		{store.MkfsOptions{LogSize: store.MinLogSize - 512}, "out of range"},
		{store.MkfsOptions{LogSize: store.MaxLogSize + 512}, "out of range"},
		{store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 48 << 10}, "logbsize 49152"},
		{store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 512 << 10}, "logbsize 524288"},
		{store.MkfsOptions{LogSize: store.MinLogSize, LogBSize: 64 << 10}, "a 512 KiB log is too small for 64 KiB log buffers"},
	} {
		dir := filepath.Join(t.TempDir(), "s")
		_, err := store.Mkfs(dir, c.o)
		wantErr(t, err, c.want)
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("refused mkfs (%v) made %s", c.want, dir)
		}
	}
}

func TestMkfsExisting(t *testing.T) {
	dir := t.TempDir()
	sb := mkfs(t, dir, store.MkfsOptions{}) // an empty directory is fine
	daemonLog := filepath.Join(dir, "xlogfs.log")
	if err := os.WriteFile(daemonLog, []byte("messages"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize})
	wantErr(t, err, dir, "already an xlogfs store", "--force")
	if again, err := store.ReadSuperblock(store.OSFS(), dir); err != nil || again.UUID != sb.UUID {
		t.Fatalf("refused mkfs changed the store: %v", err)
	}
	// Force recreates it, keeping the daemon's messages.
	if err := os.WriteFile(filepath.Join(dir, store.DataDirName, "7"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb2 := mkfs(t, dir, store.MkfsOptions{Force: true})
	if sb2.UUID == sb.UUID {
		t.Error("mkfs --force kept the UUID")
	}
	if n := names(t, filepath.Join(dir, store.DataDirName)); len(n) != 0 {
		t.Errorf("mkfs --force kept data files %q", n)
	}
	if b, err := os.ReadFile(daemonLog); err != nil || string(b) != "messages" {
		t.Errorf("mkfs --force lost the daemon's log: %q, %v", b, err)
	}

	// A foreign directory is never touched, with --force or not.
	foreign := t.TempDir()
	mine := filepath.Join(foreign, "precious")
	if err := os.WriteFile(mine, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		_, err := store.Mkfs(foreign, store.MkfsOptions{LogSize: store.MinLogSize, Force: force})
		wantErr(t, err, foreign, "not empty and is not an xlogfs store")
		if n := names(t, foreign); !slices.Equal(n, []string{"precious"}) {
			t.Fatalf("refused mkfs (force %v) left %q", force, n)
		}
	}
	_, err = store.ReadSuperblock(store.OSFS(), foreign)
	wantErr(t, err, foreign, "is not an xlogfs store (no superblock")

	// A store with a superblock that is not one is still a store to
	// mkfs: IsStore asks only that the file exist.
	bad := t.TempDir()
	mkfs(t, bad, store.MkfsOptions{})
	if err := os.WriteFile(filepath.Join(bad, store.SuperblockName), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = store.Mkfs(bad, store.MkfsOptions{LogSize: store.MinLogSize})
	wantErr(t, err, "already an xlogfs store")
	mkfs(t, bad, store.MkfsOptions{Force: true})
	if _, err := store.ReadSuperblock(store.OSFS(), bad); err != nil {
		t.Errorf("after mkfs --force over a damaged superblock: %v", err)
	}
}

func TestMkfsHalfBuilt(t *testing.T) {
	dir := t.TempDir()
	mkfs(t, dir, store.MkfsOptions{})
	// What an mkfs interrupted before its last step leaves: all but the
	// superblock, maybe its temporary too.
	if err := os.Rename(filepath.Join(dir, store.SuperblockName), filepath.Join(dir, store.SuperblockName+".tmp")); err != nil {
		t.Fatal(err)
	}
	if store.IsStore(store.OSFS(), dir) {
		t.Error("IsStore true without a superblock")
	}
	// A daemonized mount's messages may sit beside it.
	if err := os.WriteFile(filepath.Join(dir, "xlogfs.log"), []byte("log"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, dir, "half-built", "mkfs --force")
	_, err = store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize})
	wantErr(t, err, dir, "half-built", "--force")
	mkfs(t, dir, store.MkfsOptions{Force: true})
	if _, err := store.ReadSuperblock(store.OSFS(), dir); err != nil {
		t.Fatalf("after mkfs --force of a half-built store: %v", err)
	}
	if n := names(t, dir); slices.Contains(n, store.SuperblockName+".tmp") {
		t.Errorf("mkfs --force left %q", n)
	}

	// A data directory holding something that is no data file makes
	// the directory foreign.
	if err := os.Remove(filepath.Join(dir, store.SuperblockName)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.DataDirName, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = store.ReadSuperblock(store.OSFS(), dir)
	wantErr(t, err, "is not an xlogfs store")
	_, err = store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, Force: true})
	wantErr(t, err, "not empty and is not an xlogfs store")
	if _, err := os.Stat(filepath.Join(dir, store.DataDirName, "notes.txt")); err != nil {
		t.Errorf("refused mkfs removed a foreign file: %v", err)
	}
}

func TestMkfsSpace(t *testing.T) {
	crash := testfs.NewCrashFS()
	crash.SetCapacity(1 << 20)
	_, err := store.Mkfs("/s", store.MkfsOptions{LogSize: store.MinLogSize, Store: crash})
	wantErr(t, err, "not enough space", "needs 1.5 MiB (the log and 1.0 MiB more)", "1.0 MiB free")
	if _, err := crash.Stat("/s"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mkfs without room made the store's directory: %v", err)
	}

	// Room for one store and a little: recreating it counts the space
	// its old log gives back.
	crash = testfs.NewCrashFS()
	crash.SetCapacity(store.MinLogSize + 1<<20 + 64<<10)
	mkfs(t, "/s", store.MkfsOptions{Store: crash})
	mkfs(t, "/s", store.MkfsOptions{Store: crash, Force: true})
	// But not a larger one.
	_, err = store.Mkfs("/s", store.MkfsOptions{LogSize: 2 * store.MinLogSize, Store: crash, Force: true})
	wantErr(t, err, "not enough space")
	if _, err := store.ReadSuperblock(crash, "/s"); err != nil {
		t.Errorf("a mkfs refused for room damaged the store: %v", err)
	}
}

// TestMkfsFailure fails each step of mkfs in turn: the error says which,
// and what mkfs made is gone again.
func TestMkfsFailure(t *testing.T) {
	for _, c := range []struct {
		op, name string // name "": the store's directory
		want     string
	}{
		{"mkdir", store.DataDirName, "mkfs"},
		{"create", store.LogName, "creating the log"},
		{"write", store.LogName, "creating the log"},
		{"fsync", store.LogName, "creating the log"},
		{"create", store.CheckpointName + ".tmp", "writing checkpoint"},
		{"syncdir", "", "writing checkpoint"},
		{"create", store.SuperblockName + ".tmp", "writing the superblock"},
		{"rename", store.SuperblockName + ".tmp", "writing the superblock"},
	} {
		for _, exists := range []bool{false, true} {
			parent := t.TempDir()
			dir := filepath.Join(parent, "s")
			if exists {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			ffs := testfs.NewFaultFS(store.OSFS())
			// The directory sync that fails is the checkpoint's, once
			// its temporary is renamed into place.
			armed := c.op != "syncdir"
			ffs.SetFault(func(fc testfs.FaultCall) syscall.Errno {
				if fc.Op == "rename" && filepath.Base(fc.Name) == store.CheckpointName+".tmp" {
					armed = true
				}
				if armed && fc.Op == c.op && (c.name == "" && fc.Name == dir || c.name != "" && filepath.Base(fc.Name) == c.name) {
					return syscall.EIO
				}
				return 0
			})
			_, err := store.Mkfs(dir, store.MkfsOptions{LogSize: store.MinLogSize, Store: ffs})
			wantErr(t, err, "mkfs "+dir, c.want)
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("%s %s: error %v does not wrap EIO", c.op, c.name, err)
			}
			if exists {
				if n := names(t, dir); len(n) != 0 {
					t.Errorf("%s %s failed: mkfs left %q in the directory it was given", c.op, c.name, n)
				}
			} else if n := names(t, parent); len(n) != 0 {
				t.Errorf("%s %s failed: mkfs left %q, the directory it made", c.op, c.name, n)
			}
		}
	}
}

// superblockWith rewrites the store's superblock with one field changed,
// its CRC made right again.
func superblockWith(t *testing.T, dir string, edit func(b []byte)) {
	t.Helper()
	path := filepath.Join(dir, store.SuperblockName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(b)
	if len(b) == 512 {
		binary.LittleEndian.PutUint32(b[508:], cksum.Checksum(b[:508]))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadSuperblockCorrupt(t *testing.T) {
	src := t.TempDir()
	mkfs(t, src, store.MkfsOptions{})
	good, err := os.ReadFile(filepath.Join(src, store.SuperblockName))
	if err != nil {
		t.Fatal(err)
	}
	if len(good) != 512 || string(good[:8]) != "XLOGFSSB" {
		t.Fatalf("superblock: %d bytes, magic %q", len(good), good[:8])
	}
	for _, c := range []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"truncated", func(b []byte) []byte { return b[:511] }, "not an xlogfs superblock: 511 bytes, want 512"},
		{"empty", func(b []byte) []byte { return nil }, "not an xlogfs superblock"},
		{"longer", func(b []byte) []byte { return append(b, 0) }, "not an xlogfs superblock: 513 bytes, want 512"},
		{"magic", func(b []byte) []byte { b[0] = 'Y'; return b }, "not an xlogfs superblock"},
		{"flipped bit", func(b []byte) []byte { b[100] ^= 1; return b }, "superblock CRC mismatch"},
		{"crc", func(b []byte) []byte { b[510] ^= 0x80; return b }, "superblock CRC mismatch"},
		{"log size field", func(b []byte) []byte { b[30] ^= 1; return b }, "superblock CRC mismatch"},
	} {
		dir := t.TempDir()
		b := c.edit(bytes.Clone(good))
		if err := os.WriteFile(filepath.Join(dir, store.SuperblockName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := store.ReadSuperblock(store.OSFS(), dir)
		wantErr(t, err, filepath.Join(dir, store.SuperblockName)+": ", c.want)
	}

	// Fields out of range under a good CRC.
	for _, c := range []struct {
		name string
		edit func(b []byte)
		want string
	}{
		{"version", func(b []byte) { binary.BigEndian.PutUint32(b[8:], 2) }, "format version 2, this xlogfs reads 1"},
		{"log size small", func(b []byte) { binary.BigEndian.PutUint64(b[28:], store.MinLogSize-512) }, "bad log size 523776"},
		{"log size odd", func(b []byte) { binary.BigEndian.PutUint64(b[28:], store.MinLogSize+1) }, "bad log size 524289"},
		{"log size huge", func(b []byte) { binary.BigEndian.PutUint64(b[28:], 1<<63) }, "bad log size"},
		{"logbsize", func(b []byte) { binary.BigEndian.PutUint32(b[36:], 40<<10) }, "bad default logbsize 40960"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, store.SuperblockName), bytes.Clone(good), 0o644); err != nil {
			t.Fatal(err)
		}
		superblockWith(t, dir, c.edit)
		_, err := store.ReadSuperblock(store.OSFS(), dir)
		wantErr(t, err, filepath.Join(dir, store.SuperblockName)+": ", c.want)
	}
	// The rewrite itself keeps a good superblock good.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, store.SuperblockName), bytes.Clone(good), 0o644); err != nil {
		t.Fatal(err)
	}
	superblockWith(t, dir, func(b []byte) { binary.BigEndian.PutUint32(b[36:], 64<<10) })
	if sb, err := store.ReadSuperblock(store.OSFS(), dir); err != nil || sb.LogBSize != 64<<10 {
		t.Errorf("re-checksummed superblock: %v, %v", sb, err)
	}

	// A read error is returned as it is.
	_, err = store.ReadSuperblock(store.OSFS(), filepath.Join(src, store.LogName))
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("superblock under a file: %v, want ENOTDIR", err)
	}
}

func TestInUse(t *testing.T) {
	dir := t.TempDir()
	mkfs(t, dir, store.MkfsOptions{})
	if p := store.LockPath(dir); p != filepath.Join(dir, store.SuperblockName) {
		t.Errorf("LockPath = %s", p)
	}
	inUse := func() bool {
		t.Helper()
		b, err := store.InUse(dir)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if inUse() {
		t.Fatal("a fresh store is in use")
	}
	// A mount's lock: exclusive.
	l, err := store.OSFS().Lock(store.LockPath(dir), true)
	if err != nil {
		t.Fatal(err)
	}
	if !inUse() {
		t.Error("not in use while the exclusive lock is held")
	}
	if _, err := store.OSFS().Lock(store.LockPath(dir), false); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("a shared lock beside an exclusive one: %v, want EWOULDBLOCK", err)
	}
	if _, err := store.OSFS().Lock(store.LockPath(dir), true); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("a second exclusive lock: %v, want EWOULDBLOCK", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if inUse() {
		t.Error("still in use after the lock was closed")
	}
	// An inspection's shared lock does not count, and shares.
	s1, err := store.OSFS().Lock(store.LockPath(dir), false)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := store.OSFS().Lock(store.LockPath(dir), false)
	if err != nil {
		t.Fatalf("two shared locks: %v", err)
	}
	s2.Close()
	if inUse() {
		t.Error("in use while only a shared lock is held")
	}
	if _, err := store.OSFS().Lock(store.LockPath(dir), true); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("an exclusive lock beside a shared one: %v, want EWOULDBLOCK", err)
	}
	if _, err := store.InUse(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("InUse of a directory that is no store: %v, want ErrNotExist", err)
	}
}

func TestMkdirAll(t *testing.T) {
	root := t.TempDir()
	ffs := testfs.NewFaultFS(store.OSFS())
	dir := filepath.Join(root, "a", "b", "c")
	made, err := store.MkdirAll(ffs, dir)
	if err != nil || !made {
		t.Fatalf("MkdirAll(%s) = %v, %v", dir, made, err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatalf("%s not made: %v", dir, err)
	}
	if n := ffs.Calls("syncdir"); n != 3 {
		t.Errorf("MkdirAll of 3 directories synced %d parents, want 3", n)
	}
	made, err = store.MkdirAll(ffs, dir)
	if err != nil || made {
		t.Errorf("MkdirAll of an existing directory = %v, %v", made, err)
	}
	made, err = store.MkdirAll(ffs, filepath.Join(root, "a", "b", "d"))
	if err != nil || !made || ffs.Calls("syncdir") != 4 {
		t.Errorf("MkdirAll beside: %v, %v, %d syncs", made, err, ffs.Calls("syncdir"))
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(file, "x")} {
		if _, err := store.MkdirAll(ffs, p); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("MkdirAll(%s): %v, want ENOTDIR", p, err)
		}
	}
	// A failed directory sync is an error.
	ffs.SetFault(func(fc testfs.FaultCall) syscall.Errno {
		if fc.Op == "syncdir" {
			return syscall.EIO
		}
		return 0
	})
	if _, err := store.MkdirAll(ffs, filepath.Join(root, "e")); !errors.Is(err, syscall.EIO) {
		t.Errorf("MkdirAll with the sync failing: %v, want EIO", err)
	}
}

func TestRemoveAll(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "t")
	for _, d := range []string{"t/a/b", "t/c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"t/f", "t/a/g", "t/a/b/h"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(root, "keep")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := store.RemoveAll(store.OSFS(), tree); err != nil {
		t.Fatal(err)
	}
	if n := names(t, root); !slices.Equal(n, []string{"keep"}) {
		t.Errorf("after RemoveAll: %q", n)
	}
	if err := store.RemoveAll(store.OSFS(), tree); err != nil {
		t.Errorf("RemoveAll of a missing name: %v", err)
	}
	if err := store.RemoveAll(store.OSFS(), keep); err != nil {
		t.Fatal(err)
	}
	if n := names(t, root); len(n) != 0 {
		t.Errorf("RemoveAll of a file left %q", n)
	}
	// A failure stops it and is returned.
	if err := os.MkdirAll(filepath.Join(tree, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	ffs := testfs.NewFaultFS(store.OSFS())
	ffs.SetFault(func(fc testfs.FaultCall) syscall.Errno {
		if fc.Op == "remove" {
			return syscall.EACCES
		}
		return 0
	})
	if err := store.RemoveAll(ffs, tree); !errors.Is(err, syscall.EACCES) {
		t.Errorf("RemoveAll with remove failing: %v, want EACCES", err)
	}
}

func TestSameFilesystem(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if !store.SameFilesystem(store.OSFS(), a, b) {
		t.Errorf("%s and %s not on one filesystem", a, b)
	}
	if store.SameFilesystem(store.OSFS(), a, "/proc/self") {
		t.Errorf("%s and /proc on one filesystem", a)
	}
	if store.SameFilesystem(store.OSFS(), a, filepath.Join(a, "missing")) {
		t.Error("a missing name is on a filesystem")
	}
	crash := testfs.NewCrashFS()
	if err := crash.Mkdir("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if !store.SameFilesystem(crash, "/", "/d") {
		t.Error("an in-memory filesystem's names are not on one filesystem")
	}
}

func TestOSFS(t *testing.T) {
	dir := t.TempDir()
	st := store.OSFS()
	for _, n := range []string{"c", "a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := names(t, dir); !slices.Equal(n, []string{"a", "b", "c"}) {
		t.Errorf("ReadDir not sorted: %q", n)
	}
	if b, err := store.ReadFile(st, filepath.Join(dir, "b")); err != nil || string(b) != "bb" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := store.ReadFile(st, filepath.Join(dir, "z")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
	f, err := st.OpenFile(filepath.Join(dir, "a"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := store.FileFd(f); !ok {
		t.Error("an OSFS file has no fd")
	}
	if err := f.Sync(); err != nil {
		t.Error(err)
	}
	if err := f.Datasync(); err != nil {
		t.Error(err)
	}
	if n, err := f.Size(); err != nil || n != 2 {
		t.Errorf("Size = %d, %v", n, err)
	}
	if fs, err := f.Stat(); err != nil || fs.Size != 2 || fs.Mtime == 0 || fs.Ctime == 0 {
		t.Errorf("Stat = %+v, %v", fs, err)
	}
	if err := st.SyncDir(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SyncDir of a missing directory: %v", err)
	}
	sp, err := st.Statfs(dir)
	if err != nil || sp.Bsize == 0 || sp.Blocks == 0 || sp.Avail() != int64(sp.Bavail)*int64(sp.Bsize) {
		t.Errorf("Statfs = %+v, %v", sp, err)
	}
	if _, err := st.Statfs(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Statfs of a missing name: %v", err)
	}

	crash := testfs.NewCrashFS()
	cf, err := crash.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	if _, ok := store.FileFd(cf); ok {
		t.Error("an in-memory file has an fd")
	}
}
