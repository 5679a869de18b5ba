package main

import (
	"bufio"
	"errors"
	"expvar"
	"fmt"
	"io"
	"log/syslog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/fusefs"
	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
	"github.com/xlogfs/xlogfs/profiling"
	"golang.org/x/sys/unix"
)

func init() {
	register(command{name: "mount", summary: "mount a store (an empty directory is made one first)", args: "DIR MOUNTPOINT", min: 2, max: 2, setup: runMount})
}

const mountAbout = `
Mounts the xlogfs store DIR at MOUNTPOINT. An empty (or missing) DIR is made a
store first, as "xlogfs mkfs DIR" would. Mounting recovers the log: committed
transactions are replayed, a torn tail is cut with a warning, corruption is
refused.

Without --foreground the command returns once the mount answers, leaving the
daemon running; its later messages go to DIR/xlogfs.log (see --log) and to
syslog (see --syslog), since the log file may sit on a full disk.
Unmount with "xlogfs umount MOUNTPOINT", which returns once the daemon has
written its unmount record; "fusermount3 -u MOUNTPOINT" and SIGINT/SIGTERM to
the daemon unmount too, but return before the daemon is done.

A journal that must stop (its log cannot be written; or the log is full and
the checkpoint that would free it fails, e.g. for lack of space) says so on
stderr, in syslog, and in "xlogfs stats" (state failed: <reason>). Reads go
on; every change gets EIO. While only checkpoints fail and the log has room
the state is "degraded" and changes go on, so that removing files can give
the space back: a removed file's data file goes as soon as its removal is
durable (at once while degraded, else by the next log force, within 5 s),
checkpoint or not. An unmount with no room for its checkpoint still ends the
log with the unmount record (the next mount replays the log), and a store on
a full disk mounts degraded while its log has room. With the log full too, a
read-write mount is refused, saying how many bytes to free in the filesystem
under DIR; --ro mounts it meanwhile.

A mount point must be an empty directory (--nonempty mounts over files,
hiding them) and not already a FUSE mount. What can be checked cheaply is
checked before the store is made or its log recovered: the mount point, the
store directory, --log's and --cpuprofile's directories, and that the
--pprof port is free and loopback (unless --pprof-any-addr).

--ro mounts read-only, as XFS's -o ro: the log is recovered as usual, then
every change gets EROFS; unmounting writes the unmount record alone. On a
filesystem too full to finish recovery, the log is replayed in memory only,
as with --norecovery, and nothing more is written. With
--norecovery too (-o ro,norecovery) the log is replayed in memory only and
nothing is written to the store, not even at unmount or DIR/xlogfs.log (the
daemon's messages go to syslog, or to --log): for looking at a store, or a
copy of one, exactly as it is (a store on a read-only filesystem mounts
too).

A regular file whose data file (DIR/data/<inode>) lacks bytes the store had
made durable, deleted or cut outside xlogfs, is corruption: the mount
refuses, naming each such inode, a path of it and its data file ("xlogfs
check" lists them too). --allow-missing-data mounts anyway: those files
fail reads and writes with EIO, never reading as zeros, until truncated to
0 or removed, and their data files are left as they are, so the next mount
without the flag refuses again. --ro --norecovery is refused alike.

Measuring aids: --flush-latency D makes every log flush and data-file sync
take exactly D (the real flush, then a wait for the rest of D; a flush
slower than D by itself is counted as an overrun in .stats), so that fsync
latency is steady and what the CPU adds to it shows; on a tmpfs store it is
exact. --cpuprofile-rate raises the profile's sampling rate.`

// readyFD is the descriptor a daemon reports readiness on; its parent
// passes a pipe there and waits.
const readyEnv = "XLOGFS_READY_FD"

// defaultImmediateWrite is --immediate-write's default: writes up to 64 KiB
// through the daemon are logged with their bytes (ZFS logs up to 32 KiB
// so, zfs_immediate_write_sz; dbench's and a database's synchronous
// writes are at most 64 KiB).
const defaultImmediateWrite = 64 << 10

