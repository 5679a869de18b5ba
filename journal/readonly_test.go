package journal

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
)

// storeDigest hashes every file of a store, names and bytes, and the
// modification times: what "writes nothing" must leave as it was.
func storeDigest(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h.Write([]byte(rel + "\x00" + info.ModTime().String() + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	check(t, err)
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func readIno(t *testing.T, fs *FS, ino meta.Ino) []byte {
	t.Helper()
	a := must[Attr](t)(fs.GetAttr(ino))
	buf := make([]byte, a.Size)
	n := must[int](t)(fs.Read(ino, buf, 0))
	return buf[:n]
}

// dirtyDataStore leaves a data-journal store whose log holds what its data
// files do not: writes, a shrink and a regrow, a punched hole, never
// checkpointed, and data files empty, as a crash that kept the log but
// none of the data files' unsynced writes leaves it (in data mode a data
// file is synced at checkpoints only). It returns the store and what each
// file must read as.
func dirtyDataStore(t *testing.T) (string, map[string][]byte) {
	dir := mkfs(t, 4<<20, 32<<10)
	fs := mount(t, dir, Options{Journal: JournalData})
	want := map[string][]byte{}
	a := must[Attr](t)(fs.Create(meta.RootIno, "a", meta.ModeReg|0o644, 0, 0, 0, ""))
	must[int](t)(fs.Write(a.Ino, bytes.Repeat([]byte("A"), 10000), 0))
	must[Attr](t)(fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetSize, Size: 3000}))
	must[Attr](t)(fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetSize, Size: 6000}))
	must[int](t)(fs.Write(a.Ino, []byte("tail"), 5000))
	want["a"] = append(append(bytes.Repeat([]byte("A"), 3000), make([]byte, 2000)...), append([]byte("tail"), make([]byte, 996)...)...)
	b := must[Attr](t)(fs.Create(meta.RootIno, "b", meta.ModeReg|0o644, 0, 0, 0, ""))
	must[int](t)(fs.Write(b.Ino, bytes.Repeat([]byte("B"), 8192), 0))
	check(t, fs.Fallocate(b.Ino, meta.FallocPunchHole|meta.FallocKeepSize, 4096, 1024))
	want["b"] = append(append(bytes.Repeat([]byte("B"), 4096), make([]byte, 1024)...), bytes.Repeat([]byte("B"), 3072)...)
	check(t, fs.Fsync(a.Ino, false))
	check(t, fs.Fsync(b.Ino, false))
	fs.Abandon()
	for _, ino := range []meta.Ino{a.Ino, b.Ino} {
		check(t, os.Truncate(filepath.Join(dir, store.DataDirName, fmt.Sprint(ino)), 0))
	}
	return dir, want
}

func lookupIno(t *testing.T, fs *FS, name string) meta.Ino {
	t.Helper()
	return must[Attr](t)(fs.Lookup(meta.RootIno, name)).Ino
}

// TestNoRecoveryWritesNothing: a NoRecovery mount of a dirty store shows
// the files as recovery would (metadata replayed, the logged bytes laid
// over the data files), refuses every change with EROFS, and leaves every
// byte of the store as it was; a normal mount afterwards recovers the same.
func TestNoRecoveryWritesNothing(t *testing.T) {
	dir, want := dirtyDataStore(t)
	before := storeDigest(t, dir)
	fs := mount(t, dir, Options{Journal: JournalData, ReadOnly: true, NoRecovery: true})
	if r := fs.Recovery(); r.Clean || r.Transactions == 0 {
		t.Errorf("recovery %+v: want the dirty log's transactions replayed in memory", r)
	}
	for name, w := range want {
		if got := readIno(t, fs, lookupIno(t, fs, name)); !bytes.Equal(got, w) {
			t.Errorf("%s reads %d bytes %.40q..., want %d bytes %.40q...", name, len(got), got, len(w), w)
		}
	}
	refusesChanges(t, fs, lookupIno(t, fs, "a"))
	if got := fs.MountMode(); got != "ro,norecovery" {
		t.Errorf("MountMode %q", got)
	}
	check(t, fs.Close())
	if storeDigest(t, dir) != before {
		t.Fatal("a NoRecovery mount and unmount changed the store")
	}

	// Recovery proper reads the same.
	fs = mount(t, dir, Options{Journal: JournalData})
	defer fs.Close()
	for name, w := range want {
		if got := readIno(t, fs, lookupIno(t, fs, name)); !bytes.Equal(got, w) {
			t.Errorf("after recovery %s reads %.40q..., want %.40q...", name, got, w)
		}
	}
}

// TestReadOnlyRecoversThenRefuses: a ReadOnly mount recovers a dirty log
// as any mount does, refuses every change, and unmounts with an unmount
// record and nothing else: the next mount finds a clean log.
func TestReadOnlyRecoversThenRefuses(t *testing.T) {
	dir, want := dirtyDataStore(t)
	fs := mount(t, dir, Options{Journal: JournalData, ReadOnly: true})
	for name, w := range want {
		if got := readIno(t, fs, lookupIno(t, fs, name)); !bytes.Equal(got, w) {
			t.Errorf("%s reads %.40q..., want %.40q...", name, got, w)
		}
	}
	refusesChanges(t, fs, lookupIno(t, fs, "a"))
	records := fs.Stats().Records
	check(t, fs.Close())
	rep, err := recovery.Inspect(dir)
	check(t, err)
	if !rep.Clean || len(rep.Records) != 1 || records != 0 {
		t.Errorf("after a read-only mount: clean %v, %d records; %d written while mounted; want the unmount record alone", rep.Clean, len(rep.Records), records)
	}
	if _, err := Open(dir, quietOpts(Options{NoRecovery: true})); !errors.Is(err, errNoRecoveryNeedsReadOnly) {
		t.Errorf("NoRecovery without ReadOnly: %v", err)
	}
}

// refusesChanges checks that every kind of change gets EROFS and changes
// nothing a read can see.
func refusesChanges(t *testing.T, fs *FS, ino meta.Ino) {
	t.Helper()
	content := readIno(t, fs, ino)
	for what, err := range map[string]error{
		"create":     second(fs.Create(meta.RootIno, "new", meta.ModeReg|0o644, 0, 0, 0, "")),
		"mkdir":      second(fs.Create(meta.RootIno, "dir", meta.ModeDir|0o755, 0, 0, 0, "")),
		"write":      second(fs.Write(ino, []byte("x"), 0)),
		"truncate":   second(fs.SetAttr(ino, SetAttrIn{Mask: meta.SetSize, Size: 1})),
		"chmod":      second(fs.SetAttr(ino, SetAttrIn{Mask: meta.SetMode, Mode: meta.ModeReg | 0o600})),
		"fallocate":  fs.Fallocate(ino, 0, 0, 1<<20),
		"link":       second(fs.Link(ino, meta.RootIno, "again")),
		"unlink":     fs.Unlink(meta.RootIno, "a"),
		"rename":     fs.Rename(meta.RootIno, "a", meta.RootIno, "c", 0),
		"setxattr":   fs.SetXattr(ino, "user.x", []byte("y"), 0),
		"tmpfile":    second(fs.CreateTmpfile(meta.RootIno, 0o600, 0, 0)),
		"removexatr": fs.RemoveXattr(ino, "user.x"),
	} {
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s on a read-only mount: %v, want EROFS", what, err)
		}
	}
	if got := readIno(t, fs, ino); !bytes.Equal(got, content) {
		t.Errorf("refused changes changed the file: %.40q, was %.40q", got, content)
	}
	check(t, fs.Fsync(ino, false))
}

func second[T any](_ T, err error) error { return err }
