package benchwork

// The mariadb workload: MariaDB's InnoDB on the target's directory, driven by
// sysbench oltp_write_only. Every round gets a fresh datadir and its own
// mariadbd, started by hand (never the system service) with its socket, pid
// file and error log in the run's folder, and shut down with mariadb-admin
// before the filesystem is unmounted.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

// mariadbTools are the programs the workload runs, each with the Debian
// package that brings it (mariadb-server depends on the client tools).
var mariadbTools = []struct{ name, pkg string }{
	{"mariadbd", "mariadb-server"},
	{"mariadb-install-db", "mariadb-server"},
	{"mariadb", "mariadb-server"},
	{"mariadb-admin", "mariadb-server"},
	{"sysbench", "sysbench"},
}

// mariadbSettings are the mariadbd options the workload adds to stock
// settings, on every target alike so that the baselines stay comparable.
// Stock InnoDB is the goal: xlogfs serves O_DIRECT opens (FOPEN_DIRECT_IO),
// fsync and fdatasync, and io_uring works on it (the kernel runs FUSE file
// I/O in io-wq workers), so none is needed.
var mariadbSettings = []string{}

// Timeouts of the MariaDB steps. They only bound a hang: a healthy server
// answers within seconds, and shutdown flushes at most the 128 MiB buffer
// pool.
const (
	mariadbStartTimeout    = 5 * time.Minute
	mariadbShutdownTimeout = 5 * time.Minute
)