type mountFlags struct {
	mode                     *enumFlag[cksum.Mode]
	journalMode              *enumFlag[journal.JournalMode]
	impl                     *enumFlag[cksum.Impl]
	logbsize                 *sizeFlag
	logbufs                  int
	pprof, cpuprofile, log   string
	pprofAny, allowOther, fg bool
	debug, directIO          bool
	nonempty, ro, norecovery bool
	allowMissingData         bool
	ckptInterval, timeout    time.Duration
	logForce                 time.Duration
	flushLatency             time.Duration
	profileRate              int
	syslog                   string
	passthrough              *enumFlag[fusefs.PassthroughMode]
	transport                *enumFlag[fusefs.Transport]
	immediate                *sizeFlag
	immediateSet             bool
	syncWrites               *enumFlag[datafile.SyncWrites]
	logItems                 *enumFlag[journal.LogItems]
}

func runMount(fs *flagSet) func(pos []string) error {
	fs.about = mountAbout
	var f mountFlags
	f.mode = enumVar(fs, "cksum-mode", "batched", cksumModes, cksum.ParseMode, "how log records are checksummed: batched (one call per record), xfs (one call per covered region: on a store made with mkfs --crc xfs exactly xlog_cksum's calls, under whole coverage one per header block and one for the payload; per-chunk is another name for it), sector (one per 512 bytes) or inline (as ops are copied into the log)")
	f.journalMode = enumVar(fs, "journal", "meta", []string{"meta", "data"}, journal.ParseJournalMode, "what the log carries: meta (metadata, like XFS) or data (written bytes too)")
	f.logItems = enumVar(fs, "log-items", "xfs", []string{"xfs", "logical"}, journal.ParseLogItems, "what each transaction logs beside its logical op: xfs (the inode cores, dirty buffer chunks and extent frees XFS would log for it, so records are the size XFS's are) or logical (the op alone, the compact log); a store mounts with either, whichever wrote its log")
	f.logbsize = &sizeFlag{}
	fs.Var(f.logbsize, "logbsize", "iclog size, 32k to 256k, a power of two (default: the store's, set at mkfs)")
	fs.IntVar(&f.logbufs, "logbufs", 0, "number of iclogs, 2 to 8 (default 8, fewer if the log is small)")
	f.impl = enumVar(fs, "cksum-impl", "auto", append([]string{"auto"}, implNames()...), cksum.Lookup, "crc32c implementation: auto (this CPU's fastest) or one this CPU has")
	fs.StringVar(&f.pprof, "pprof", "", "serve net/http/pprof and expvar on this address (loopback only, e.g. 127.0.0.1:6060)")
	fs.BoolVar(&f.pprofAny, "pprof-any-addr", false, "allow --pprof on a non-loopback address")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the mount's whole life to this file")
	fs.BoolVar(&f.allowOther, "allow-other", false, "let users other than the mounter in (FUSE allow_other)")
	fs.BoolVar(&f.fg, "foreground", false, "stay in the foreground until unmounted")
	fs.StringVar(&f.log, "log", "", "where the daemon writes messages after mounting (default DIR/xlogfs.log; with --norecovery, syslog only)")
	fs.BoolVar(&f.nonempty, "nonempty", false, "mount over a MOUNTPOINT that holds files (they are hidden while mounted)")
	fs.BoolVar(&f.ro, "ro", false, "mount read-only: recover the log, then refuse every change (EROFS)")
	fs.BoolVar(&f.norecovery, "norecovery", false, "with --ro: replay the log in memory only and write nothing to the store")
	fs.BoolVar(&f.allowMissingData, "allow-missing-data", false, "mount a store whose data files lack durable bytes (deleted or cut outside xlogfs): those files fail reads and writes with EIO")
	fs.DurationVar(&f.ckptInterval, "checkpoint-interval", journal.DefaultCheckpointInterval, "time between checkpoints")
	fs.DurationVar(&f.logForce, "log-force-interval", xlog.DefaultLogForceInterval,
		"force the log at least this often, so an idle mount never holds unforced metadata longer (XFS: 30s, ext4: 5s)")
	fs.DurationVar(&f.timeout, "attr-timeout", fusefs.DefaultTimeout, "how long the kernel caches attributes and entries")
	fs.BoolVar(&f.debug, "debug", false, "log every FUSE request")
	fs.BoolVar(&f.directIO, "direct-io", false, "bypass the kernel page cache for every file (as O_DIRECT opens do)")
	f.immediate = &sizeFlag{n: defaultImmediateWrite}
	fs.Var(f.immediate, "immediate-write", "--journal meta: writes of at most this many bytes through the daemon (every write without passthrough; with it, the opens on the log route, --sync-writes) are logged with their bytes, as ZFS's intent log does, so their fsync is a log force alone; 0: none")
	f.syncWrites = enumVar(fs, "sync-writes", "auto", []string{"auto", "log", "passthrough"}, datafile.ParseSyncWrites, "with passthrough, which opens that write go through the daemon and the log instead: auto (per file: files fsynced at least once per 64k written, new files, and O_SYNC/O_DSYNC opens), log (all), passthrough (none but O_SYNC/O_DSYNC opens)")
	f.passthrough = enumVar(fs, "passthrough", "auto", []string{"auto", "on", "off"}, fusefs.ParsePassthrough, "kernel FUSE passthrough of regular files' reads and writes to their data files (--journal meta): auto (when the kernel and privileges allow), on, off")
	f.transport = enumVar(fs, "transport", "classic", []string{"classic", "uring", "auto"}, fusefs.ParseTransport, "how FUSE requests reach the daemon: classic (/dev/fuse), uring (FUSE over io_uring, one ring per CPU; Linux 6.14+, root; sets the fuse module's enable_uring) or auto (uring where the kernel and privileges allow)")
	fs.DurationVar(&f.flushLatency, "flush-latency", 0, "measuring aid: make every log flush and data-file sync take exactly this long (e.g. 200us), emulating a device of that latency; the real flush still happens")
	fs.IntVar(&f.profileRate, "cpuprofile-rate", profiling.DefaultRate, "--cpuprofile samples per second of CPU time, e.g. 1000 (Linux samples a thread at most once per scheduler tick, 250 Hz on many kernels)")
	fs.StringVar(&f.syslog, "syslog", defaultSyslog, `the daemon's syslog socket (a unix datagram socket), or "none"`)
	return func(pos []string) (err error) {
		opts, err := f.journalOptions(fs)
		if err != nil {
			return err
		}
		// Everything that can be checked cheaply is, before a store is made
		// or a log recovered: a mount that cannot work leaves nothing behind.
		dir, mnt, err := f.resolvePaths(pos[0], pos[1])
		if err != nil {
			return err
		}
		if err := f.checkBeforeWork(dir, mnt); err != nil {
			return err
		}
		if !f.fg {
			return daemonize(fs.raw, dir, mnt)
		}
		return serve(dir, mnt, f, opts)
	}
}

