package benchwork

import (
	"strings"
	"testing"
)

// TestRequireCommandNamesPackage checks that a missing program is an error
// naming it and the package to install, and that the binary installs
// nothing itself.
func TestRequireCommandNamesPackage(t *testing.T) {
	err := RequireCommand("xlogfs-no-such-tool", "xlogfs-pkg")
	if err == nil {
		t.Fatal("requireCommand of a missing program: nil error")
	}
	for _, want := range []string{"xlogfs-no-such-tool not found", "apt-get install xlogfs-pkg", "make bench"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := RequireCommand("sh", "dash"); err != nil {
		t.Errorf("requireCommand of sh: %v", err)
	}
}
