package profiling

import (
	"errors"
	"expvar"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"syscall"
	"time"
)

// AnyAddrFlag is the command-line flag that lets Serve listen on an address
// other than loopback. Errors name it so the user knows the way out.
const AnyAddrFlag = "--pprof-any-addr"

// Server serves the pprof and expvar handlers. Close stops it.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error // Serve's result, once it returns
}

// CheckAddr checks a pprof listen address without listening: host:port,
// with a loopback host (an IP in 127.0.0.0/8, ::1, or "localhost") unless
// allowAny is set. Profiles expose memory contents and cost CPU to
// produce, so they are not served to the network by mistake. An empty
// host (":6060") means every interface and is refused like any other
// non-loopback address.
func CheckAddr(addr string, allowAny bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port, such as 127.0.0.1:6060", addr)
	}
	if !allowAny && !isLoopbackHost(host) {
		return fmt.Errorf("%s is not a loopback address (127.0.0.0/8, ::1, localhost); profiles expose memory contents, so serving them to the network needs %s", addr, AnyAddrFlag)
	}
	return nil
}

// Listen checks addr (CheckAddr) and listens on it; port 0 picks a free
// port.
func Listen(addr string, allowAny bool) (net.Listener, error) {
	if err := CheckAddr(addr, allowAny); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var se *os.SyscallError
		if errors.As(err, &se) && errors.Is(se.Err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s is in use by another program: %w", addr, se.Err)
		}
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	// "localhost" is a name: make sure it resolved to where it should.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !allowAny && (!ok || !tcp.IP.IsLoopback()) {
		ln.Close()
		return nil, fmt.Errorf("%s listens on %s, which is not loopback; serving profiles to the network needs %s", addr, ln.Addr(), AnyAddrFlag)
	}
	return ln, nil
}

// Serve listens on addr (see Listen) and serves net/http/pprof under
// /debug/pprof/ and expvar under /debug/vars.
//
// The handlers are registered on a ServeMux of the Server's own, so nothing
// else in the process can add to what is exposed through
// http.DefaultServeMux (which importing net/http/pprof and expvar fills, and
// which this Server never serves).
func Serve(addr string, allowAny bool) (*Server, error) {
	ln, err := Listen(addr, allowAny)
	if err != nil {
		return nil, err
	}
	s := &Server{
		ln: ln,
		srv: &http.Server{
			Handler:           newMux(),
			ReadHeaderTimeout: 10 * time.Second,
			// No WriteTimeout: /debug/pprof/profile?seconds=N answers after N s.
		},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// newMux returns a ServeMux with the pprof and expvar handlers.
func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	// pprof.Index also serves every named profile (heap, goroutine, ...)
	// below /debug/pprof/.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	return mux
}

// isLoopbackHost reports whether host, the host part of a listen address,
// is loopback: "localhost" or a loopback IP (127.0.0.0/8, ::1). Other names
// are not resolved here; Serve checks the address it actually listens on.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr is the address the Server listens on, with the port chosen if the
// address given to Serve had port 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the base URL of the pprof index, for messages to the user.
func (s *Server) URL() string { return "http://" + s.Addr() + "/debug/pprof/" }

// Close stops the Server at once, closing its listener and any open
// connections (a profile being written is cut short), and waits for it to
// stop. It returns the error that stopped the Server, if any other than
// being closed.
func (s *Server) Close() error {
	err := s.srv.Close()
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	s.done <- http.ErrServerClosed // so a second Close does not block
	return err
}