// cksumModes are the checksum modes a flag lists.
var cksumModes = []string{"batched", "xfs", "sector", "inline"}

func implNames() []string {
	var n []string
	for _, im := range cksum.Impls() {
		n = append(n, im.Name)
	}
	return n
}

// journalOptions checks the flags that need nothing but themselves, as
// usage errors, and returns the journal's options.
func (f *mountFlags) journalOptions(fs *flagSet) (journal.Options, error) {
	var o journal.Options
	o.Mode, o.Journal, o.LogItems, o.Impl = f.mode.v, f.journalMode.v, f.logItems.v, f.impl.v
	o.LogBSize, o.LogBufs, o.CheckpointInterval = int(f.logbsize.n), f.logbufs, f.ckptInterval
	o.LogForceInterval = f.logForce
	switch {
	case f.logbsize.n != 0 && logbuf.CheckLogBSize(int(f.logbsize.n)) != nil:
		return o, fs.usagef("--logbsize %s: want a power of two from %dk to %dk", f.logbsize, logbuf.MinLogBSize>>10, logbuf.MaxLogBSize>>10)
	case f.logbufs != 0 && (f.logbufs < logbuf.MinLogBufs || f.logbufs > logbuf.MaxLogBufs):
		return o, fs.usagef("--logbufs %d: want %d to %d", f.logbufs, logbuf.MinLogBufs, logbuf.MaxLogBufs)
	case f.ckptInterval <= 0:
		return o, fs.usagef("--checkpoint-interval must be positive")
	case f.logForce <= 0:
		return o, fs.usagef("--log-force-interval must be positive")
	case f.timeout < 0:
		return o, fs.usagef("--attr-timeout must not be negative")
	case f.flushLatency < 0 || f.flushLatency > time.Second:
		return o, fs.usagef("--flush-latency %v: want 0 (off) to 1s", f.flushLatency)
	case f.profileRate < 1 || f.profileRate > 100000:
		return o, fs.usagef("--cpuprofile-rate %d: want 1 to 100000 Hz", f.profileRate)
	}
	o.FlushLatency = f.flushLatency
	if f.norecovery && !f.ro {
		return o, fs.usagef("--norecovery needs --ro: a mount that skipped recovery must not write")
	}
	o.ReadOnly, o.NoRecovery = f.ro, f.norecovery
	o.AllowMissingData = f.allowMissingData
	pt := f.passthrough.v
	if pt == fusefs.PassthroughOn && o.Journal != journal.JournalMeta {
		return o, fs.usagef("--passthrough=on needs --journal meta: --journal data logs every written byte, so writes go through the daemon")
	}
	f.immediateSet = fs.Changed("immediate-write")
	switch {
	case f.immediate.n > 1<<20:
		return o, fs.usagef("--immediate-write %d: at most 1 MiB", f.immediate.n)
	case f.immediate.n < 0:
		return o, fs.usagef("--immediate-write %d: want 0 (none) to 1 MiB", f.immediate.n)
	case o.Journal != journal.JournalMeta && f.immediateSet && f.immediate.n > 0:
		return o, fs.usagef("--immediate-write is for --journal meta (--journal data logs every write's bytes)")
	case o.Journal == journal.JournalMeta:
		o.ImmediateWrite = int(f.immediate.n)
	}
	o.SyncWrites = f.syncWrites.v
	if f.pprof != "" {
		if err := profiling.CheckAddr(f.pprof, f.pprofAny); err != nil {
			return o, fs.usagef("--pprof: %v", err)
		}
	}
	return o, nil
}

