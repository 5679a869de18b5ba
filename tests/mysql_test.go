//go:build mysql

// MariaDB on xlogfs, crashed. Too slow for "make test": "make e2e-mysql"
// installs MariaDB and sysbench and runs it (go test -tags mysql -run MySQL).

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	mysqlCrashRounds = 8
	// The sysbench tables: big enough that InnoDB's page cleaner writes
	// tablespace pages during a round, small enough to load in seconds.
	mysqlTables, mysqlTableSize = 4, 10000
	// Counter commits to see acknowledged before a crash may come, so that
	// every round crashes with the counter client and sysbench both busy.
	mysqlCommitsBeforeCrash = 50
	// Bounds on hangs only; a healthy round takes seconds.
	mysqlStartTimeout = 5 * time.Minute
	mysqlLoadTimeout  = 3 * time.Minute
)

// TestMySQLCrashRecovery runs MariaDB on an xlogfs mount under sysbench
// oltp_write_only while a client commits increments of a counter row, then
// kills the xlogfs daemon with SIGKILL mid-run (mariadbd, its files gone,
// is killed too), clears the dead mount, remounts and starts MariaDB again,
// mysqlCrashRounds times. Each time "xlogfs check" must find the crashed
// store sound, InnoDB's crash recovery must succeed and log no error, CHECK
// TABLE must find every table sound, and the counter must hold at least the
// last value the client saw committed (and at most one more: the increment
// that may have committed unseen). At the end the store must unmount
// cleanly and pass "xlogfs check".
func TestMySQLCrashRecovery(t *testing.T) {
	tools := requireMySQLTools(t)
	store, mnt := newStore(t)
	// Checkpoints every 2 s instead of every 30 s: crashes then fall
	// before, during and after checkpoints, and recovery replays from a
	// checkpoint in the middle of the load.
	m := mountDaemon(t, store, mnt, "--checkpoint-interval", "2s")
	runDir := mysqlRunDir(t)
	datadir := filepath.Join(mnt, "mariadb")
	mysqlInstallDatadir(t, tools, datadir)
	srv := startMySQLServer(t, tools, datadir, runDir, "initial")
	srv.exec(t, "create database sbtest; "+
		"create table sbtest.counter (id int primary key, n bigint not null) engine=InnoDB; "+
		"insert into sbtest.counter values (1, 0)")
	prepare := exec.Command(tools["sysbench"], append(mysqlSysbenchArgs(srv.sock), "prepare")...)
	if out, err := prepare.CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s%s", err, tail(out, 20), srv.errorLogTail())
	}
	// MariaDB 10.11 renames the new .frm of an ALTER (sysbench's CREATE
	// INDEX) over the table's .frm without fsyncing the directory. A crash
	// of the filesystem before anything forces the log past that rename
	// loses it, as a power loss would on XFS, and CHECK TABLE then finds
	// one index more in InnoDB than in the .frm. This test is about
	// committed transactions under a crash, not about that gap in
	// MariaDB's DDL: make the schema durable first, with the directory
	// fsyncs MariaDB omits.
	mysqlSyncDirs(t, datadir)

	for round := 1; round <= mysqlCrashRounds; round++ {
		load := startMySQLLoad(t, tools, srv, filepath.Join(runDir, fmt.Sprintf("sysbench-%d.log", round)))
		counter := startMySQLCounter(t, tools, srv)
		counter.waitCommits(t, mysqlCommitsBeforeCrash, mysqlLoadTimeout)
		load.waitStarted(t, mysqlLoadTimeout)
		// A random moment in the middle of the load, not one in step
		// with the checkpoints or InnoDB's own timers.
		time.Sleep(time.Duration(500+rand.IntN(7500)) * time.Millisecond)

		// The crash: the filesystem dies first, under running I/O; then
		// mariadbd, which cannot go on without its files, before the
		// dead mount is detached (after that, a path under the mount
		// point would reach the directory underneath).
		if err := syscall.Kill(m.pid, syscall.SIGKILL); err != nil {
			t.Fatalf("round %d: kill -9 of the xlogfs daemon %d: %v", round, m.pid, err)
		}
		srv.kill9(t)
		m.kill9(t) // reaps the daemon and detaches the dead mount
		lastSeen, commits := counter.stop()
		load.stop()

		// The crashed store must be sound before the mount recovers it.
		xlogfsLog := mysqlFirstLine(checkStore(t, store, false), "log: ")
		m = m.remount(t)
		srv = startMySQLServer(t, tools, datadir, runDir, fmt.Sprintf("recovery-%d", round))
		innodbRecovery := mysqlFirstLine(srv.errorLog(), "InnoDB: Starting crash recovery")
		if innodbRecovery == "" {
			innodbRecovery = "no InnoDB crash recovery (nothing to redo?)"
		}
		for _, line := range strings.Split(srv.errorLog(), "\n") {
			if strings.Contains(line, "[ERROR]") {
				t.Errorf("round %d: mariadbd's recovery logged an error: %s", round, line)
			}
		}
		srv.checkTables(t, round)
		recovered := srv.queryInt(t, "select n from sbtest.counter where id = 1")
		t.Logf("round %d: %d counter commits seen, last committed value seen %d, recovered %d\n\txlogfs check of the crashed store: %s\n\tmariadbd: %s",
			round, commits, lastSeen, recovered, xlogfsLog, innodbRecovery)
		switch {
		case recovered < lastSeen:
			t.Errorf("round %d: the counter recovered as %d, but the client saw %d committed: a committed transaction was lost", round, recovered, lastSeen)
		case recovered > lastSeen+1:
			t.Errorf("round %d: the counter recovered as %d, more than one above the last committed value seen (%d): only one increment can have committed unseen", round, recovered, lastSeen)
		}
		if t.Failed() {
			return
		}
	}
	srv.shutdown(t)
	m.unmount(t)
	checkStore(t, store, true)
}

