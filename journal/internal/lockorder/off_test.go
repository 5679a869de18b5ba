//go:build !lockorder

package lockorder

import "testing"

// TestUncheckedBuild: without the tag the mutexes are plain sync ones, and
// an inversion is not caught (make test-lockorder runs the checked build).
func TestUncheckedBuild(t *testing.T) {
	var ckpt Mutex[Checkpoint]
	var inode Mutex[Inode]
	ckpt.Lock()
	inode.Lock()
	inode.Unlock()
	ckpt.Unlock()
	if Enabled {
		t.Fatal("Enabled in a build without the lockorder tag")
	}
}