// resolvePaths makes every path the mount records absolute: the mount
// table, xlogfs.log and the messages name the store and the mount point
// wherever the command was run from.
func (f *mountFlags) resolvePaths(dir, mnt string) (string, string, error) {
	var err error
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", err
	}
	m, err := mountPath(mnt)
	if err != nil {
		return "", "", fmt.Errorf("mount point %s: %w", mnt, unwrapPath(err))
	}
	mnt = m
	for _, p := range []*string{&f.log, &f.cpuprofile} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				return "", "", err
			}
		}
	}
	return dir, mnt, nil
}

// checkBeforeWork checks what a mount needs from the system, cheaply and
// without changing anything: a mount point that is an empty directory (or
// --nonempty) and no FUSE mount already; a store directory that is one, or
// empty; files the daemon writes in directories that exist; a free
// --pprof port.
func (f *mountFlags) checkBeforeWork(dir, mnt string) error {
	if err := checkMountpoint(mnt, f.nonempty); err != nil {
		return err
	}
	if err := checkStoreDir(dir, f.ro); err != nil {
		return err
	}
	for _, p := range []struct{ flag, path string }{{"--log", f.log}, {"--cpuprofile", f.cpuprofile}} {
		if p.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p.path)); err != nil {
			return fmt.Errorf("%s %s: %w", p.flag, p.path, unwrapPath(err))
		} else if !st.IsDir() {
			return fmt.Errorf("%s %s: %s is not a directory", p.flag, p.path, filepath.Dir(p.path))
		}
	}
	if f.pprof != "" {
		ln, err := profiling.Listen(f.pprof, f.pprofAny)
		if err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
		ln.Close()
	}
	return nil
}

