package benchwork

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"golang.org/x/sys/unix"
)

// Workloads the bench can drive.
var Workloads = []string{"builtin", "dbench", "mariadb", "pwrite", "creates"}

// Result is what a workload reports.
type Result struct {
	Seconds        float64
	Bytes, Ops     int64
	FsyncLatencies []time.Duration // client-measured; empty when the workload cannot see them
	Extra          map[string]float64
	Warnings       []string // things that went wrong without spoiling the result
	// Fsyncs the workload made (fsync and fdatasync calls) over the run,
	// counted by the workload itself whatever the filesystem under it;
	// where it cannot count them all, FsyncsUncounted says why (and
	// Fsyncs holds what it did count, if anything).
	Fsyncs          int64
	FsyncsUncounted string
}

func Run(cfg benchreport.Config, dir string, t benchreport.Target, bar *Progress, interrupted <-chan struct{}) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration)
	defer cancel()
	go func() {
		select {
		case <-interrupted:
			cancel()
		case <-ctx.Done():
		}
	}()
	switch cfg.Workload {
	case "mariadb":
		// Times its own sysbench run (setup must not eat --time), and
		// watches interrupted itself.
		return runMariadb(cfg, dir, bar, interrupted)
	case "dbench":
		return runDbench(ctx, cfg, dir, bar)
	case "pwrite":
		return runPwrite(ctx, cfg, dir, bar)
	case "creates":
		return runCreates(ctx, dir, bar)
	default:
		return runBuiltin(ctx, cfg, dir, bar)
	}
}

// bulkWrite is what the data-journal builtin workload's extra writer
// appends per fsync: one full 256 KiB iclog's worth.
const bulkWrite = 256 << 10

// runBuiltin drives clients that each append writes to their own file and
// fsync after each, as a database's log writer does; the file wraps to
// offset 0 at 64 MiB to keep the footprint bounded. With the data journal an
// extra writer appends 256 KiB blocks, so full records pass the checksum.
func runBuiltin(ctx context.Context, cfg benchreport.Config, dir string, bar *Progress) (Result, error) {
	type client struct {
		size int
		lat  []time.Duration
		n    int64
		err  error
	}
	clients := make([]*client, cfg.Clients)
	for i := range clients {
		clients[i] = &client{size: cfg.WriteSize}
	}
	if cfg.Journal == "data" {
		clients = append(clients, &client{size: bulkWrite})
	}
	var written atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("client-%d", i)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				c.err = err
				return
			}
			defer f.Close()
			buf := make([]byte, c.size)
			for j := range buf {
				buf[j] = byte(i*31 + j)
			}
			const wrapAt = 64 << 20
			var off int64
			for ctx.Err() == nil {
				if _, err := f.WriteAt(buf, off); err != nil {
					c.err = fmt.Errorf("client %d write: %w", i, err)
					return
				}
				t0 := time.Now()
				if err := unix.Fsync(int(f.Fd())); err != nil {
					c.err = fmt.Errorf("client %d fsync: %w", i, err)
					return
				}
				c.lat = append(c.lat, time.Since(t0))
				c.n++
				written.Add(int64(len(buf)))
				if off += int64(len(buf)); off+int64(len(buf)) > wrapAt {
					off = 0
				}
			}
		}()
	}
	stop := make(chan struct{})
	go bar.run(stop, func() string {
		el := time.Since(start).Seconds()
		return fmt.Sprintf("%.1f MB/s", float64(written.Load())/max(el, 1e-3)/1e6)
	})
	wg.Wait()
	close(stop)
	res := Result{Seconds: time.Since(start).Seconds(), Bytes: written.Load()}
	for _, c := range clients {
		if c.err != nil {
			return res, c.err
		}
		res.Ops += c.n
		res.FsyncLatencies = append(res.FsyncLatencies, c.lat...)
	}
	res.Fsyncs = res.Ops // a write and its fsync each
	return res, nil
}

var (
	dbenchThroughput = regexp.MustCompile(`Throughput ([0-9.]+) MB/sec`)
	// A row of dbench's summary: " NTCreateX    12345     0.123    45.678".
	dbenchOpCount = regexp.MustCompile(`(?m)^\s*([A-Z][A-Za-z]+)\s+([0-9]+)\s+[0-9.]+\s+[0-9.]+\s*$`)
)

