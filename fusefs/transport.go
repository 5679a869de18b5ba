package fusefs

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/xlogfs/xlogfs/fusefs/uring"
)

// How the kernel's FUSE requests reach the daemon. Classic: read(2) and
// write(2) on /dev/fuse, go-fuse's server. Uring: FUSE over io_uring
// (package uring), one ring per CPU; INIT, FORGET, INTERRUPT and the
// notifications still go over /dev/fuse through go-fuse's server, as the
// kernel wants, and both reach the same RawFileSystem (the fs bridge with
// this package's wrappers), so the filesystem cannot tell them apart.

// Transport is the FUSE transport a mount asks for.
type Transport uint8

const (
	// TransportClassic serves every request over /dev/fuse.
	TransportClassic Transport = iota
	// TransportUring serves requests over io_uring, and fails the mount
	// when the kernel cannot.
	TransportUring
	// TransportAuto is uring where the kernel and privileges allow it
	// (root, a kernel with FUSE over io_uring), classic elsewhere.
	TransportAuto
)

func (t Transport) String() string {
	return [...]string{"classic", "uring", "auto"}[t]
}

// ParseTransport accepts classic, uring and auto.
func ParseTransport(s string) (Transport, error) {
	switch s {
	case "classic":
		return TransportClassic, nil
	case "uring":
		return TransportUring, nil
	case "auto":
		return TransportAuto, nil
	}
	return 0, fmt.Errorf("unknown transport %q (want classic, uring or auto)", s)
}

// Server is a mount's FUSE server: go-fuse's, plus the rings when the
// mount uses io_uring.
type Server struct {
	*fuse.Server
	mountpoint string
	rings      *uring.Transport // nil: classic
}

// Unmount unmounts the filesystem. A uring mount was made by mount(2)
// here (go-fuse knows only its descriptor), so it is undone by umount(2).
func (s *Server) Unmount() error {
	if s.rings == nil {
		return s.Server.Unmount()
	}
	if err := syscall.Unmount(s.mountpoint, 0); err != nil && err != syscall.EINVAL {
		return fmt.Errorf("umount %s: %w", s.mountpoint, err)
	}
	return nil
}

// Wait waits until the filesystem is unmounted and every request answered.
func (s *Server) Wait() {
	s.Server.Wait()
	if s.rings != nil {
		s.rings.Wait()
	}
}

// Transport is the transport the mount serves requests with.
func (s *Server) Transport() Transport {
	if s.rings != nil {
		return TransportUring
	}
	return TransportClassic
}

// uringPossible says why a mount cannot use io_uring, nil when it can;
// when root, it turns the fuse module's enable_uring on first, saying so.
func uringPossible(logf func(string, ...any)) error {
	if os.Geteuid() != 0 {
		return errors.New("FUSE over io_uring needs root here: the mount is made with mount(2) on a /dev/fuse descriptor of our own")
	}
	changed, err := uring.Enable()
	if err != nil {
		return err
	}
	if changed {
		logf("FUSE over io_uring: set %s to Y (it was off)", uring.ParamPath)
	}
	return nil
}

// mountURing mounts with mount(2) on a /dev/fuse descriptor of ours,
// starts go-fuse's server on that descriptor (it answers INIT, offering
// FUSE_OVER_IO_URING), then registers the rings. It returns the server
// and rings, not yet serving /dev/fuse.
func mountURing(raw fuse.RawFileSystem, mountpoint string, mo *fuse.MountOptions) (*fuse.Server, *uring.Transport, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(mountpoint, &st); err != nil {
		return nil, nil, err
	}
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/fuse: %w", err)
	}
	data := []string{
		fmt.Sprintf("fd=%d", fd),
		fmt.Sprintf("rootmode=%o", st.Mode&syscall.S_IFMT),
		fmt.Sprintf("user_id=%d", os.Geteuid()),
		fmt.Sprintf("group_id=%d", os.Getegid()),
		fmt.Sprintf("max_read=%d", mo.MaxWrite),
	}
	var flags uintptr = syscall.MS_NOSUID | syscall.MS_NODEV
	for _, o := range mo.Options {
		if o == "ro" {
			flags |= syscall.MS_RDONLY
			continue
		}
		data = append(data, o)
	}
	if mo.AllowOther {
		data = append(data, "allow_other")
	}
	src := mo.FsName
	if src == "" {
		src = mo.Name
	}
	if err := syscall.Mount(src, mountpoint, "fuse."+mo.Name, flags, strings.Join(data, ",")); err != nil {
		syscall.Close(fd)
		return nil, nil, fmt.Errorf("mount(2) %s: %w", mountpoint, err)
	}
	undo := func() { syscall.Unmount(mountpoint, syscall.MNT_DETACH) }
	o := *mo
	o.ExtraCapabilities |= fuse.CAP_OVER_IO_URING
	// go-fuse's /dev/fd/N: the descriptor of a mount made elsewhere;
	// the server owns fd from here on.
	server, err := fuse.NewServer(raw, fmt.Sprintf("/dev/fd/%d", fd), &o)
	if err != nil {
		undo()
		return nil, nil, err
	}
	if server.KernelSettings().Flags64()&fuse.CAP_OVER_IO_URING == 0 {
		undo()
		go server.Serve()
		server.Wait()
		return nil, nil, errors.New("the kernel did not offer FUSE_OVER_IO_URING at INIT")
	}
	rings, err := uring.Start(fd, raw, &o, server.KernelSettings(), mayWait)
	if err != nil {
		undo()
		go server.Serve()
		server.Wait()
		return nil, nil, err
	}
	return server, rings, nil
}
