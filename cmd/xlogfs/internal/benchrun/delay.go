package benchrun

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/xfsbase"
	"golang.org/x/sys/unix"
)

// A device that holds still: --flush-latency D makes every flush of the
// xlogfs stores take D (xlogfs mount's emulated flush), and of the loopback
// baseline (loopback-mount's). The native directory and the kernel's XFS
// have no such switch: where the kernel has dm-delay, each of their rounds
// gets a device of its own whose flushes take D (a loop device over an
// image where the stores go, dm-delay over it delaying flushes alone, ext4
// for native and the loopback's directory, XFS for the xfs baseline), so
// that a disk-like comparison repeats on any machine with dm-delay. Where
// it has none, the bench says so per target, with what it found.

// DelayEnv is what ProbeDelay asks of the machine, each piece replaceable
// so that a test can take one away.
type DelayEnv struct {
	Euid     func() int
	Exists   func(path string) bool
	LookPath func(name string) (string, error)
	// Run runs a program and returns its combined output (dmsetup
	// targets, modprobe dm_delay).
	Run     func(name string, args ...string) ([]byte, error)
	Release func() string // uname -r
}

// SystemDelayEnv is the real machine.
func SystemDelayEnv() DelayEnv {
	return DelayEnv{
		Euid:     os.Geteuid,
		Exists:   func(p string) bool { _, err := os.Stat(p); return err == nil },
		LookPath: xfsbase.LookTool,
		Run:      func(name string, args ...string) ([]byte, error) { return exec.Command(name, args...).CombinedOutput() },
		Release:  func() string { return Machine().Kernel },
	}
}

// DelayReadiness is what the probe found. Err nil: dm-delay can delay the
// baselines' flushes by the latency, with the programs named; otherwise Err
// is why not, in short (the reason a target gives), and Found says what
// the probe saw of each way the kernel has to delay a block device's
// flushes (dm-delay, nbd, ublk) in full.
type DelayReadiness struct {
	Err     error
	Found   string
	Dmsetup string
	Losetup string
	Mkfs    string // mkfs.ext4, for native and the loopback's directory
}

// minFlushDelayRelease is the first Linux whose dm-delay takes a flush
// delay of its own (the 9-argument table: "dm delay: add flush as a third
// class of IO").
const minFlushDelayRelease = "4.19"

// ProbeDelay finds out whether dm-delay can make the baselines' flushes
// take lat here: root, device-mapper, its delay target (loading the
// module dm_delay where the kernel has it as one), a release with the
// flush delay, dmsetup, losetup, a loop device, mkfs.ext4 where needExt4
// (native or the loopback is run), and a latency dm-delay can hold (whole
// milliseconds). It also looks for nbd and ublk, which it names in Found
// but does not drive.
func ProbeDelay(env DelayEnv, lat time.Duration, needExt4 bool) DelayReadiness {
	var r DelayReadiness
	kernel, found := probeDMDelay(env)
	others := []string{"nbd: " + probeOther(env, "nbd", "/sys/module/nbd", "/dev/nbd0"),
		"ublk: " + probeOther(env, "ublk", "/sys/module/ublk_drv", "/dev/ublk-control")}
	r.Found = strings.Join(append([]string{"dm-delay: " + found}, others...), "; ")
	r.Err = func() error {
		if kernel != nil {
			return kernel
		}
		if rel := env.Release(); !releaseAtLeast(rel, minFlushDelayRelease) {
			return fmt.Errorf("dm-delay has no flush delay before Linux %s (this is %s)", minFlushDelayRelease, rel)
		}
		if lat <= 0 || lat%time.Millisecond != 0 {
			return fmt.Errorf("dm-delay delays in whole milliseconds, and %v is not", lat)
		}
		if env.Euid() != 0 {
			return errors.New("not root: a loop device and a device-mapper table need root")
		}
		var err error
		if r.Dmsetup, err = env.LookPath("dmsetup"); err != nil {
			return missingTool("dmsetup", "dmsetup")
		}
		if r.Losetup, err = env.LookPath("losetup"); err != nil {
			return missingTool("losetup", "mount")
		}
		if !env.Exists("/dev/loop-control") {
			return errors.New("no loop device: /dev/loop-control is missing")
		}
		if needExt4 {
			if r.Mkfs, err = env.LookPath("mkfs.ext4"); err != nil {
				return missingTool("mkfs.ext4", "e2fsprogs")
			}
		}
		return nil
	}()
	return r
}