// MariadbPrereqs checks that every tool of the mariadb workload is
// installed, and names the packages to install when one is not.
func MariadbPrereqs() error {
	var tools, missing []string
	for _, tool := range mariadbTools {
		if _, err := lookTool(tool.name); err != nil {
			tools = append(tools, tool.name)
			if !slices.Contains(missing, tool.pkg) {
				missing = append(missing, tool.pkg)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return MissingPackages(strings.Join(tools, ", "), missing...)
}

// lookTool finds a program on PATH or in /usr/sbin and /usr/bin: mariadbd
// lives in /usr/sbin, which is not on every PATH.
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH, in /usr/sbin or /usr/bin", name)
}

// maxSocketPath is the longest unix socket path that fits sun_path (108
// bytes with its terminating NUL).
const maxSocketPath = 107

// runMariadb initialises a datadir in dir, starts mariadbd on it, loads the
// sysbench tables, runs oltp_write_only for cfg.Duration and shuts the server
// down. Setup does not count against --time: the run is sysbench's own.
func runMariadb(cfg benchreport.Config, dir string, bar *Progress, interrupted <-chan struct{}) (res Result, err error) {
	// runOne works in OUT/work/<target>-<round>, removed after the run; the
	// logs of the run are kept beside the profiles, as OUT/mariadb-<target>-<round>.
	runDir := filepath.Join(cfg.Out, "mariadb-"+filepath.Base(filepath.Dir(dir)))
	os.RemoveAll(runDir)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return res, err
	}
	sock := filepath.Join(runDir, "mysqld.sock")
	if len(sock) > maxSocketPath {
		tmp, err := os.MkdirTemp("", "xlogfs-mariadb-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
		sock = filepath.Join(tmp, "mysqld.sock")
	}

	var status atomic.Value
	status.Store("initialising the datadir")
	endSetupBar := runProgress(bar, func() string { return status.Load().(string) })
	defer func() {
		if endSetupBar != nil {
			endSetupBar()
		}
	}()

	datadir := filepath.Join(dir, "mariadb")
	if err := installMariadbDatadir(datadir, filepath.Join(runDir, "install-db.log")); err != nil {
		return res, err
	}
	status.Store("starting mariadbd")
	srv, err := startMariadbd(datadir, runDir, sock)
	if err != nil {
		return res, err
	}
	defer func() {
		warning, serr := srv.shutdown()
		if warning != "" {
			res.Warnings = append(res.Warnings, warning)
		}
		if serr != nil && err == nil {
			err = serr
		}
	}()
	if err := srv.waitReady(mariadbStartTimeout, interrupted); err != nil {
		return res, err
	}
	if err := srv.client("create database sbtest"); err != nil {
		return res, err
	}
	status.Store(fmt.Sprintf("sysbench prepare: %d tables × %d rows", cfg.Tables, cfg.TableSize))
	prepare := exec.Command(mustTool("sysbench"), append(sysbenchArgs(cfg, sock), "prepare")...)
	if out, err := runCapturing(prepare, filepath.Join(runDir, "sysbench-prepare.log"), interrupted, nil); err != nil {
		return res, fmt.Errorf("sysbench prepare: %v\n%s%s", err, Tail(out, 15), srv.errorLogTail())
	}
	endSetupBar()
	endSetupBar = nil

	// The bar counts the run alone.
	bar.start = time.Now()
	secs := max(1, int(cfg.Duration.Round(time.Second).Seconds()))
	run := exec.Command(mustTool("sysbench"), append(sysbenchArgs(cfg, sock),
		"--time="+strconv.Itoa(secs), "--report-interval=1", "--percentile=95", "run")...)
	var live atomic.Value
	live.Store("")
	endRunBar := runProgress(bar, func() string { return live.Load().(string) })
	out, err := runCapturing(run, filepath.Join(runDir, "sysbench-run.log"), interrupted, func(line string) {
		if m := sysbenchLiveTPS.FindStringSubmatch(line); m != nil {
			live.Store(m[1] + " tps")
		}
	})
	endRunBar()
	if err != nil {
		return res, fmt.Errorf("sysbench run: %v\n%s%s", err, Tail(out, 15), srv.errorLogTail())
	}
	return parseSysbench(out)
}

// runProgress draws bar with status until the returned function is called;
// that function returns once the bar has stopped drawing, so the caller may
// then change the bar.
func runProgress(bar *Progress, status func() string) (stop func()) {
	stopc, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		bar.run(stopc, status)
		close(stopped)
	}()
	return func() {
		close(stopc)
		<-stopped
	}
}

// mustTool is the path of a tool mariadbPrereqs found; before that, its bare
// name (exec then reports it missing).
func mustTool(name string) string {
	if p, err := lookTool(name); err == nil {
		return p
	}
	return name
}

func sysbenchArgs(cfg benchreport.Config, sock string) []string {
	return []string{"oltp_write_only", "--db-driver=mysql", "--mysql-socket=" + sock, "--mysql-user=root",
		"--mysql-db=sbtest", "--tables=" + strconv.Itoa(cfg.Tables), "--table-size=" + strconv.Itoa(cfg.TableSize),
		"--threads=" + strconv.Itoa(cfg.Clients)}
}

var (
	sysbenchLiveTPS      = regexp.MustCompile(`\btps: ([0-9.]+)`)
	sysbenchTransactions = regexp.MustCompile(`transactions:\s+(\d+)\s+\(([0-9.]+) per sec\.\)`)
	sysbenchP95          = regexp.MustCompile(`95th percentile:\s+([0-9.]+)`)
	sysbenchTotalTime    = regexp.MustCompile(`total time:\s+([0-9.]+)s`)
)

// parseSysbench reads TPS, p95 latency and the run's length from the
// summary sysbench prints at the end of a run.
func parseSysbench(out string) (Result, error) {
	var res Result
	tx, p95, total := sysbenchTransactions.FindStringSubmatch(out), sysbenchP95.FindStringSubmatch(out), sysbenchTotalTime.FindStringSubmatch(out)
	if tx == nil || p95 == nil || total == nil {
		return res, fmt.Errorf("sysbench's summary lacks transactions, 95th percentile or total time:\n%s", Tail(out, 20))
	}
	res.Ops, _ = strconv.ParseInt(tx[1], 10, 64)
	tps, _ := strconv.ParseFloat(tx[2], 64)
	p95ms, _ := strconv.ParseFloat(p95[1], 64)
	res.Seconds, _ = strconv.ParseFloat(total[1], 64)
	if res.Seconds <= 0 {
		return res, fmt.Errorf("sysbench reports a total time of %q", total[1])
	}
	// sysbench counts transactions, not bytes: the workload's MB/s stays 0.
	res.Extra = map[string]float64{"tps": tps, "p95_ms": p95ms}
	res.FsyncsUncounted = "sysbench counts no fsyncs (InnoDB makes them)"
	return res, nil
}

// runCapturing runs cmd, hands each line of its output to onLine (when not
// nil), keeps the output in logPath and returns it. An interrupt kills cmd.
func runCapturing(cmd *exec.Cmd, logPath string, interrupted <-chan struct{}, onLine func(string)) (string, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer logFile.Close()
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	finished := make(chan struct{})
	defer close(finished)
	var wasInterrupted atomic.Bool
	go func() {
		select {
		case <-interrupted:
			wasInterrupted.Store(true)
			cmd.Process.Kill()
		case <-finished:
		}
	}()
	var out bytes.Buffer
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		fmt.Fprintln(logFile, line)
		if onLine != nil {
			onLine(line)
		}
	}
	err = cmd.Wait()
	if wasInterrupted.Load() {
		return out.String(), errors.New("interrupted")
	}
	return out.String(), err
}

