package profiling_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/profiling"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func TestServe(t *testing.T) {
	// Something registered on http.DefaultServeMux must not be served.
	http.HandleFunc("GET /debug/pprof/default-mux-only", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "leaked")
	})

	s, err := profiling.Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.HasSuffix(s.Addr(), ":0") || !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Errorf("Addr() = %q, want 127.0.0.1 and the port chosen", s.Addr())
	}
	base := "http://" + s.Addr()
	if s.URL() != base+"/debug/pprof/" {
		t.Errorf("URL() = %q", s.URL())
	}

	for path, want := range map[string]string{
		"/debug/pprof/":                  "goroutine",
		"/debug/pprof/cmdline":           "profiling.test",
		"/debug/pprof/heap?debug=1":      "heap profile",
		"/debug/pprof/goroutine?debug=1": "goroutine profile",
		"/debug/pprof/symbol":            "num_symbols",
	} {
		code, body := get(t, base+path)
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, body without %q:\n%.300s", path, code, want, body)
		}
	}

	code, body := get(t, base+"/debug/vars")
	var vars map[string]json.RawMessage
	if code != http.StatusOK || json.Unmarshal([]byte(body), &vars) != nil || vars["memstats"] == nil || vars["cmdline"] == nil {
		t.Errorf("GET /debug/vars: %d, not expvar's JSON:\n%.300s", code, body)
	}

	if code, body := get(t, base+"/debug/pprof/default-mux-only"); strings.Contains(body, "leaked") {
		t.Errorf("GET of a DefaultServeMux handler: %d %q, want it not served", code, body)
	}
	if code, _ := get(t, base+"/"); code != http.StatusNotFound {
		t.Errorf("GET /: %d, want 404", code)
	}

	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Get(base + "/debug/pprof/"); err == nil {
		t.Error("still serving after Close")
	}
}

func TestServeLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "127.3.2.1:0", "localhost:0", "[::1]:0"} {
		s, err := profiling.Serve(addr, false)
		if err != nil {
			if addr == "[::1]:0" && strings.Contains(err.Error(), "cannot assign") {
				t.Logf("%s: %v (no IPv6 here)", addr, err)
				continue
			}
			t.Errorf("Serve(%q): %v", addr, err)
			continue
		}
		s.Close()
	}
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0", "localhost.example.com:0"} {
		s, err := profiling.Serve(addr, false)
		if err == nil {
			s.Close()
			t.Errorf("Serve(%q, false) succeeded on a non-loopback address", addr)
			continue
		}
		if !strings.Contains(err.Error(), profiling.AnyAddrFlag) || !strings.Contains(err.Error(), addr) {
			t.Errorf("Serve(%q): %v; want the address and %s named", addr, err, profiling.AnyAddrFlag)
		}
	}
	for _, addr := range []string{"", "127.0.0.1", "::1", "localhost"} {
		if s, err := profiling.Serve(addr, false); err == nil {
			s.Close()
			t.Errorf("Serve(%q) succeeded without a port", addr)
		} else if !strings.Contains(err.Error(), "host:port") {
			t.Errorf("Serve(%q): %v; want it to say host:port", addr, err)
		}
	}
}

func TestServeAnyAddr(t *testing.T) {
	s, err := profiling.Serve(":0", true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port := s.Addr()[strings.LastIndex(s.Addr(), ":"):]
	if code, _ := get(t, "http://127.0.0.1"+port+"/debug/pprof/"); code != http.StatusOK {
		t.Errorf("GET /debug/pprof/ on all interfaces: %d", code)
	}
}

func TestServePortInUse(t *testing.T) {
	s, err := profiling.Serve("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s2, err := profiling.Serve(s.Addr(), false); err == nil {
		s2.Close()
		t.Errorf("Serve on %s twice succeeded", s.Addr())
	} else if !strings.Contains(err.Error(), s.Addr()) || !strings.Contains(err.Error(), "in use") || strings.HasPrefix(err.Error(), "profiling") {
		t.Errorf("port in use: %v; want the address named and \"in use\" said, without a package name", err)
	}
}
