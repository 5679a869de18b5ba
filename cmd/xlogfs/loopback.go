package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/profiling"
)

func init() {
	register(command{name: "loopback-mount", summary: "mount go-fuse's loopback filesystem over a directory (the bench's baseline)", run: runLoopback})
}

// runLoopback serves go-fuse's own loopback filesystem, configured as its
// example does (1 s attribute and entry timeouts), so the bench can run a
// workload through FUSE without xlogfs's journal: the baseline that
// separates what FUSE costs from what xlogfs adds or saves.
func runLoopback(args []string) (err error) {
	flags := newFlags("loopback-mount", "DIR MOUNTPOINT", `
Serves DIR at MOUNTPOINT through go-fuse's loopback filesystem, in the
foreground, until unmounted (fusermount3 -u, SIGINT or SIGTERM). xlogfs bench
uses it as the FUSE baseline it compares xlogfs against.`)
	cpuprofile := flags.String("cpuprofile", "", "write a CPU profile of the mount's life to this file")
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
	server, err := fs.Mount(pos[1], root, &fs.Options{
		AttrTimeout: &sec, EntryTimeout: &sec,
		MountOptions: fuse.MountOptions{Name: "loopback", FsName: pos[0], Options: []string{"default_permissions"}},
	})
	if err != nil {
		return fmt.Errorf("mounting at %s: %w", pos[1], err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		unmountOrDetach(server.Unmount, pos[1], func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
	}()
	rep.done(nil, os.DevNull, "none")
	server.Wait()
	return nil
}
