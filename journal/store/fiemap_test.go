package store

import (
	"testing"

	"golang.org/x/sys/unix"
)

// journalsData finds a device's mount in the mount table and reads its
// super options: /proc is mounted without data=journal, so no; a device
// mounted nowhere is unknown, which counts as yes.
func TestJournalsData(t *testing.T) {
	var st unix.Stat_t
	if err := unix.Stat("/proc", &st); err != nil {
		t.Fatal(err)
	}
	if journalsData(st.Dev) {
		t.Errorf("/proc (dev %d:%d) reads as mounted data=journal", unix.Major(st.Dev), unix.Minor(st.Dev))
	}
	if nowhere := unix.Mkdev(4095, 1048575); !journalsData(nowhere) {
		t.Errorf("a device mounted nowhere reads as not journalling data; unknown must count as yes")
	}
}