func missingTool(name, pkg string) error {
	return fmt.Errorf("%s not found: install it with apt-get install %s", name, pkg)
}

// noDMDelay is the short reason when the kernel has no dm-delay at all.
const noDMDelay = "no dm-delay in this kernel"

// probeDMDelay says whether the kernel has dm-delay's target (nil), else
// why not in short, and in both cases what it found.
func probeDMDelay(env DelayEnv) (error, string) {
	// The kernel's device-mapper shows as a module (built in or loaded)
	// and a misc device; /dev/mapper/control alone may be a node without
	// a driver behind it.
	hasDM := func() bool { return env.Exists("/sys/module/dm_mod") || env.Exists("/sys/class/misc/device-mapper") }
	if !hasDM() {
		why := "no /sys/module/dm_mod, no /sys/class/misc/device-mapper"
		if env.Exists("/dev/mapper/control") {
			why += "; /dev/mapper/control is there, with no driver behind it"
		}
		loaded := false
		if modprobe, err := env.LookPath("modprobe"); err == nil {
			if out, err := env.Run(modprobe, "dm_mod"); err != nil {
				why += fmt.Sprintf("; modprobe dm_mod: %v: %s", err, strings.TrimSpace(string(out)))
			} else {
				loaded = hasDM()
			}
		}
		if !loaded {
			return errors.New(noDMDelay), "no device-mapper (" + why + ")"
		}
	}
	if env.Exists("/sys/module/dm_delay") {
		return nil, "the delay target is loaded (/sys/module/dm_delay)"
	}
	dmsetup, err := env.LookPath("dmsetup")
	if err != nil {
		return fmt.Errorf("%s: dmsetup not found, to ask device-mapper for its targets", noDMDelay),
			"device-mapper, but no dmsetup to list its targets and no /sys/module/dm_delay"
	}
	if out, err := env.Run(dmsetup, "targets"); err == nil && listsDelay(out) {
		return nil, "dmsetup targets lists delay"
	}
	why := "no delay in dmsetup targets, no /sys/module/dm_delay"
	if modprobe, err := env.LookPath("modprobe"); err == nil {
		out, err := env.Run(modprobe, "dm_delay")
		if err == nil {
			if out, err := env.Run(dmsetup, "targets"); err == nil && listsDelay(out) {
				return nil, "the delay target, loaded by modprobe dm_delay"
			}
			why += "; modprobe dm_delay loaded nothing dmsetup lists"
		} else {
			why += fmt.Sprintf("; modprobe dm_delay: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	return errors.New(noDMDelay), "device-mapper without the delay target (" + why + ")"
}

// listsDelay reports whether dmsetup targets' output names the delay
// target ("delay            v1.4.0").
func listsDelay(out []byte) bool {
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "delay" {
			return true
		}
	}
	return false
}

// probeOther says what the machine has of name (nbd, ublk): the bench
// drives neither, so a present one is named, not used.
func probeOther(env DelayEnv, name string, paths ...string) string {
	for _, p := range paths {
		if env.Exists(p) {
			return fmt.Sprintf("present (%s), but the bench has no %s device with an emulated flush", p, name)
		}
	}
	return "none (no " + strings.Join(paths, ", no ") + ")"
}

// releaseAtLeast reports whether kernel release rel ("6.1.0-18-amd64") is
// min ("4.19") or later; an unreadable release is not.
func releaseAtLeast(rel, min string) bool {
	nums := func(s string) []int {
		var out []int
		for _, p := range strings.SplitN(s, ".", 3) {
			end := strings.IndexFunc(p, func(c rune) bool { return c < '0' || c > '9' })
			if end >= 0 {
				p = p[:end]
			}
			n, err := strconv.Atoi(p)
			if err != nil {
				break
			}
			out = append(out, n)
		}
		return out
	}
	a, b := nums(rel), nums(min)
	if len(a) < 2 {
		return false
	}
	return slices.Compare(a[:2], b[:2]) >= 0
}

// delayTable is dm-delay's table for a device of sectors 512-byte sectors
// over dev whose flushes alone take lat: reads and writes at no delay, the
// flush class (the 9-argument form) at lat in milliseconds, the unit
// dm-delay takes.
func delayTable(dev string, sectors int64, lat time.Duration) (string, error) {
	if lat <= 0 || lat%time.Millisecond != 0 {
		return "", fmt.Errorf("dm-delay delays in whole milliseconds, and %v is not", lat)
	}
	if sectors <= 0 {
		return "", fmt.Errorf("dm-delay over %s: %d sectors", dev, sectors)
	}
	ms := int64(lat / time.Millisecond)
	return fmt.Sprintf("0 %d delay %s 0 0 %s 0 0 %s 0 %d", sectors, dev, dev, dev, ms), nil
}

// FlushReach says how --flush-latency reaches each target, given what the
// probe found (delay; nil: not probed, as without a baseline): xlogfs's
// targets by their mount's emulated flush, the loopback by dm-delay under
// its directory where there is one, else by its own; native and xfs by
// dm-delay, or not at all, for delay's reason.
func FlushReach(lat time.Duration, targets []benchreport.Target, delay *DelayReadiness) []benchreport.FlushReach {
	if lat <= 0 {
		return nil
	}
	var why error = errors.New("dm-delay was not probed")
	if delay != nil {
		why = delay.Err
	}
	var out []benchreport.FlushReach
	for _, t := range targets {
		f := benchreport.FlushReach{Target: t.Name, Reached: true}
		switch {
		case t.Kind == "xlogfs":
			f.How = fmt.Sprintf("xlogfs mount --flush-latency: every log flush and data-file sync takes %v", lat)
		case why == nil:
			fs := "ext4"
			if t.Kind == benchreport.XFSTarget {
				fs = "XFS"
			}
			f.How = fmt.Sprintf("%s on dm-delay, every flush delayed %v (over a loop device over an image where the stores go)", fs, lat)
			if t.Kind == "loopback" {
				f.How = "its directory " + f.How
			}
		case t.Kind == "loopback":
			f.How = fmt.Sprintf("loopback-mount --flush-latency: every FSYNC and FSYNCDIR it serves takes %v", lat)
		default:
			f.Reached, f.Why = false, why.Error()
		}
		out = append(out, f)
	}
	return out
}

// delayed is a round's device whose flushes take the latency: an image
// file, a loop device over it, and a dm-delay device over that.
type delayed struct {
	ops     delayOps
	Image   string
	Loop    string // /dev/loopN
	Name    string // the device-mapper name
	Dev     string // /dev/mapper/NAME
	Table   string
	Mnt     string // where its filesystem is mounted, if it is
	mounted bool
	mapped  bool
}

// delayOps is what making and undoing a delayed device does to the
// machine, replaceable in a test.
type delayOps struct {
	dmsetup, losetup string
	run              func(name string, args ...string) ([]byte, error)
	mount            func(dev, dir, fstype string) error
	unmount          func(dir string) error
	// writeCache reads the dm device's write_cache ("write back" or
	// "write through"): flushes reach a device only in write back.
	writeCache func(dev string) (string, error)
}

func systemDelayOps(r DelayReadiness) delayOps {
	return delayOps{
		dmsetup: r.Dmsetup, losetup: r.Losetup,
		run:   func(name string, args ...string) ([]byte, error) { return exec.Command(name, args...).CombinedOutput() },
		mount: func(dev, dir, fstype string) error { return unix.Mount(dev, dir, fstype, 0, "") },
		unmount: func(dir string) error {
			var err error
			for range 10 {
				if err = unix.Unmount(dir, 0); err != unix.EBUSY {
					return err
				}
				time.Sleep(200 * time.Millisecond)
			}
			return err
		},
		writeCache: func(dev string) (string, error) {
			real, err := filepath.EvalSymlinks(dev)
			if err != nil {
				return "", err
			}
			b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(real), "queue", "write_cache"))
			return strings.TrimSpace(string(b)), err
		},
	}
}

