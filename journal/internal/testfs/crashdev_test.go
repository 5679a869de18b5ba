package testfs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func fill(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

func mustWriteDev(t *testing.T, d *CrashDevice, p []byte, off int64) {
	t.Helper()
	if n, err := d.WriteAt(p, off); err != nil || n != len(p) {
		t.Fatalf("WriteAt(%d bytes at %d) = %d, %v", len(p), off, n, err)
	}
}

func TestCrashDeviceCopiesImage(t *testing.T) {
	img := fill('a', 1024)
	d := NewCrashDevice(img)
	img[0] = 'X'
	if got := d.Image(); !bytes.Equal(got, fill('a', 1024)) {
		t.Fatalf("the device shares the caller's image: byte 0 is %q", got[0])
	}
	if d.Size() != 1024 {
		t.Fatalf("Size = %d, want 1024", d.Size())
	}
}

// The writer reads its own writes, later ones over earlier ones, before any
// Sync; Sync keeps the same bytes and empties the pending list.
func TestCrashDeviceReadsPendingWrites(t *testing.T) {
	d := NewCrashDevice(fill('o', 2048))
	mustWriteDev(t, d, fill('1', 1024), 256)
	mustWriteDev(t, d, fill('2', 512), 1024)
	want := join(fill('o', 256), fill('1', 768), fill('2', 512), fill('o', 512))
	if d.Pending() != 2 {
		t.Fatalf("Pending = %d, want 2", d.Pending())
	}
	p := make([]byte, 1000)
	if n, err := d.ReadAt(p, 600); err != nil || n != len(p) {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if !bytes.Equal(p, want[600:1600]) {
		t.Fatalf("ReadAt(600) does not show the pending writes in issue order")
	}
	if !bytes.Equal(d.Image(), want) {
		t.Fatal("Image does not show the pending writes in issue order")
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if d.Pending() != 0 {
		t.Fatalf("Pending after Sync = %d", d.Pending())
	}
	if !bytes.Equal(d.Image(), want) {
		t.Fatal("Sync changed what the writer reads")
	}
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 20 {
		if img := d.CrashImage(r); !bytes.Equal(img, want) {
			t.Fatalf("crash %d after Sync lost synced writes", i)
		}
	}
}

func join(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestCrashDeviceBounds(t *testing.T) {
	d := NewCrashDevice(make([]byte, 1024))
	for _, c := range []struct {
		off int64
		n   int
	}{{-1, 1}, {1024, 1}, {1000, 25}} {
		if _, err := d.WriteAt(make([]byte, c.n), c.off); err == nil {
			t.Errorf("WriteAt(%d bytes at %d) on a 1024-byte device succeeded", c.n, c.off)
		}
		if _, err := d.ReadAt(make([]byte, c.n), c.off); err == nil {
			t.Errorf("ReadAt(%d bytes at %d) on a 1024-byte device succeeded", c.n, c.off)
		}
	}
	if d.Pending() != 0 {
		t.Fatalf("failed writes left %d pending", d.Pending())
	}
	mustWriteDev(t, d, fill('x', 24), 1000) // the last bytes are fine
}

// After Crash every write and sync fails, and changes nothing: the crash
// image is what it was at the crash.
func TestCrashDeviceCrash(t *testing.T) {
	d := NewCrashDevice(fill('o', 1024))
	mustWriteDev(t, d, fill('n', 512), 0)
	d.Crash()
	if _, err := d.WriteAt(fill('z', 512), 512); !errors.Is(err, ErrCrashed) {
		t.Fatalf("WriteAt after Crash: %v, want ErrCrashed", err)
	}
	if err := d.Sync(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Sync after Crash: %v, want ErrCrashed", err)
	}
	if d.Pending() != 1 {
		t.Fatalf("Pending after Crash = %d, want the 1 write before it", d.Pending())
	}
	if got := d.CrashImage(rand.New(rand.NewPCG(3, 3))); !bytes.Equal(got[512:], fill('o', 512)) {
		t.Fatal("a write refused after Crash reached the crash image")
	}
	// The failed Sync made nothing durable: some crash loses the write.
	r := rand.New(rand.NewPCG(2, 2))
	lost := false
	for range 50 {
		if bytes.Equal(d.CrashImage(r), fill('o', 1024)) {
			lost = true
		}
	}
	if !lost {
		t.Fatal("a Sync refused after Crash made the pending write durable")
	}
}

// devStates lists every image the doc allows: each pending write, in issue
// order, with each 512-byte block of it (counted from the write's start)
// old or new; keeping every block is the write kept whole, none is lost.
func devStates(durable []byte, writes []pendingWrite) map[string]bool {
	states := map[string]bool{}
	var walk func(i int, img []byte)
	walk = func(i int, img []byte) {
		if i == len(writes) {
			states[string(img)] = true
			return
		}
		w := writes[i]
		nb := (len(w.data) + 511) / 512
		for mask := 0; mask < 1<<nb; mask++ {
			next := bytes.Clone(img)
			for b := range nb {
				if mask&(1<<b) != 0 {
					lo, hi := b*512, min((b+1)*512, len(w.data))
					copy(next[w.off+int64(lo):], w.data[lo:hi])
				}
			}
			walk(i+1, next)
		}
	}
	walk(0, durable)
	return states
}

// Every crash image is one the doc allows (whole, lost, or torn at the
// write's 512-byte blocks, later writes over earlier), and over many
// crashes all of them occur, the extremes included.
func TestCrashDeviceCrashImages(t *testing.T) {
	durable := fill('o', 4096)
	d := NewCrashDevice(durable)
	// The second write is not block-aligned and overlaps the first: its
	// blocks start at 768, not at a multiple of 512.
	writes := []pendingWrite{
		{off: 512, data: fill('1', 1024)},
		{off: 768, data: fill('2', 1000)},
	}
	for _, w := range writes {
		mustWriteDev(t, d, w.data, w.off)
	}
	allowed := devStates(durable, writes)
	live := d.Image()
	if !allowed[string(live)] || !allowed[string(durable)] {
		t.Fatal("the oracle misses an extreme") // a check of the test itself
	}
	seen := map[string]bool{}
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 2000 {
		img := d.CrashImage(r)
		if !allowed[string(img)] {
			t.Fatalf("crash %d: an image no power cut could leave: %s", i, describe(img))
		}
		seen[string(img)] = true
	}
	if !seen[string(durable)] {
		t.Error("no crash lost every pending write")
	}
	if !seen[string(live)] {
		t.Error("no crash kept every pending write")
	}
	if len(seen) != len(allowed) {
		t.Errorf("crashes left %d of the %d allowed images", len(seen), len(allowed))
	}
	if !bytes.Equal(d.Image(), live) || d.Pending() != 2 {
		t.Fatal("CrashImage changed the live device")
	}
}

// describe shows an image as runs of one byte.
func describe(b []byte) string {
	var s strings.Builder
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] == b[i] {
			j++
		}
		fmt.Fprintf(&s, "%q×%d@%d ", b[i], j-i, i)
		i = j
	}
	return s.String()
}