// requireMySQLTools returns the paths of mariadbd, mariadb-install-db,
// mariadb, mariadb-admin and sysbench, and fails the test when one is
// missing.
func requireMySQLTools(t testing.TB) map[string]string {
	t.Helper()
	tools := map[string]string{}
	for _, name := range []string{"mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin", "sysbench"} {
		path, err := exec.LookPath(name)
		if err != nil {
			// mariadbd lives in /usr/sbin, which not every PATH has.
			if st, serr := os.Stat(filepath.Join("/usr/sbin", name)); serr == nil && st.Mode()&0o111 != 0 {
				path, err = filepath.Join("/usr/sbin", name), nil
			}
		}
		if err != nil {
			t.Fatalf("%s is missing (%v): `make e2e-mysql` installs it (Debian packages mariadb-server and sysbench)", name, err)
		}
		tools[name] = path
	}
	return tools
}

// mysqlRunDir is a short directory for the server's socket (a unix socket
// path must fit in 108 bytes), pid file and error logs. It is removed when
// the test ends, after every server is gone.
func mysqlRunDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "xlogfs-mysql-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func mysqlInstallDatadir(t testing.TB, tools map[string]string, datadir string) {
	t.Helper()
	out, err := exec.Command(tools["mariadb-install-db"], "--no-defaults", "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db", "--datadir="+datadir).CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-install-db --datadir=%s: %v\n%s", datadir, err, tail(out, 20))
	}
}

// mysqlSyncDirs fsyncs dir and every directory under it.
func mysqlSyncDirs(t testing.TB, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", path, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func mysqlSysbenchArgs(sock string) []string {
	return []string{"oltp_write_only", "--db-driver=mysql", "--mysql-socket=" + sock, "--mysql-user=root",
		"--mysql-db=sbtest", fmt.Sprintf("--tables=%d", mysqlTables), fmt.Sprintf("--table-size=%d", mysqlTableSize),
		"--threads=4"}
}

// mysqlServer is a mariadbd the test started.
type mysqlServer struct {
	tools   map[string]string
	cmd     *exec.Cmd
	sock    string
	errLog  string
	exited  chan struct{} // closed once cmd has been waited for
	exitErr error
}