// makeDelayed makes a sparse image of size bytes at image, a loop device
// over it (direct I/O where asked: an image on disk), and the dm-delay
// device name over that, delaying flushes by lat. On an error it undoes
// what it did.
func makeDelayed(ops delayOps, image string, size int64, name string, lat time.Duration, directIO bool) (d *delayed, err error) {
	d = &delayed{ops: ops, Image: image, Name: name, Dev: "/dev/mapper/" + name}
	defer func() {
		if err != nil {
			if terr := d.teardown(); terr != nil {
				err = fmt.Errorf("%w (and undoing it: %v)", err, terr)
			}
			d = nil
		}
	}()
	f, err := os.OpenFile(image, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return d, fmt.Errorf("making the delayed device's image: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return d, fmt.Errorf("sizing the delayed device's image %s to %d bytes: %w", image, size, err)
	}
	args := []string{"--find", "--show"}
	if directIO {
		args = append(args, "--direct-io=on")
	}
	out, err := ops.run(ops.losetup, append(args, image)...)
	if err != nil {
		return d, fmt.Errorf("losetup %s: %v: %s", strings.Join(append(args, image), " "), err, strings.TrimSpace(string(out)))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if loop := strings.TrimSpace(lines[len(lines)-1]); strings.HasPrefix(loop, "/dev/loop") {
		d.Loop = loop
	} else {
		return d, fmt.Errorf("losetup --show printed %q, not a loop device", strings.TrimSpace(string(out)))
	}
	if d.Table, err = delayTable(d.Loop, size/512, lat); err != nil {
		return d, err
	}
	if out, err := ops.run(ops.dmsetup, "create", name, "--table", d.Table); err != nil {
		return d, fmt.Errorf("dmsetup create %s --table %q: %v: %s", name, d.Table, err, strings.TrimSpace(string(out)))
	}
	d.mapped = true
	wc, err := ops.writeCache(d.Dev)
	if err != nil {
		return d, fmt.Errorf("reading %s's write cache mode: %w", d.Dev, err)
	}
	if wc != "write back" {
		return d, fmt.Errorf("%s (dm-delay over %s) reports write_cache %q: the block layer drops its flushes before dm-delay sees them, so its flush delay would delay nothing", d.Dev, d.Loop, wc)
	}
	return d, nil
}

// mkfsMount makes a filesystem on the delayed device (mkfs and its
// arguments, the device last) and mounts it at dir as fstype.
func (d *delayed) mkfsMount(mkfs string, args []string, fstype, dir string) error {
	args = append(slices.Clone(args), d.Dev)
	if out, err := d.ops.run(mkfs, args...); err != nil {
		return fmt.Errorf("%s %s: %v: %s", filepath.Base(mkfs), strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := d.ops.mount(d.Dev, dir, fstype); err != nil {
		return fmt.Errorf("mount -t %s %s %s: %w", fstype, d.Dev, dir, err)
	}
	d.Mnt, d.mounted = dir, true
	return nil
}

// teardown unmounts, removes the device-mapper device, detaches the loop
// device and removes the image, trying every step whatever failed before.
func (d *delayed) teardown() error {
	var errs []error
	if d.mounted {
		if err := d.ops.unmount(d.Mnt); err != nil {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", d.Mnt, err))
		}
		d.mounted = false
	}
	if d.mapped {
		if out, err := d.ops.run(d.ops.dmsetup, "remove", "--retry", d.Name); err != nil {
			errs = append(errs, fmt.Errorf("dmsetup remove %s: %v: %s", d.Name, err, strings.TrimSpace(string(out))))
		}
		d.mapped = false
	}
	if d.Loop != "" {
		if out, err := d.ops.run(d.ops.losetup, "-d", d.Loop); err != nil {
			errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", d.Loop, err, strings.TrimSpace(string(out))))
		}
		d.Loop = ""
	}
	if d.Image != "" {
		if err := os.Remove(d.Image); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ext4Args are mkfs.ext4's arguments for a delayed device: quiet, forced
// (it is a fresh device), and no discard of the whole device first.
var ext4Args = []string{"-q", "-F", "-E", "nodiscard"}