// installMariadbDatadir creates a MariaDB datadir with root reachable over
// the socket without a password and no test database.
func installMariadbDatadir(datadir, logPath string) error {
	cmd := exec.Command(mustTool("mariadb-install-db"), "--no-defaults", "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db", "--datadir="+datadir)
	out, err := cmd.CombinedOutput()
	os.WriteFile(logPath, out, 0o644)
	if err != nil {
		return fmt.Errorf("mariadb-install-db --datadir=%s: %v\n%s", datadir, err, Tail(string(out), 20))
	}
	return nil
}

// mariadbServer is a mariadbd the bench started.
type mariadbServer struct {
	cmd          *exec.Cmd
	sock, errLog string
	exited       chan struct{} // closed when cmd has been waited for
	exitErr      error         // cmd.Wait's error, once exited is closed
}

// startMariadbd starts mariadbd on datadir with its pid file and error log in
// runDir and its socket at sock, and no TCP listener.
func startMariadbd(datadir, runDir, sock string) (*mariadbServer, error) {
	s := &mariadbServer{sock: sock, errLog: filepath.Join(runDir, "mariadbd.err"), exited: make(chan struct{})}
	args := append([]string{"--no-defaults", "--user=root", "--skip-networking", "--datadir=" + datadir,
		"--socket=" + sock, "--pid-file=" + filepath.Join(runDir, "mariadbd.pid"), "--log-error=" + s.errLog},
		mariadbSettings...)
	s.cmd = exec.Command(mustTool("mariadbd"), args...)
	out, err := os.Create(filepath.Join(runDir, "mariadbd.out"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	s.cmd.Stdout, s.cmd.Stderr = out, out
	// Its own process group: a ^C at the terminal reaches the bench, which
	// shuts the server down in order. Pdeathsig: a bench that dies leaves no
	// server behind holding the mount.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting mariadbd: %w", err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// waitReady waits until the server answers on its socket.
func (s *mariadbServer) waitReady(timeout time.Duration, interrupted <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for {
		ping := exec.Command(mustTool("mariadb-admin"), "--no-defaults", "-S", s.sock, "-u", "root", "--connect-timeout=2", "ping")
		if ping.Run() == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("mariadbd exited (%v) before it answered on %s%s", s.exitErr, s.sock, s.errorLogTail())
		case <-interrupted:
			return errors.New("interrupted")
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbd did not answer on %s within %v%s", s.sock, timeout, s.errorLogTail())
		}
	}
}

// client runs one statement with the mariadb client.
func (s *mariadbServer) client(sql string) error {
	out, err := exec.Command(mustTool("mariadb"), "--no-defaults", "-S", s.sock, "-u", "root", "-e", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb -e %q: %v\n%s", sql, err, bytes.TrimSpace(out))
	}
	return nil
}

// shutdown stops the server with mariadb-admin shutdown and waits for it to
// exit. A server that will not go is killed: then warning says so.
func (s *mariadbServer) shutdown() (warning string, err error) {
	select {
	case <-s.exited:
		return "", nil // already gone; whoever saw it die reported it
	default:
	}
	admin := exec.Command(mustTool("mariadb-admin"), "--no-defaults", "-S", s.sock, "-u", "root", "--connect-timeout=10", "shutdown")
	if out, aerr := admin.CombinedOutput(); aerr != nil {
		// SIGTERM is mariadbd's other orderly shutdown.
		warning = fmt.Sprintf("mariadb-admin shutdown failed (%v: %s); sent mariadbd SIGTERM", aerr, bytes.TrimSpace(out))
		s.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-s.exited:
	case <-time.After(mariadbShutdownTimeout):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Sprintf("mariadbd did not exit within %v of its shutdown: killed it with SIGKILL%s", mariadbShutdownTimeout, s.errorLogTail()), nil
	}
	if s.exitErr != nil {
		return warning, fmt.Errorf("mariadbd exited with %v after its shutdown%s", s.exitErr, s.errorLogTail())
	}
	return warning, nil
}

// errorLogTail is the end of the server's error log, for messages.
func (s *mariadbServer) errorLogTail() string {
	b, err := os.ReadFile(s.errLog)
	if err != nil {
		return fmt.Sprintf("\n(no mariadbd error log: %v)", err)
	}
	return fmt.Sprintf("\nend of %s:\n%s", s.errLog, Tail(string(b), 15))
}