// startMySQLServer starts mariadbd on datadir, by hand (never the system
// service), with no TCP listener and its socket, pid file and error log
// (mariadbd-<name>.err) in runDir, and waits until it answers. The server is
// killed when the test ends if it is still running, before the mount it
// runs on is undone.
func startMySQLServer(t testing.TB, tools map[string]string, datadir, runDir, name string) *mysqlServer {
	t.Helper()
	s := &mysqlServer{tools: tools, sock: filepath.Join(runDir, "mysqld.sock"),
		errLog: filepath.Join(runDir, "mariadbd-"+name+".err"), exited: make(chan struct{})}
	s.cmd = exec.Command(tools["mariadbd"], "--no-defaults", "--user=root", "--skip-networking",
		"--datadir="+datadir, "--socket="+s.sock, "--pid-file="+filepath.Join(runDir, "mariadbd.pid"),
		"--log-error="+s.errLog)
	// A test binary that dies (^C) takes the server with it instead of
	// leaving it holding the mount.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting mariadbd: %v", err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if s.running() {
			s.cmd.Process.Kill()
			<-s.exited
		}
	})
	deadline := time.Now().Add(mysqlStartTimeout)
	for {
		ping := exec.Command(tools["mariadb-admin"], "--no-defaults", "-S", s.sock, "-u", "root", "--connect-timeout=2", "ping")
		if ping.Run() == nil {
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("mariadbd (%s) exited (%v) before it answered on %s%s", name, s.exitErr, s.sock, s.errorLogTail())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mariadbd (%s) did not answer on %s within %v%s", name, s.sock, mysqlStartTimeout, s.errorLogTail())
		}
	}
}

func (s *mysqlServer) running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// client is the mariadb client on the server's socket, in batch mode
// (tab-separated rows, no column names).
func (s *mysqlServer) client(args ...string) *exec.Cmd {
	return exec.Command(s.tools["mariadb"], append([]string{"--no-defaults", "-S", s.sock, "-u", "root",
		"--batch", "--skip-column-names", "--skip-reconnect"}, args...)...)
}

// exec runs SQL statements and returns their output.
func (s *mysqlServer) exec(t testing.TB, sql string) string {
	t.Helper()
	out, err := s.client("-e", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb -e %q: %v\n%s%s", sql, err, bytes.TrimSpace(out), s.errorLogTail())
	}
	return string(out)
}

func (s *mysqlServer) queryInt(t testing.TB, sql string) int64 {
	t.Helper()
	out := strings.TrimSpace(s.exec(t, sql))
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		t.Fatalf("%s: want one number, got %q", sql, out)
	}
	return n
}

// checkTables runs CHECK TABLE on the sysbench tables and the counter:
// every one must be OK.
func (s *mysqlServer) checkTables(t testing.TB, round int) {
	t.Helper()
	tables := []string{"sbtest.counter"}
	for i := 1; i <= mysqlTables; i++ {
		tables = append(tables, fmt.Sprintf("sbtest.sbtest%d", i))
	}
	// Rows of "table, op, msg_type, msg_text"; a sound table has exactly
	// one, "status OK".
	out := s.exec(t, "check table "+strings.Join(tables, ", "))
	ok := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 4 && f[2] == "status" && f[3] == "OK" {
			ok[f[0]] = true
		} else {
			t.Errorf("round %d: CHECK TABLE: %s", round, line)
		}
	}
	for _, tbl := range tables {
		if !ok[tbl] {
			t.Errorf("round %d: CHECK TABLE did not find %s OK:\n%s", round, tbl, out)
		}
	}
}

// shutdown stops the server in order (mariadb-admin shutdown) and waits for
// it to exit with status 0.
func (s *mysqlServer) shutdown(t testing.TB) {
	t.Helper()
	out, err := exec.Command(s.tools["mariadb-admin"], "--no-defaults", "-S", s.sock, "-u", "root", "shutdown").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-admin shutdown: %v: %s%s", err, bytes.TrimSpace(out), s.errorLogTail())
	}
	select {
	case <-s.exited:
	case <-time.After(mysqlStartTimeout):
		t.Fatalf("mariadbd still running %v after mariadb-admin shutdown%s", mysqlStartTimeout, s.errorLogTail())
	}
	if s.exitErr != nil {
		t.Fatalf("mariadbd exited with %v after mariadb-admin shutdown%s", s.exitErr, s.errorLogTail())
	}
}

// kill9 crashes the server with SIGKILL and waits for it to be gone.
func (s *mysqlServer) kill9(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil && s.running() {
		t.Fatalf("kill -9 of mariadbd: %v", err)
	}
	<-s.exited
}

func (s *mysqlServer) errorLog() string {
	b, _ := os.ReadFile(s.errLog)
	return string(b)
}

