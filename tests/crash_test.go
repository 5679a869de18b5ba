package tests

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var (
	crashRounds = flag.Int("crash-rounds", 20, "how many times TestCrashKill9 kills the daemon")
	crashSeed   = flag.Uint64("crash-seed", 0, "seed of TestCrashKill9's choices (0: a new one, logged)")
)

// cksumModes are the --cksum-mode values.
var cksumModes = []string{"batched", "xfs", "sector", "inline"}

// TestCrashKill9 kills the mount daemon with SIGKILL while writers loop over
// write+fsync (appends, atomic saves by rename, removals, an open unlinked
// file), round after round on the same store, alternating journal and
// checksum modes. After each crash the store must pass "xlogfs check", and
// after each remount everything any fsync acknowledged — in this round or
// an earlier one — must be there, content checked.
func TestCrashKill9(t *testing.T) {
	t.Parallel()
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("crash seed %d (rerun with -args -crash-seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	store, mnt := newStore(t)
	// A small log, so that rounds of writing wrap it and recovery walks
	// records across the wrap.
	mkfs(t, store, "--log-size", "4m")

	var writers []*crashWriter
	for round := range *crashRounds {
		// Each checksum mode with each journal mode, in rounds of eight
		// without and eight with checkpoints all the time.
		flags := []string{"--journal", journalModes[round%len(journalModes)], "--cksum-mode", cksumModes[round/len(journalModes)%len(cksumModes)]}
		if round/8%2 == 1 {
			// Checkpoints all the time, so that crashes hit them too.
			flags = append(flags, "--checkpoint-interval", "10ms")
		}
		m := mountDaemon(t, store, mnt, flags...)
		for _, w := range writers {
			w.verify(t, mnt, fmt.Sprintf("after crash %d, remounted with %q", round, flags))
		}
		if t.Failed() {
			return
		}

		// Kill once the writers have had this many fsyncs acknowledged:
		// anywhere from the first few to some hundreds of KiB into the
		// round, at whatever point the writers then are.
		target := int64(1 + rng.IntN(40))
		var acks atomic.Int64
		reached := make(chan struct{})
		ack := func() {
			if acks.Add(1) == target {
				close(reached)
			}
		}
		var wg sync.WaitGroup
		var roundWriters []*crashWriter
		for i := range 2 {
			w := &crashWriter{dir: fmt.Sprintf("round%02d-w%d", round, i), rng: rand.New(rand.NewPCG(rng.Uint64(), 2)),
				files: map[string]*crashFile{}, ack: ack, orphan: i == 0, direct: i == 1}
			roundWriters = append(roundWriters, w)
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(mnt)
			}()
		}
		allDone := make(chan struct{})
		go func() {
			wg.Wait()
			close(allDone)
		}()
		select {
		case <-reached:
		case <-allDone:
		case <-time.After(2 * time.Minute):
			t.Errorf("round %d: the writers got only %d of %d fsyncs acknowledged in 2 minutes", round, acks.Load(), target)
		}
		killTime := time.Now()
		m.kill9(t)
		<-allDone
		for _, w := range roundWriters {
			// Once the daemon is gone every call fails; one that failed
			// before is a bug.
			if w.errAt.Before(killTime) {
				t.Errorf("round %d: writer %s failed before the crash: %v", round, w.dir, w.err)
			}
		}
		writers = append(writers, roundWriters...)
		report := checkStore(t, store, false)
		t.Logf("crash %d (%q, %d fsyncs acknowledged): xlogfs check: %s", round, flags, acks.Load(), logLine(report))
		if t.Failed() {
			return
		}
	}

	m := mountDaemon(t, store, mnt)
	for _, w := range writers {
		w.verify(t, mnt, "after the last crash")
	}
	var logBytes int
	for _, w := range writers {
		logBytes += len(w.log)
	}
	t.Logf("%d crashes, %d bytes of appends acknowledged; the log head is now at %s (cycle,block) of a 4 MiB log",
		*crashRounds, logBytes, readStats(t, mnt)["log_head"])
	inodes := regularInodes(t, mnt)
	m.unmount(t)
	checkStore(t, store, true)
	// Data files are named by inode; none may outlive its inode (the
	// orphans of every round, freed by recovery, included).
	ents, err := os.ReadDir(filepath.Join(store, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if ino, err := strconv.ParseUint(e.Name(), 10, 64); err != nil || !inodes[ino] {
			t.Errorf("store data/%s belongs to no regular file of the mounted tree", e.Name())
		}
	}
}

// crashWriter writes one directory of files with fsync, remembering what
// each acknowledged fsync made durable.
type crashWriter struct {
	dir    string     // its directory, under the mount point
	rng    *rand.Rand // sizes of what it writes
	ack    func()     // called after each acknowledged fsync
	orphan bool       // keep an unlinked file open until the crash
	direct bool       // append with O_DIRECT in whole 4 KiB blocks, as InnoDB writes

	dirDurable bool                  // the directory's creation was acknowledged
	log        []byte                // the acknowledged prefix of dir/log
	files      map[string]*crashFile // acknowledged state of the other files
	err        error                 // what stopped it (the crash, or a bug)
	errAt      time.Time
}

// crashFile is the acknowledged state of a file.
type crashFile struct {
	content   []byte
	gone      bool // its removal was acknowledged: it must be absent
	mayBeGone bool // its removal began but was not acknowledged
}

func (w *crashWriter) run(mnt string) {
	w.err = w.write(mnt)
	w.errAt = time.Now()
}

// write loops until an operation fails (after the kill, every one does).
func (w *crashWriter) write(mnt string) error {
	base := filepath.Join(mnt, w.dir)
	if err := os.Mkdir(base, 0o755); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if w.direct {
		flags |= unix.O_DIRECT
	}
	logFile, err := os.OpenFile(filepath.Join(base, "log"), flags, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	if err := logFile.Sync(); err != nil {
		return err
	}
	if err := fsyncDir(base); err != nil {
		return err
	}
	if err := fsyncDir(mnt); err != nil {
		return err
	}
	w.dirDurable = true
	w.ack()

	if w.orphan {
		// A file unlinked while open: recovery must free it.
		f, err := os.Create(filepath.Join(base, "orphan"))
		if err != nil {
			return err
		}
		defer f.Close()
		content := pattern(w.rng.Uint64(), 100_000)
		if _, err := f.Write(content); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		w.files["orphan"] = &crashFile{content: content, mayBeGone: true}
		if err := os.Remove(filepath.Join(base, "orphan")); err != nil {
			return err
		}
		if err := fsyncDir(base); err != nil {
			return err
		}
		w.files["orphan"].gone = true
		w.ack()
	}

	var saved []string // saves not removed yet, oldest first
	for i := 0; ; i++ {
		switch {
		case i%7 == 6:
			// An atomic save: write a temporary file, fsync, rename it
			// into place, fsync the directory.
			name := fmt.Sprintf("save-%d", i)
			tmp := filepath.Join(base, "tmp-"+name)
			content := pattern(w.rng.Uint64(), w.rng.IntN(20_000))
			if err := writeAndSync(tmp, content); err != nil {
				return err
			}
			if err := os.Rename(tmp, filepath.Join(base, name)); err != nil {
				return err
			}
			if err := fsyncDir(base); err != nil {
				return err
			}
			w.files[name] = &crashFile{content: content}
			saved = append(saved, name)
		case i%11 == 10 && len(saved) > 0:
			name := saved[0]
			saved = saved[1:]
			w.files[name].mayBeGone = true
			if err := os.Remove(filepath.Join(base, name)); err != nil {
				return err
			}
			if err := fsyncDir(base); err != nil {
				return err
			}
			w.files[name].gone = true
		default:
			// Appends of 1 byte to 96 KiB: small records, and writes
			// that span several iclogs in data-journal mode; fsync and
			// fdatasync in turn.
			size := 1 + w.rng.IntN(96<<10)
			if w.direct {
				size = (size + 4095) &^ 4095
			}
			chunk := alignedBuffer(size)
			copy(chunk, pattern(w.rng.Uint64(), size))
			if _, err := logFile.Write(chunk); err != nil {
				return err
			}
			// fdatasync must make the new size durable as fsync does.
			sync := logFile.Sync
			if i%2 == 1 {
				sync = func() error { return unix.Fdatasync(int(logFile.Fd())) }
			}
			if err := sync(); err != nil {
				return err
			}
			w.log = append(w.log, chunk...)
		}
		w.ack()
	}
}

// verify checks that everything w had acknowledged is on the mount.
func (w *crashWriter) verify(t *testing.T, mnt, when string) {
	t.Helper()
	if !w.dirDurable {
		return // the crash came before its first acknowledgement
	}
	base := filepath.Join(mnt, w.dir)
	got, err := os.ReadFile(filepath.Join(base, "log"))
	if err != nil {
		t.Errorf("%s: %s/log: %v", when, w.dir, err)
	} else if len(got) < len(w.log) || !bytes.Equal(got[:len(w.log)], w.log) {
		t.Errorf("%s: %s/log lost acknowledged writes: %s", when, w.dir, describeDiff(got[:min(len(got), len(w.log))], w.log))
	}
	for _, name := range slices.Sorted(maps.Keys(w.files)) {
		f := w.files[name]
		path := filepath.Join(base, name)
		got, err := os.ReadFile(path)
		switch {
		case f.gone || (f.mayBeGone && errors.Is(err, os.ErrNotExist)):
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %s/%s is back although its removal was acknowledged (%v)", when, w.dir, name, err)
			}
		case err != nil:
			t.Errorf("%s: %s/%s, acknowledged, is lost: %v", when, w.dir, name, err)
		case !bytes.Equal(got, f.content):
			t.Errorf("%s: %s/%s: %s", when, w.dir, name, describeDiff(got, f.content))
		}
	}
}

// logLine returns the "log: ..." line of an xlogfs check report.
func logLine(report string) string {
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "log: ") {
			return strings.TrimPrefix(line, "log: ")
		}
	}
	return "(no log line)"
}

// writeAndSync creates path with content and fsyncs it.
func writeAndSync(path string, content []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fsyncDir makes a directory's entries durable.
func fsyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// regularInodes returns the inode numbers of the regular files on the mount.
func regularInodes(t testing.TB, mnt string) map[uint64]bool {
	t.Helper()
	inodes := map[uint64]bool{}
	for _, st := range snapshotTree(t, mnt) {
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			inodes[st.Ino] = true
		}
	}
	return inodes
}
