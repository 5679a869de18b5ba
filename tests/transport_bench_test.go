package tests

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkGetxattrRoundTrip measures one FUSE round trip per transport,
// and over go-fuse's loopback filesystem (xlogfs loopback-mount, what the
// bench's loopback baseline runs): getxattr of a missing name on a file
// (ENODATA, which the kernel never caches), caller and daemon unpinned.
// It reports the mean (ns/op) and the p50 and p99 of the individual calls.
//
//	go test -run '^$' -bench GetxattrRoundTrip -benchtime 20000x ./tests
func BenchmarkGetxattrRoundTrip(b *testing.B) {
	for _, tr := range []string{"classic", "uring", "loopback"} {
		b.Run(tr, func(b *testing.B) {
			if tr == "uring" {
				if why := uringUnavailable(); why != "" {
					b.Skipf("FUSE over io_uring cannot be had here: %s", why)
				}
			}
			store, mnt := newStore(b)
			if tr == "loopback" {
				mountLoopback(b, store, mnt)
			} else {
				mountDaemon(b, store, mnt, "--transport="+tr)
			}
			f := filepath.Join(mnt, "f")
			if err := unix.Mknod(f, unix.S_IFREG|0o644, 0); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 64)
			for range 1000 { // warm up: the inode and the daemon's paths
				unix.Getxattr(f, "user.none", buf)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				_, err := unix.Getxattr(f, "user.none", buf)
				lat = append(lat, time.Since(t0))
				if err != unix.ENODATA {
					b.Fatalf("getxattr: %v, want ENODATA", err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
		})
	}
}

// mountLoopback serves dir at mnt with "xlogfs loopback-mount" until the
// benchmark ends.
func mountLoopback(b *testing.B, dir, mnt string) {
	b.Helper()
	cmd := exec.Command(xlogfsBin, "loopback-mount", "--handle-killpriv-v2", dir, mnt)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	b.Cleanup(func() {
		exec.Command("fusermount3", "-u", "-z", mnt).Run()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for !isMounted(mnt) {
		select {
		case <-done:
			b.Fatalf("xlogfs loopback-mount exited (%v) before mounting", cmd.ProcessState)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