// errorLogTail is the end of the server's error log, for messages.
func (s *mysqlServer) errorLogTail() string {
	b, err := os.ReadFile(s.errLog)
	if err != nil {
		return fmt.Sprintf("\n(no mariadbd error log: %v)", err)
	}
	return fmt.Sprintf("\nend of %s:\n%s", s.errLog, tail(b, 20))
}

// mysqlLoad is sysbench oltp_write_only running until stopped.
type mysqlLoad struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func startMySQLLoad(t testing.TB, tools map[string]string, s *mysqlServer, logPath string) *mysqlLoad {
	t.Helper()
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	l := &mysqlLoad{log: logPath, exited: make(chan struct{})}
	// --time=0: until killed (the crash ends it).
	l.cmd = exec.Command(tools["sysbench"], append(mysqlSysbenchArgs(s.sock), "--time=0", "--report-interval=1", "run")...)
	l.cmd.Stdout, l.cmd.Stderr = out, out
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("starting sysbench run: %v", err)
	}
	go func() {
		l.cmd.Wait()
		close(l.exited)
	}()
	t.Cleanup(l.stop)
	return l
}

// waitStarted waits until sysbench's threads run transactions.
func (l *mysqlLoad) waitStarted(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(l.log)
		if bytes.Contains(b, []byte("Threads started!")) {
			return
		}
		select {
		case <-l.exited:
			t.Fatalf("sysbench run exited before its threads started:\n%s", tail(b, 20))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("sysbench run did not start its threads within %v:\n%s", timeout, tail(b, 20))
		}
	}
}

// stop kills sysbench (its server is gone by then, or the test is ending).
func (l *mysqlLoad) stop() {
	l.cmd.Process.Kill()
	<-l.exited
}

// mysqlCounter is one mariadb client process, fed statements on its
// standard input, that commits increments of the counter row one at a time
// in autocommit mode and reads the row back after each.
type mysqlCounter struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr mysqlLockedBuffer // the client's error messages, and ours about its output
	done   chan struct{}     // closed when the client loop has ended

	mu       sync.Mutex
	lastSeen int64 // the newest value seen committed
	commits  int   // increments seen committed
	progress chan struct{}
}

var mysqlCounterValueRE = regexp.MustCompile(`^\d+$`)

func startMySQLCounter(t testing.TB, tools map[string]string, s *mysqlServer) *mysqlCounter {
	t.Helper()
	c := &mysqlCounter{done: make(chan struct{}), progress: make(chan struct{}, 1)}
	// --unbuffered: each result reaches us as soon as its statement is done.
	c.cmd = s.client("--unbuffered", "sbtest")
	c.cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting the mariadb client: %v", err)
	}
	t.Cleanup(func() { c.stop() })
	go func() {
		defer close(c.done)
		lines := bufio.NewScanner(stdout)
		for {
			// The UPDATE has returned, so committed, once the SELECT
			// after it answers; only this client changes the row, so
			// the SELECT sees exactly the value the UPDATE committed.
			if _, err := io.WriteString(c.stdin, "update counter set n = n + 1 where id = 1;\nselect n from counter where id = 1;\n"); err != nil {
				return
			}
			if !lines.Scan() {
				return
			}
			v := lines.Text()
			if !mysqlCounterValueRE.MatchString(v) {
				fmt.Fprintf(&c.stderr, "unexpected output %q\n", v)
				return
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			c.mu.Lock()
			c.lastSeen, c.commits = n, c.commits+1
			c.mu.Unlock()
			select {
			case c.progress <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

// waitCommits waits until at least n increments were seen committed.
func (c *mysqlCounter) waitCommits(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		got := c.commits
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-c.progress:
		case <-c.done:
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Fatalf("the counter client ended after %d commits:\n%s", c.commits, c.stderr.String())
		case <-deadline:
			t.Fatalf("the counter client saw only %d of %d commits in %v", got, n, timeout)
		}
	}
}

// stop ends the client (its server is gone by then) and returns the last
// value it saw committed and how many commits it saw.
func (c *mysqlCounter) stop() (lastSeen int64, commits int) {
	c.stdin.Close()
	c.cmd.Process.Kill()
	<-c.done
	c.cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeen, c.commits
}

// mysqlFirstLine is the first line of text that contains substr, trimmed,
// or "" if none does.
func mysqlFirstLine(text, substr string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, substr) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// mysqlLockedBuffer is a bytes.Buffer that a process's output goroutine and
// the test may use at once.
type mysqlLockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *mysqlLockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *mysqlLockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
