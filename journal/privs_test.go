package journal

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
)

// TestDropPrivs checks the set-ID rules of privs.go case by case, each
// expectation written from chown(2) and the VFS's rules, not from the code:
// S_ISUID always goes; S_ISGID goes when the group may execute, else only
// for a caller outside the file's group; directories keep both; the file
// capabilities go; and a file with nothing to drop logs nothing. Every
// mode must be the same after a crash and replay, since the change was
// logged as an op.
func TestDropPrivs(t *testing.T) {
	member := func(uint32) bool { return true }
	outsider := func(uint32) bool { return false }
	cases := []struct {
		name   string
		kind   uint32
		mode   uint32
		chown  bool // SetAttr with a new owner; else a write (DropPrivs)
		in     func(uint32) bool
		want   uint32
		logged bool // a transaction is logged for the drop
	}{
		{"write/suid+sgid+gx", meta.ModeReg, 0o6755, false, member, 0o0755, true},
		{"write/suid only", meta.ModeReg, 0o4711, false, member, 0o0711, true},
		{"write/sgid+gx", meta.ModeReg, 0o2750, false, member, 0o0750, true},
		{"write/sgid without gx, caller in group", meta.ModeReg, 0o2644, false, member, 0o2644, false},
		{"write/sgid without gx, caller outside group", meta.ModeReg, 0o2644, false, outsider, 0o0644, true},
		{"write/nothing to drop", meta.ModeReg, 0o0755, false, outsider, 0o0755, false},
		{"write/sticky and perms stay", meta.ModeReg, 0o5777, false, outsider, 0o1777, true},
		{"chown/suid+sgid+gx", meta.ModeReg, 0o6555, true, member, 0o0555, true},
		{"chown/sgid without gx, privileged", meta.ModeReg, 0o2644, true, member, 0o2644, true},
		{"chown/sgid without gx, outsider", meta.ModeReg, 0o2644, true, outsider, 0o0644, true},
		{"chown/directory keeps its bits", meta.ModeDir, 0o2755, true, outsider, 0o2755, true},
		{"chown/fifo loses suid", meta.ModeFIFO, 0o4644, true, outsider, 0o0644, true},
	}
	dir, dev := crashStore(t, 4<<20, 32<<10)
	o := Options{Device: dev}
	fs := mount(t, dir, o)
	inos := map[string]meta.Ino{}
	for i, c := range cases {
		a := must[Attr](t)(fs.Create(meta.RootIno, fmt.Sprint("f", i), c.kind|c.mode, 1000, 1000, 0, ""))
		inos[c.name] = a.Ino
		before := fs.Stats().Transactions
		var err error
		if c.chown {
			_, err = fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetUID | meta.SetGID, UID: 2000, GID: 2000, Kill: KillPriv{Kill: true, InGroup: c.in}})
		} else {
			err = fs.DropPrivs(a.Ino, KillPriv{Kill: true, InGroup: c.in})
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := must[Attr](t)(fs.GetAttr(a.Ino))
		if got.Mode&0o7777 != c.want {
			t.Errorf("%s: mode %#o, want %#o", c.name, got.Mode&0o7777, c.want)
		}
		if logged := fs.Stats().Transactions > before; logged != c.logged {
			t.Errorf("%s: logged a transaction: %v, want %v", c.name, logged, c.logged)
		}
	}
	// Without Kill, nothing is dropped: a chown that the caller did not
	// mark (the kernel computed the mode itself) and a privileged write.
	a := must[Attr](t)(fs.Create(meta.RootIno, "plain", meta.ModeReg|0o6755, 1000, 1000, 0, ""))
	must[Attr](t)(fs.SetAttr(a.Ino, SetAttrIn{Mask: meta.SetUID, UID: 3}))
	check(t, fs.DropPrivs(a.Ino, KillPriv{}))
	if got := must[Attr](t)(fs.GetAttr(a.Ino)); got.Mode&0o7777 != 0o6755 {
		t.Errorf("without Kill: mode %#o, want 0o6755 kept", got.Mode&0o7777)
	}
	// A chmod that comes with the kill (as the kernel never sends, but a
	// caller may) gets the kill applied to the mode it asks for.
	b := must[Attr](t)(fs.Create(meta.RootIno, "chmod", meta.ModeReg|0o644, 1000, 1000, 0, ""))
	must[Attr](t)(fs.SetAttr(b.Ino, SetAttrIn{Mask: meta.SetMode | meta.SetUID, Mode: 0o6711, UID: 5, Kill: KillPriv{Kill: true}}))
	if got := must[Attr](t)(fs.GetAttr(b.Ino)); got.Mode&0o7777 != 0o0711 {
		t.Errorf("chmod 6711 with a chown: mode %#o, want 0o0711", got.Mode&0o7777)
	}

	// File capabilities go with a write, a truncate and a chown, even
	// when there are no set-ID bits to drop.
	var capIno []meta.Ino
	for i, how := range []string{"write", "truncate", "chown"} {
		c := must[Attr](t)(fs.Create(meta.RootIno, fmt.Sprint("cap", i), meta.ModeReg|0o755, 1000, 1000, 0, ""))
		check(t, fs.SetXattr(c.Ino, "security.capability", []byte{1, 2, 3}, 0))
		check(t, fs.SetXattr(c.Ino, "user.kept", []byte("x"), 0))
		k := KillPriv{Kill: true, InGroup: member}
		var err error
		switch how {
		case "write":
			err = fs.DropPrivs(c.Ino, k)
		case "truncate":
			_, err = fs.SetAttr(c.Ino, SetAttrIn{Mask: meta.SetSize, Size: 0, Kill: k})
		case "chown":
			_, err = fs.SetAttr(c.Ino, SetAttrIn{Mask: meta.SetUID, UID: 9, Kill: k})
		}
		check(t, err)
		if _, err := fs.GetXattr(c.Ino, "security.capability"); err != syscall.ENODATA {
			t.Errorf("%s: security.capability after dropping privileges: %v, want ENODATA", how, err)
		}
		if _, err := fs.GetXattr(c.Ino, "user.kept"); err != nil {
			t.Errorf("%s: user.kept: %v, want it kept", how, err)
		}
		capIno = append(capIno, c.Ino)
	}

	// Replay after a crash reaches the same modes: the drops were logged.
	check(t, fs.Sync())
	want := map[meta.Ino]uint32{}
	for _, ino := range inos {
		want[ino] = must[Attr](t)(fs.GetAttr(ino)).Mode
	}
	fs.Abandon()
	fs, _, err := recoverImage(t, dir, dev.Image(), Options{})
	check(t, err)
	defer fs.Close()
	for name, ino := range inos {
		if got := must[Attr](t)(fs.GetAttr(ino)); got.Mode != want[ino] {
			t.Errorf("%s after replay: mode %#o, want %#o", name, got.Mode, want[ino])
		}
	}
	for _, ino := range capIno {
		if _, err := fs.GetXattr(ino, "security.capability"); err != syscall.ENODATA {
			t.Errorf("inode %d: security.capability back after replay: %v", ino, err)
		}
	}
}
