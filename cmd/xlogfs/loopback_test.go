package main

import (
	"strings"
	"testing"
)

// A --flush-latency out of range is a usage error naming the flag, before
// anything is mounted.
func TestLoopbackFlushLatencyUsage(t *testing.T) {
	dir := t.TempDir()
	for _, lat := range []string{"2s", "-1ms", "soon"} {
		code, _, errs := runCapture(t, "loopback-mount", "--flush-latency", lat, dir, dir)
		if code != 2 || !strings.Contains(errs, "--flush-latency") {
			t.Errorf("loopback-mount --flush-latency %s: exit %d, %q; want 2 naming the flag", lat, code, errs)
		}
	}
}