// checkMountpoint refuses a mount point that is missing, not a directory,
// already a FUSE mount (a second mount would hide the first), or holds
// files the mount would hide (unless nonempty).
func checkMountpoint(mnt string, nonempty bool) error {
	ms, err := readMounts()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.dir == mnt && (m.fstype == "fuse" || strings.HasPrefix(m.fstype, "fuse.")) {
			return fmt.Errorf("%s is already a FUSE mount (%s of %s); unmount it first (xlogfs umount %s, or fusermount3 -u)", mnt, m.fstype, m.source, mnt)
		}
	}
	st, err := os.Stat(mnt)
	if err != nil {
		return fmt.Errorf("mount point %s: %w", mnt, unwrapPath(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("mount point %s is not a directory", mnt)
	}
	if nonempty {
		return nil
	}
	d, err := os.Open(mnt)
	if err != nil {
		return fmt.Errorf("mount point %s: %w", mnt, unwrapPath(err))
	}
	defer d.Close()
	names, err := d.Readdirnames(3)
	if err != nil && err != io.EOF {
		return fmt.Errorf("mount point %s: %w", mnt, unwrapPath(err))
	}
	if len(names) > 0 {
		return fmt.Errorf("mount point %s is not empty (it holds %s); the mount would hide its files: use --nonempty to mount over them", mnt, strings.Join(names, ", "))
	}
	return nil
}

// checkStoreDir refuses a store directory that is neither a store nor
// empty (mount would make an empty one a store); a read-only mount, which
// makes nothing, wants a store.
func checkStoreDir(dir string, ro bool) error {
	if ro && !store.IsStore(store.OSFS(), dir) {
		return fmt.Errorf("%s is not an xlogfs store; a read-only mount (--ro) makes none", dir)
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", dir, unwrapPath(err))
	case !st.IsDir():
		return storeArg(dir)
	}
	if err := refuseMounted(dir); err != nil {
		return err
	}
	if empty, err := emptyDir(dir); err != nil {
		return err
	} else if !empty && !store.IsStore(store.OSFS(), dir) {
		return fmt.Errorf("%s is not empty and is not an xlogfs store; refusing to touch it", dir)
	}
	return nil
}

// unwrapPath drops the operation and path of an *os.PathError, which the
// message names already: "no such file or directory".
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// daemonize starts this command again in the foreground as a new session,
// and returns when it reports the mount ready (or fails, with its reason).
func daemonize(args []string, dir, mnt string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, append([]string{"mount", "--foreground"}, args...)...)
	cmd.Env = append(os.Environ(), readyEnv+"=3")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	if err := cmd.Start(); err != nil {
		return err
	}
	w.Close()
	devnull.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ready "):
			fmt.Fprintf(os.Stderr, "xlogfs: %s mounted at %s (daemon pid %d)\n", dir, mnt, cmd.Process.Pid)
			cmd.Process.Release()
			return nil
		case strings.HasPrefix(line, "error "):
			cmd.Wait()
			return errors.New(strings.TrimPrefix(line, "error "))
		default:
			fmt.Fprintln(os.Stderr, line)
		}
	}
	werr := cmd.Wait()
	return fmt.Errorf("the mount daemon exited before the mount was ready (%v)", werr)
}

