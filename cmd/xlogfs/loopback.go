package main

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/profiling"
)

func init() {
	register(command{name: "loopback-mount", summary: "mount go-fuse's loopback filesystem over a directory (the bench's baseline)", run: runLoopback})
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
// filesystem to use). --stats FILE writes, at unmount, the requests it
// served by opcode and whether passthrough was on, in .stats's format.
func runLoopback(args []string) (err error) {
	flags := newFlags("loopback-mount", "DIR MOUNTPOINT", `
Serves DIR at MOUNTPOINT through go-fuse's loopback filesystem, in the
foreground, until unmounted (fusermount3 -u, SIGINT or SIGTERM). xlogfs bench
uses it as the FUSE baseline it compares xlogfs against, with
--handle-killpriv-v2 (the best loopback: no GETXATTR before each write).`)
	cpuprofile := flags.String("cpuprofile", "", "write a CPU profile of the mount's life to this file")
	killpriv := flags.Bool("handle-killpriv-v2", false, "negotiate FUSE HANDLE_KILLPRIV_V2 (no security.capability query before every write; set-ID bits are then not cleared on write)")
	statsFile := flags.String("stats", "", "at unmount, write the FUSE requests served (fuse_<OPCODE> N) and passthrough on|off to this file")
	pos, err := parse(flags, args, 2, 2)
	if err != nil {
		return err
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
		reqs.WriteTo(&b)
		if err := os.WriteFile(*statsFile, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
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
