package datafile

import (
	"errors"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
)

// TestPassthroughLearnsTheKernelsWrites: an open for writing in
// passthrough marks the inode (a forced OpSizeFollows) before it returns
// the data file; what the kernel then appends to the data file is learned
// as a write record up to its end, and the release learns the rest.
func TestPassthroughLearnsTheKernelsWrites(t *testing.T) {
	f, e, ino := setup(t, nil, Config{})
	f.State(ino).Opens.Add(1) // the engine's count of the open
	file, err := f.OpenPassthrough(ino, true, false)
	if err != nil || file == nil {
		t.Fatalf("OpenPassthrough = %v, %v", file, err)
	}
	if a, _ := e.Inode(ino); !a.SizeFollows {
		t.Fatal("an open for writing in passthrough did not mark the inode")
	}
	if mark := f.State(ino).MarkLSN(); mark == 0 || e.forced < mark {
		t.Fatalf("the mark (LSN %v) was not forced before the open returned (forced to %v)", mark, e.forced)
	}
	if _, err := file.WriteAt([]byte("kernel wrote this"), 0); err != nil { // the kernel's write, behind the journal's back
		t.Fatal(err)
	}
	if !f.Live() {
		t.Fatal("a data file open for writing in passthrough is not listed as possibly changed")
	}
	if err := f.LearnIfStale(ino); err != nil {
		t.Fatal(err)
	}
	last := e.ops[len(e.ops)-1]
	if last.Type != meta.OpWrite || last.Off != 0 || last.Len != 17 || last.Data != nil {
		t.Fatalf("learning committed %s, want a write record of bytes 0-17 without data", last.String())
	}
	if a, _ := e.Inode(ino); a.Size != 17 {
		t.Fatalf("the model's size is %d after learning, want 17", a.Size)
	}
	if _, err := file.WriteAt([]byte("+more"), 17); err != nil {
		t.Fatal(err)
	}
	if err := f.ReleasePassthrough(ino, true, true); err != nil {
		t.Fatal(err)
	}
	if a, _ := e.Inode(ino); a.Size != 22 {
		t.Fatalf("the release did not learn the last append: size %d, want 22", a.Size)
	}
	if f.Live() {
		t.Fatal("no writer is left, yet the data file is still listed as possibly changed")
	}
	if n := f.State(ino).Opens.Load(); n != 0 {
		t.Fatalf("the release left %d opens counted", n)
	}
	if _, err := f.OpenPassthrough(meta.RootIno, false, false); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("passthrough open of a directory: %v, want EISDIR", err)
	}
}

// TestPassthroughOpensAreOfOneKind: while an open goes through the daemon
// (a synchronous one prefers to), a second open does too, since the kernel
// wants all opens of an inode of one kind; and data-journal mode hands out
// no data file at all.
func TestPassthroughOpensAreOfOneKind(t *testing.T) {
	f, _, ino := setup(t, nil, Config{})
	st := f.State(ino)
	st.Opens.Add(2)
	if file, err := f.OpenPassthrough(ino, true, true); err != nil || file != nil {
		t.Fatalf("a synchronous open with no passthrough open: %v, %v; want it through the daemon (nil file)", file, err)
	}
	if file, err := f.OpenPassthrough(ino, false, false); err != nil || file != nil {
		t.Fatalf("an open beside one through the daemon: %v, %v; want it through the daemon too", file, err)
	}
	fd, _, _ := setup(t, nil, Config{LogData: true})
	if _, err := fd.OpenPassthrough(ino, false, false); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("passthrough in data-journal mode: %v, want EINVAL", err)
	}
}