// defaultSyslog is the local syslog socket.
const defaultSyslog = "/dev/log"

// reporter sends messages to the waiting parent until the mount is ready,
// and to stderr (the log file, for a daemon) afterwards; a daemon's go to
// syslog too.
type reporter struct {
	mu     sync.Mutex
	ready  *os.File       // nil in a plain foreground mount
	syslog *syslog.Writer // a daemon's, once it is ready; nil without one
}

func newReporter() *reporter {
	r := &reporter{}
	if s := os.Getenv(readyEnv); s != "" {
		if fd, err := strconv.Atoi(s); err == nil {
			r.ready = os.NewFile(uintptr(fd), "ready")
		}
		os.Unsetenv(readyEnv)
	}
	return r
}

func (r *reporter) logf(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, a...)
	if r.ready != nil {
		fmt.Fprintf(r.ready, "xlogfs: %s\n", msg)
		return
	}
	fmt.Fprintf(os.Stderr, "%s xlogfs: %s\n", time.Now().Format(time.RFC3339), msg)
	if r.syslog != nil {
		r.syslog.Info(msg)
	}
}

// failed reports a journal that stopped: on stderr, and as an error in
// syslog, which a full disk under DIR/xlogfs.log cannot keep from the
// administrator.
func (r *reporter) failed(mnt string, err error) {
	msg := fmt.Sprintf("%v; %s takes no more changes (every one gets EIO; reads go on): "+
		"unmount it, make room or fix the disk, and mount again to recover what the log holds", err, mnt)
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(os.Stderr, "%s xlogfs: %s\n", time.Now().Format(time.RFC3339), msg)
	if r.syslog != nil {
		r.syslog.Err(msg)
	}
}

func (r *reporter) done(err error, logPath, syslogPath string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready == nil {
		return
	}
	if err != nil {
		fmt.Fprintf(r.ready, "error %v\n", err)
	} else {
		// From here on the daemon's messages go to its log file, and
		// to syslog when there is one.
		if f, ferr := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); ferr == nil {
			unix.Dup2(int(f.Fd()), 1)
			unix.Dup2(int(f.Fd()), 2)
			f.Close()
		}
		if syslogPath != "none" {
			w, serr := syslog.Dial("unixgram", syslogPath, syslog.LOG_DAEMON|syslog.LOG_INFO, "xlogfs")
			if serr != nil {
				fmt.Fprintf(os.Stderr, "%s xlogfs: no syslog (%v): messages go to %s only\n", time.Now().Format(time.RFC3339), serr, logPath)
			}
			r.syslog = w
		}
		fmt.Fprintf(r.ready, "ready %d\n", os.Getpid())
	}
	r.ready.Close()
	r.ready = nil
}