// dbenchClientFile finds Debian's dbench load file.
func dbenchClientFile() (string, error) {
	for _, p := range []string{"/usr/share/dbench/client.txt", "/usr/share/dbench/client.plain", "/usr/local/share/client.txt"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("dbench's client file not found (looked in /usr/share/dbench)")
}

// runDbench runs dbench -F (fsync after every write) for the run's time.
func runDbench(ctx context.Context, cfg benchreport.Config, dir string, bar *Progress) (Result, error) {
	client, err := dbenchClientFile()
	if err != nil {
		return Result{}, err
	}
	secs := int(cfg.Duration.Seconds())
	cmd := exec.Command("dbench", "-c", client, "-F", "-D", dir, "-t", strconv.Itoa(secs), strconv.Itoa(cfg.Clients))
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	// Its own process group, which its clients (its children) share: an
	// interrupt stops them all. Stopping the parent alone leaves the
	// clients running, holding the mount busy and its output open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	waited := make(chan struct{})
	defer close(waited)
	go func() {
		<-ctx.Done()
		// dbench stops on its own at -t; only an interrupt gets here early
		// enough to matter.
		if ctx.Err() == context.Canceled {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			select {
			case <-waited:
			case <-time.After(5 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		}
	}()
	var out bytes.Buffer
	var last atomic.Value
	last.Store("")
	stop := make(chan struct{})
	go bar.run(stop, func() string { return last.Load().(string) })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if m := regexp.MustCompile(`([0-9.]+) MB/sec\s+execute`).FindStringSubmatch(line); m != nil {
			last.Store(m[1] + " MB/s")
		}
	}
	close(stop)
	werr := cmd.Wait()
	res := Result{Seconds: time.Since(start).Seconds()}
	m := dbenchThroughput.FindStringSubmatch(out.String())
	if werr != nil || m == nil {
		if werr == nil {
			werr = errors.New("no throughput in its output")
		}
		// %w: the bench tells a dbench a signal ended from a failure.
		return res, fmt.Errorf("dbench failed (%w):\n%s", werr, Tail(out.String(), 20))
	}
	mbps, _ := strconv.ParseFloat(m[1], 64)
	ops := DbenchOps(out.String())
	for _, n := range ops {
		res.Ops += n
	}
	// Its summary counts its execute phase alone, after a warmup of a
	// fifth of -t: its fsyncs do not cover the run the filesystems'
	// counters do.
	res.Fsyncs = DbenchFsyncs(ops)
	res.FsyncsUncounted = "dbench counts the fsyncs of its execute phase alone, not of its warmup (the first fifth of --time)"
	// dbench reports its own throughput over its own -t seconds.
	res.Seconds = float64(secs)
	res.Bytes = int64(mbps * 1e6 * res.Seconds)
	res.Extra = map[string]float64{"dbench_mb_per_s": mbps, "dbench_fsyncs": float64(res.Fsyncs)}
	return res, nil
}

// DbenchOps is the Count column of dbench's summary table, by operation.
func DbenchOps(out string) map[string]int64 {
	ops := map[string]int64{}
	for _, c := range dbenchOpCount.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(c[2], 10, 64)
		ops[c[1]] += n
	}
	return ops
}

// DbenchFsyncs is the fsyncs dbench -F made: one after every WriteX, and
// one for every Flush (strace -f -c of dbench 4.0 counts exactly these).
func DbenchFsyncs(ops map[string]int64) int64 { return ops["WriteX"] + ops["Flush"] }

// runPwrite times --write-size pwrites made one after another by one
// client, without fsync, over a 64 MiB file (rewritten from its start once
// full): what a write costs by itself, where a FUSE round trip per write
// shows against the page cache's microseconds. It reports the mean and the
// percentiles of a write's latency (pwrite_mean_us, pwrite_p50_us,
// pwrite_p99_us).
func runPwrite(ctx context.Context, cfg benchreport.Config, dir string, bar *Progress) (Result, error) {
	f, err := os.OpenFile(filepath.Join(dir, "pwrite"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	buf := make([]byte, cfg.WriteSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	const span = 64 << 20
	var lat []time.Duration
	var off int64
	start := time.Now()
	stop := make(chan struct{})
	var n atomic.Int64
	go bar.run(stop, func() string { return fmt.Sprintf("%d writes", n.Load()) })
	for ctx.Err() == nil {
		t0 := time.Now()
		if _, err := f.WriteAt(buf, off); err != nil {
			close(stop)
			return Result{}, fmt.Errorf("pwrite: %w", err)
		}
		lat = append(lat, time.Since(t0))
		n.Add(1)
		if off += int64(len(buf)); off+int64(len(buf)) > span {
			off = 0
		}
	}
	close(stop)
	res := Result{Seconds: time.Since(start).Seconds(), Ops: int64(len(lat)), Bytes: int64(len(lat)) * int64(len(buf))}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	if len(lat) > 0 {
		res.Extra = map[string]float64{
			"pwrite_mean_us": sum.Seconds() * 1e6 / float64(len(lat)),
			"pwrite_p50_us":  Percentile(lat, 50),
			"pwrite_p99_us":  Percentile(lat, 99),
		}
	}
	return res, nil
}

// CreatesMax is how many files the creates workload makes in its one
// directory at most, stopping early when that many are made.
const CreatesMax = 30000

// runCreates makes files in one new directory, one after another, each
// opened with O_CREAT|O_WRONLY and closed at once, up to CreatesMax or the
// run's time: what a new file a program will write costs, without its
// writes (on xlogfs its create record and data file, and whatever its
// first open for writing forces). It reports creates per second as the
// throughput (creates_per_s) and a create's latency (create_p50_us,
// create_p99_us).
func runCreates(ctx context.Context, dir string, bar *Progress) (Result, error) {
	sub := filepath.Join(dir, "creates")
	if err := os.Mkdir(sub, 0o755); err != nil {
		return Result{}, err
	}
	var lat []time.Duration
	var n atomic.Int64
	stop := make(chan struct{})
	go bar.run(stop, func() string { return fmt.Sprintf("%d files", n.Load()) })
	defer close(stop)
	start := time.Now()
	for i := 0; i < CreatesMax && ctx.Err() == nil; i++ {
		t0 := time.Now()
		fd, err := unix.Open(filepath.Join(sub, fmt.Sprintf("f%06d", i)), unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err == nil {
			err = unix.Close(fd)
		}
		if err != nil {
			return Result{}, fmt.Errorf("creating file %d in %s: %w", i, sub, err)
		}
		lat = append(lat, time.Since(t0))
		n.Add(1)
	}
	res := Result{Seconds: time.Since(start).Seconds(), Ops: int64(len(lat))}
	if len(lat) > 0 {
		res.Extra = map[string]float64{
			"creates_per_s": float64(len(lat)) / res.Seconds,
			"create_p50_us": Percentile(lat, 50),
			"create_p99_us": Percentile(lat, 99),
		}
	}
	return res, nil
}
