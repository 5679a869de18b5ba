package cksum

import (
	"testing"

	"github.com/xlogfs/xlogfs/amd64"
)

// The amd64 kernels come first in Impls, in their own order, so Best (and
// Update) is the fastest kernel this CPU can run.
func TestAMD64KernelsFirst(t *testing.T) {
	ks := amd64.Kernels()
	im := Impls()
	if len(im) < len(ks) {
		t.Fatalf("Impls has %d entries, amd64.Kernels %d", len(im), len(ks))
	}
	for i, k := range ks {
		if im[i].Name != k.Name {
			t.Errorf("Impls()[%d] = %q, want amd64 kernel %q", i, im[i].Name, k.Name)
		}
	}
	if len(ks) > 0 && Best().Name != ks[0].Name {
		t.Errorf("Best = %q, want %q", Best().Name, ks[0].Name)
	}
	t.Logf("best: %s (%s)", Best().Name, Best().Desc)
}