// serve mounts and stays until unmounted.
func serve(dir, mnt string, f mountFlags, opts journal.Options) (err error) {
	rep := newReporter()
	logPath := f.log
	switch {
	case logPath != "":
	case f.norecovery:
		// Not even the messages go into the store: syslog has them.
		logPath = os.DevNull
	default:
		logPath = filepath.Join(dir, "xlogfs.log")
	}
	defer func() {
		if rep.ready != nil {
			rep.done(err, logPath, f.syslog)
			if err != nil {
				err = exitCode(1)
			}
		}
	}()
	// The pprof port is taken before the store is made or recovered: one
	// that another program took meanwhile leaves nothing behind.
	if f.pprof != "" {
		srv, err := profiling.Serve(f.pprof, f.pprofAny)
		if err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
		defer srv.Close()
		rep.logf("pprof at %s", srv.URL())
	}
	if empty, err := emptyDir(dir); err != nil {
		return err
	} else if empty {
		if _, err := store.Mkfs(dir, store.MkfsOptions{}); err != nil {
			return err
		}
		rep.logf("made a new store in %s", dir)
	}
	if f.cpuprofile != "" {
		stop, err := profiling.StartCPUProfileRate(f.cpuprofile, f.profileRate)
		if err != nil {
			return err
		}
		defer func() {
			if perr := stop(); perr != nil && err == nil {
				err = perr
			}
		}()
	}
	opts.Logf = rep.logf
	opts.OnFail = func(err error) { rep.failed(mnt, err) }
	start := time.Now()
	jfs, err := journal.Open(dir, opts)
	if err != nil {
		return inUseOf(dir, err)
	}
	r := jfs.Recovery()
	switch {
	case jfs.Options().NoRecovery: // asked for, or a read-only mount with no room to recover
		rep.logf("mounted %s read-only without recovery: %d records replayed in memory only (%d transactions, %d incomplete); the store is not written",
			dir, r.Records, r.Transactions, r.Dropped)
	case r.Clean:
		rep.logf("mounted %s: clean log", dir)
	default:
		rep.logf("mounted %s: recovered %d records, replayed %d transactions, dropped %d incomplete, in %v",
			dir, r.Records, r.Transactions, r.Dropped, time.Since(start).Round(time.Millisecond))
	}
	rep.logf("log records checksummed in %s mode under the store's %s CRC coverage", jfs.Options().Mode, jfs.Superblock().Coverage)
	publishStats(jfs)
	// The mount table names the store by its absolute path (runMount made
	// it so), by which check, logprint and umount find the store's mount.
	fsName := dir
	// SIGINT and SIGTERM are caught before the mount appears: one that
	// arrives as soon as the mount is visible must unmount cleanly, not kill
	// the daemon by the default action with the checkpoint unwritten.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	pt, tr := f.passthrough.v, f.transport.v
	server, err := fusefs.Mount(jfs, mnt, fusefs.Options{AllowOther: f.allowOther, Timeout: f.timeout, FsName: fsName, Debug: f.debug,
		DirectIO: f.directIO, ReadOnly: f.ro, Passthrough: pt, Transport: tr, Logf: rep.logf})
	if err != nil {
		jfs.Close()
		return fmt.Errorf("mounting at %s: %w", mnt, err)
	}
	go func() {
		s := <-sigs
		rep.logf("%v: unmounting %s", s, mnt)
		unmountOrDetach(server.Unmount, mnt, rep.logf)
	}()
	rep.done(nil, logPath, f.syslog)
	logMissingData(rep.logf, jfs.Recovery().Missing)
	server.Wait()
	if err := jfs.Close(); err != nil {
		return fmt.Errorf("unmount of %s: %w", dir, err)
	}
	rep.logf("unmounted %s cleanly", mnt)
	return nil
}

func emptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

var statsOnce sync.Once

// publishStats exposes the journal's counters in expvar as "xlogfs": the
// .stats file in its JSON form, the names and histogram buckets as
// "xlogfs stats --json --histogram" shows them.
func publishStats(jfs *journal.FS) {
	statsOnce.Do(func() {
		expvar.Publish("xlogfs", expvar.Func(func() any {
			f, err := statsfile.Parse(fusefs.StatsText(jfs))
			if err != nil {
				return map[string]string{"error": err.Error()}
			}
			return f.JSON(true)
		}))
	})
}

// unmountOrDetach unmounts mnt, retrying for a few seconds while it is busy
// (a just-closed file's release may still be on its way), then detaches it
// lazily: it disappears from the namespace at once and the daemon finishes
// (checkpoint, unmount record) when its last user lets go.
func unmountOrDetach(unmount func() error, mnt string, logf func(string, ...any)) {
	var err error
	for range 15 {
		if err = unmount(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	logf("unmount %s: %v; detaching it lazily (fusermount3 -u -z): the daemon exits once its last user leaves", mnt, err)
	if out, err := exec.Command("fusermount3", "-u", "-z", mnt).CombinedOutput(); err != nil {
		logf("fusermount3 -u -z %s: %v: %s", mnt, err, strings.TrimSpace(string(out)))
	}
}
