package testfs

import (
	"errors"
	"os"
	"testing"

	"github.com/xlogfs/xlogfs/journal/store"
)

// ReadFile returns name's bytes as st reads them (a CrashFS, a crash
// image, a FaultFS), and false if name does not exist; any other error
// fails the test.
func ReadFile(t testing.TB, st store.StoreFS, name string) ([]byte, bool) {
	t.Helper()
	b, err := store.ReadFile(st, name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b, true
}
