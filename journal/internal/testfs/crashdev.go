package testfs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
)

// ErrCrashed is returned by a CrashDevice after Crash.
var ErrCrashed = errors.New("device crashed")

// CrashDevice is an in-memory log device that models a disk with a
// volatile write cache: it keeps the durable image (as of the last Sync)
// and every write since. A crash keeps an arbitrary subset of those writes,
// and of each kept write, each 512-byte block independently old or new —
// a torn write.
type CrashDevice struct {
	mu      sync.Mutex
	durable []byte
	pending []pendingWrite
	crashed bool
	writes  int
	syncs   int
}

type pendingWrite struct {
	off  int64
	data []byte
}

// NewCrashDevice returns a device holding image (copied).
func NewCrashDevice(image []byte) *CrashDevice {
	return &CrashDevice{durable: append([]byte(nil), image...)}
}

// ReadAt reads the device as the writer sees it: durable image plus pending writes.
func (d *CrashDevice) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off+int64(len(p)) > int64(len(d.durable)) {
		return 0, fmt.Errorf("crashdev: read of %d at %d past the end (%d)", len(p), off, len(d.durable))
	}
	copy(p, d.durable[off:])
	for _, w := range d.pending {
		overlay(p, off, w)
	}
	return len(p), nil
}

// overlay copies the part of w that falls in p (which starts at off).
func overlay(p []byte, off int64, w pendingWrite) {
	lo, hi := max(off, w.off), min(off+int64(len(p)), w.off+int64(len(w.data)))
	if lo < hi {
		copy(p[lo-off:hi-off], w.data[lo-w.off:hi-w.off])
	}
}

func (d *CrashDevice) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.crashed {
		return 0, ErrCrashed
	}
	if off < 0 || off+int64(len(p)) > int64(len(d.durable)) {
		return 0, fmt.Errorf("crashdev: write of %d at %d past the end (%d)", len(p), off, len(d.durable))
	}
	d.pending = append(d.pending, pendingWrite{off: off, data: append([]byte(nil), p...)})
	d.writes++
	return len(p), nil
}

func (d *CrashDevice) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.crashed {
		return ErrCrashed
	}
	for _, w := range d.pending {
		copy(d.durable[w.off:], w.data)
	}
	d.pending = nil
	d.syncs++
	return nil
}

func (d *CrashDevice) Size() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return int64(len(d.durable))
}

func (d *CrashDevice) Close() error { return nil }

// Pending is the number of writes since the last Sync.
func (d *CrashDevice) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}

// Crash stops the device: every later write or sync fails.
func (d *CrashDevice) Crash() {
	d.mu.Lock()
	d.crashed = true
	d.mu.Unlock()
}

// CrashImage returns what the disk could hold if power failed now: the
// durable image with each pending write kept whole, dropped, or torn (each
// 512-byte block of it old or new), chosen by r. Writes are applied in
// issue order, so an overlapping later write wins where both are kept.
func (d *CrashDevice) CrashImage(r *rand.Rand) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	img := append([]byte(nil), d.durable...)
	for _, w := range d.pending {
		switch r.IntN(3) {
		case 0: // lost
		case 1: // whole
			copy(img[w.off:], w.data)
		case 2: // torn: each block independently
			for b := 0; b < len(w.data); b += 512 {
				if r.IntN(2) == 0 {
					copy(img[w.off+int64(b):], w.data[b:min(b+512, len(w.data))])
				}
			}
		}
	}
	return img
}

// Image returns the device's contents as the writer sees them.
func (d *CrashDevice) Image() []byte {
	img := make([]byte, d.Size())
	d.ReadAt(img, 0)
	return img
}
