package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/profiling"
)

func init() {
	register(command{name: "loopback-mount", summary: "mount go-fuse's loopback filesystem over a directory (the bench's baseline)", args: "DIR MOUNTPOINT", min: 2, max: 2, setup: runLoopback})
}

// runLoopback serves go-fuse's own loopback filesystem, configured as its
// example does (1 s attribute and entry timeouts), so the bench can run a
// workload through FUSE without xlogfs's journal: the baseline that
// separates what FUSE costs from what xlogfs adds or saves. As root it opens
// files in kernel passthrough (go-fuse's loopback files are
// FilePassthroughFders). --handle-killpriv-v2 lets it negotiate
// HANDLE_KILLPRIV_V2 as xlogfs does, which spares the GETXATTR of
// security.capability the kernel otherwise sends before every write (the
// loopback then clears no set-ID bits on write: a baseline, not a
// filesystem to use). --flush-latency D makes every FSYNC and FSYNCDIR it
// serves take at least D, as xlogfs mount --flush-latency makes its log
// flushes and data-file syncs: the real fsync(2), then a wait for what is
// left of D (datafile.FlushLatency: counted, and an overrun counted where
// the real one took longer). --stats FILE writes, at unmount, the requests
// it served by opcode, whether passthrough was on and the emulated
// flushes (flush_latency_ns, flushes_emulated, flush_overruns), in .stats's
// format.
func runLoopback(flags *flagSet) func(pos []string) error {
	flags.about = `
Serves DIR at MOUNTPOINT through go-fuse's loopback filesystem, in the
foreground, until unmounted (fusermount3 -u, SIGINT or SIGTERM). xlogfs bench
uses it as the FUSE baseline it compares xlogfs against, with
--handle-killpriv-v2 (the best loopback: no GETXATTR before each write), and
with --flush-latency D as the bench's emulated device: every fsync(2) and
fsync of a directory it serves makes the real fsync, then waits until D has
passed since it began, as xlogfs mount --flush-latency does for its log
flushes and data-file syncs.`
	cpuprofile := flags.String("cpuprofile", "", "write a CPU profile of the mount's life to this file")
	killpriv := flags.Bool("handle-killpriv-v2", false, "negotiate FUSE HANDLE_KILLPRIV_V2 (no security.capability query before every write; set-ID bits are then not cleared on write)")
	statsFile := flags.String("stats", "", "at unmount, write the FUSE requests served (fuse_<OPCODE> N), passthrough on|off and the emulated flushes to this file")
	flushLat := flags.Duration("flush-latency", 0, "measuring aid: make every FSYNC and FSYNCDIR served take at least this long (e.g. 200us; the real fsync, then a wait), emulating a device of that latency")
	return func(pos []string) (err error) {
		if *flushLat < 0 || *flushLat > time.Second {
			return flags.usagef("--flush-latency %v: want 0 (off) to 1s", *flushLat)
		}
		rep := newReporter()
		defer func() {
			if rep.ready != nil {
				rep.done(err, os.DevNull, "none")
			}
		}()
		if *cpuprofile != "" {
			stop, err := profiling.StartCPUProfile(*cpuprofile)
			if err != nil {
				return err
			}
			defer stop()
		}
		root, err := fs.NewLoopbackRoot(pos[0])
		if err != nil {
			return err
		}
		var lat *datafile.FlushLatency
		if *flushLat > 0 {
			lat = &datafile.FlushLatency{D: *flushLat}
			if root, err = flushLatencyRoot(root, lat); err != nil {
				return err
			}
		}
		sec := time.Second
		opts := &fs.Options{
			AttrTimeout: &sec, EntryTimeout: &sec,
			MountOptions: fuse.MountOptions{Name: "loopback", FsName: pos[0], Options: []string{"default_permissions"}},
		}
		if *killpriv {
			opts.MountOptions.ExtraCapabilities = fuse.CAP_HANDLE_KILLPRIV_V2
		}
		// fs.Mount, with the requests counted.
		reqs := fusefs.CountRequests(fs.NewNodeFS(root, opts))
		server, err := fuse.NewServer(reqs, pos[1], &opts.MountOptions)
		if err != nil {
			return fmt.Errorf("mounting at %s: %w", pos[1], err)
		}
		go server.Serve()
		if err := server.WaitMount(); err != nil {
			return fmt.Errorf("mounting at %s: %w", pos[1], err)
		}
		pt := loopbackPassthrough(server, pos[0])
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			<-sigs
			unmountOrDetach(server.Unmount, pos[1], func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
		}()
		rep.done(nil, os.DevNull, "none")
		server.Wait()
		if *statsFile != "" {
			var b bytes.Buffer
			fmt.Fprintf(&b, "passthrough %s\n", map[bool]string{true: "on", false: "off"}[pt])
			var flushes, overruns uint64
			if lat != nil {
				flushes, overruns = lat.Flushes.Load(), lat.Overruns.Load()
			}
			fmt.Fprintf(&b, "flush_latency_ns %d\nflushes_emulated %d\nflush_overruns %d\n", int64(*flushLat), flushes, overruns)
			reqs.WriteTo(&b)
			if err := os.WriteFile(*statsFile, b.Bytes(), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

// loopbackPassthrough reports whether go-fuse's loopback can open files in
// passthrough: the kernel offers it and a trial backing file (a file made
// in DIR for the purpose, and removed) registers.
func loopbackPassthrough(server *fuse.Server, dir string) bool {
	if server.KernelSettings().Flags64()&fuse.CAP_PASSTHROUGH == 0 {
		return false
	}
	f, err := os.CreateTemp(dir, ".loopback-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(f.Name())
	defer f.Close()
	id, errno := server.RegisterBackingFd(&fuse.BackingMap{Fd: int32(f.Fd())})
	if errno != 0 {
		return false
	}
	server.UnregisterBackingFd(id)
	return true
}

// flushLatencyRoot wraps go-fuse's loopback root (and through WrapChild
// every node below it) so that each FSYNC and FSYNCDIR takes at least
// lat.D: go-fuse's own fsync of the file or directory, then lat's wait.
func flushLatencyRoot(root fs.InodeEmbedder, lat *datafile.FlushLatency) (fs.InodeEmbedder, error) {
	ln, ok := root.(*fs.LoopbackNode)
	if !ok {
		return nil, fmt.Errorf("--flush-latency: go-fuse's loopback root is a %T, not the *fs.LoopbackNode it can wrap", root)
	}
	n := &flushNode{LoopbackNode: ln, lat: lat}
	ln.RootData.RootNode = n
	return n, nil
}

// flushNode is a loopback node whose fsyncs take the emulated latency.
type flushNode struct {
	*fs.LoopbackNode
	lat *datafile.FlushLatency
}

var (
	_ fs.NodeWrapChilder    = (*flushNode)(nil)
	_ fs.NodeFsyncer        = (*flushNode)(nil)
	_ fs.NodeOpendirHandler = (*flushNode)(nil)
	_ fs.FileFsyncdirer     = (*flushDir)(nil)
	_ fs.FileReaddirenter   = (*flushDir)(nil)
	_ fs.FileReleasedirer   = (*flushDir)(nil)
	_ fs.FileSeekdirer      = (*flushDir)(nil)
	_ fs.FileIoctler        = (*flushDir)(nil)
	_ fs.NodeOpendirHandler = (*fs.LoopbackNode)(nil)
	_ fs.FileFsyncer        = (*fs.LoopbackFile)(nil)
)

// WrapChild makes every node the loopback creates under n a flushNode.
func (n *flushNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if ln, ok := ops.(*fs.LoopbackNode); ok {
		return &flushNode{LoopbackNode: ln, lat: n.lat}
	}
	return ops
}

// Fsync serves FSYNC (the bridge asks the node before the file handle):
// the loopback file's own fsync, then the wait.
func (n *flushNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	fsy, ok := f.(fs.FileFsyncer)
	if !ok {
		return syscall.ENOTSUP // as the bridge answers a handle without Fsync
	}
	start := n.lat.Start()
	errno := fsy.Fsync(ctx, flags)
	n.lat.Wait(start)
	return errno
}

// loopbackDir is what go-fuse's loopback directory handle does.
type loopbackDir interface {
	fs.FileReaddirenter
	fs.FileReleasedirer
	fs.FileSeekdirer
	fs.FileFsyncdirer
}

// OpendirHandle opens the loopback's directory handle and wraps it, so
// that its FSYNCDIR (asked of the handle before the node) takes the wait.
// A handle that cannot be wrapped would serve FSYNCDIR without it: that
// fails the open rather than emulate some flushes and not others.
func (n *flushNode) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return fh, fuseFlags, errno
	}
	d, ok := fh.(loopbackDir)
	if !ok {
		if r, ok := fh.(fs.FileReleasedirer); ok {
			r.Releasedir(ctx, 0)
		}
		fmt.Fprintf(os.Stderr, "xlogfs loopback-mount: --flush-latency: go-fuse's directory handle %T has no Fsyncdir to wrap\n", fh)
		return nil, 0, syscall.EIO
	}
	return &flushDir{loopbackDir: d, lat: n.lat}, fuseFlags, 0
}

// flushDir is a loopback directory handle whose FSYNCDIR takes the
// emulated latency.
type flushDir struct {
	loopbackDir
	lat *datafile.FlushLatency
}

func (d *flushDir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	start := d.lat.Start()
	errno := d.loopbackDir.Fsyncdir(ctx, flags)
	d.lat.Wait(start)
	return errno
}

// Ioctl passes a directory's ioctl on as go-fuse's handle would take it.
func (d *flushDir) Ioctl(ctx context.Context, cmd uint32, arg uint64, input []byte, output []byte) (int32, syscall.Errno) {
	if io, ok := d.loopbackDir.(fs.FileIoctler); ok {
		return io.Ioctl(ctx, cmd, arg, input, output)
	}
	return 0, syscall.ENOTSUP
}
