package benchrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

// delayMachine is a fake machine where dm-delay has everything it needs,
// its delay target loaded; each case below takes one piece away. ran
// records the programs run.
func delayMachine(ran *[]string) DelayEnv {
	present := map[string]bool{"/dev/mapper/control": true, "/sys/module/dm_mod": true, "/sys/module/dm_delay": true, "/dev/loop-control": true}
	return DelayEnv{
		Euid:     func() int { return 0 },
		Exists:   func(p string) bool { return present[p] },
		LookPath: func(n string) (string, error) { return "/usr/sbin/" + n, nil },
		Run: func(name string, args ...string) ([]byte, error) {
			*ran = append(*ran, strings.Join(append([]string{filepath.Base(name)}, args...), " "))
			return nil, errors.New("not expected")
		},
		Release: func() string { return "6.1.0-18-amd64" },
	}
}

func without(env DelayEnv, paths ...string) DelayEnv {
	old := env.Exists
	env.Exists = func(p string) bool { return !slices.Contains(paths, p) && old(p) }
	return env
}

// The probe: dm-delay is usable where the kernel has device-mapper and its
// delay target (loaded, listed by dmsetup targets, or loaded by modprobe),
// a release with the flush delay, and root, dmsetup, losetup, a loop
// device and mkfs.ext4 are there, for a latency of whole milliseconds.
// Anything missing is the reason, short ("no dm-delay in this kernel"
// where the kernel has none), and Found says what was seen of dm-delay,
// nbd and ublk.
func TestProbeDelay(t *testing.T) {
	var ran []string
	r := ProbeDelay(delayMachine(&ran), time.Millisecond, true)
	if r.Err != nil || r.Dmsetup != "/usr/sbin/dmsetup" || r.Mkfs != "/usr/sbin/mkfs.ext4" || r.Losetup == "" {
		t.Fatalf("everything there: %+v", r)
	}
	if !strings.Contains(r.Found, "dm-delay: the delay target is loaded") || !strings.Contains(r.Found, "nbd: none (no /sys/module/nbd, no /dev/nbd0)") ||
		!strings.Contains(r.Found, "ublk: none") {
		t.Errorf("found %q", r.Found)
	}
	for _, c := range []struct {
		name   string
		change func(DelayEnv) DelayEnv
		lat    time.Duration
		err    string
		found  string
	}{
		// This machine: /dev/mapper/control, but no device-mapper behind
		// it, nor a module to load.
		{"no device-mapper", func(e DelayEnv) DelayEnv {
			e = without(e, "/sys/module/dm_mod", "/sys/module/dm_delay")
			e.Run = func(name string, args ...string) ([]byte, error) {
				if filepath.Base(name) == "modprobe" {
					return []byte("modprobe: FATAL: Module dm_mod not found in directory /lib/modules/6.18.44"), errors.New("exit status 1")
				}
				return []byte("/dev/mapper/control: open failed: No such device"), errors.New("exit status 1")
			}
			return e
		}, time.Millisecond, "no dm-delay in this kernel",
			"dm-delay: no device-mapper (no /sys/module/dm_mod, no /sys/class/misc/device-mapper; /dev/mapper/control is there, " +
				"with no driver behind it; modprobe dm_mod: exit status 1: modprobe: FATAL: Module dm_mod not found"},
		{"device-mapper without delay", func(e DelayEnv) DelayEnv {
			e = without(e, "/sys/module/dm_delay")
			e.Run = func(name string, args ...string) ([]byte, error) {
				if filepath.Base(name) == "modprobe" {
					return []byte("modprobe: FATAL: Module dm_delay not found"), errors.New("exit status 1")
				}
				return []byte("striped v1.6.0\nlinear v1.4.0\nerror v1.6.0\n"), nil
			}
			return e
		}, time.Millisecond, "no dm-delay in this kernel", "device-mapper without the delay target (no delay in dmsetup targets, no /sys/module/dm_delay; modprobe dm_delay: exit status 1: modprobe: FATAL"},
		{"old kernel", func(e DelayEnv) DelayEnv { e.Release = func() string { return "4.14.0" }; return e }, time.Millisecond,
			"dm-delay has no flush delay before Linux 4.19 (this is 4.14.0)", ""},
		{"sub-millisecond", nil, 200 * time.Microsecond, "dm-delay delays in whole milliseconds, and 200µs is not", ""},
		{"fraction of a millisecond", nil, 1500 * time.Microsecond, "dm-delay delays in whole milliseconds, and 1.5ms is not", ""},
		{"not root", func(e DelayEnv) DelayEnv { e.Euid = func() int { return 1000 }; return e }, time.Millisecond, "not root", ""},
		{"no dmsetup", func(e DelayEnv) DelayEnv {
			e.LookPath = func(n string) (string, error) {
				if n == "dmsetup" {
					return "", errors.New("not found")
				}
				return "/usr/sbin/" + n, nil
			}
			return e
		}, time.Millisecond, "dmsetup not found: install it with apt-get install dmsetup", ""},
		{"no mkfs.ext4", func(e DelayEnv) DelayEnv {
			e.LookPath = func(n string) (string, error) {
				if n == "mkfs.ext4" {
					return "", errors.New("not found")
				}
				return "/usr/sbin/" + n, nil
			}
			return e
		}, time.Millisecond, "mkfs.ext4 not found: install it with apt-get install e2fsprogs", ""},
		{"no loop device", func(e DelayEnv) DelayEnv { return without(e, "/dev/loop-control") }, time.Millisecond, "no loop device", ""},
		{"nbd but no dm", func(e DelayEnv) DelayEnv {
			e = without(e, "/dev/mapper/control", "/sys/module/dm_mod", "/sys/module/dm_delay")
			old := e.Exists
			e.Exists = func(p string) bool { return p == "/dev/nbd0" || old(p) }
			return e
		}, time.Millisecond, "no dm-delay in this kernel", "nbd: present (/dev/nbd0), but the bench has no nbd device with an emulated flush"},
	} {
		var ran []string
		env := delayMachine(&ran)
		if c.change != nil {
			env = c.change(env)
		}
		r := ProbeDelay(env, c.lat, true)
		if r.Err == nil || !strings.Contains(r.Err.Error(), c.err) {
			t.Errorf("%s: error %v, want one saying %q", c.name, r.Err, c.err)
		}
		if c.found != "" && !strings.Contains(r.Found, c.found) {
			t.Errorf("%s: found %q, want it to say %q", c.name, r.Found, c.found)
		}
	}

	// The target not loaded but listed, or loaded by modprobe.
	for _, afterModprobe := range []bool{false, true} {
		var ran []string
		env := without(delayMachine(&ran), "/sys/module/dm_delay")
		loaded := !afterModprobe
		env.Run = func(name string, args ...string) ([]byte, error) {
			ran = append(ran, filepath.Base(name)+" "+strings.Join(args, " "))
			if filepath.Base(name) == "modprobe" {
				loaded = true
				return nil, nil
			}
			if loaded {
				return []byte("linear v1.4.0\ndelay            v1.4.0\n"), nil
			}
			return []byte("linear v1.4.0\n"), nil
		}
		r := ProbeDelay(env, 2*time.Millisecond, false)
		want := []string{"dmsetup targets"}
		if afterModprobe {
			want = []string{"dmsetup targets", "modprobe dm_delay", "dmsetup targets"}
		}
		if r.Err != nil || !slices.Equal(ran, want) {
			t.Errorf("delay target (modprobe needed %v): %v, ran %q; want usable after %q", afterModprobe, r.Err, ran, want)
		}
	}
}

// device-mapper as a module not loaded yet: modprobe dm_mod loads it.
func TestProbeDelayLoadsDM(t *testing.T) {
	var ran []string
	env := delayMachine(&ran)
	loaded := false
	exists := env.Exists
	env.Exists = func(p string) bool {
		if p == "/sys/module/dm_mod" || p == "/sys/module/dm_delay" {
			return loaded
		}
		return exists(p)
	}
	env.Run = func(name string, args ...string) ([]byte, error) {
		ran = append(ran, filepath.Base(name)+" "+strings.Join(args, " "))
		if filepath.Base(name) == "modprobe" && args[0] == "dm_mod" {
			loaded = true // dm_delay comes with it here
		}
		return nil, nil
	}
	if r := ProbeDelay(env, time.Millisecond, true); r.Err != nil || !slices.Equal(ran, []string{"modprobe dm_mod"}) {
		t.Errorf("%v, ran %q; want dm-delay usable once modprobe dm_mod loaded device-mapper", r.Err, ran)
	}
}

func TestReleaseAtLeast(t *testing.T) {
	for rel, want := range map[string]bool{"4.19.0": true, "4.18.20": false, "6.1.0-18-amd64": true, "5.4": true, "3.10.0-1160.el7": false, "": false, "x": false} {
		if got := releaseAtLeast(rel, "4.19"); got != want {
			t.Errorf("releaseAtLeast(%q, 4.19) = %v, want %v", rel, got, want)
		}
	}
}

// dm-delay's table: the 9-argument form over one device, reads and writes
// undelayed, flushes delayed by the latency in milliseconds.
func TestDelayTable(t *testing.T) {
	got, err := delayTable("/dev/loop3", 4<<21, 5*time.Millisecond)
	if want := "0 8388608 delay /dev/loop3 0 0 /dev/loop3 0 0 /dev/loop3 0 5"; err != nil || got != want {
		t.Errorf("table %q, %v; want %q", got, err, want)
	}
	if f := strings.Fields(got); len(f) != 3+9 || f[2] != "delay" {
		t.Errorf("table %q: want start, length, delay and 9 arguments", got)
	}
	for _, lat := range []time.Duration{0, 200 * time.Microsecond, 1500 * time.Microsecond} {
		if _, err := delayTable("/dev/loop3", 100, lat); err == nil {
			t.Errorf("latency %v: a table, want an error (dm-delay takes whole milliseconds)", lat)
		}
	}
}

// FlushReach: xlogfs by its mount's emulated flush; without dm-delay the
// loopback by its own and native and xfs not at all, for the probe's
// reason; with dm-delay every baseline on it.
func TestFlushReach(t *testing.T) {
	targets := []benchreport.Target{{Name: "batched/avx512", Kind: "xlogfs"}, {Name: "loopback", Kind: "loopback"},
		{Name: "native", Kind: "native"}, {Name: "xfs", Kind: "xfs"}}
	if got := FlushReach(0, targets, nil); got != nil {
		t.Errorf("no --flush-latency: %v, want nothing", got)
	}
	none := &DelayReadiness{Err: errors.New("no dm-delay in this kernel")}
	got := fmt.Sprint(FlushReach(time.Millisecond, targets, none))
	for _, want := range []string{"{batched/avx512 true xlogfs mount --flush-latency: every log flush and data-file sync takes 1ms }",
		"{loopback true loopback-mount --flush-latency: every FSYNC and FSYNCDIR it serves takes 1ms }",
		"{native false  no dm-delay in this kernel}", "{xfs false  no dm-delay in this kernel}"} {
		if !strings.Contains(got, want) {
			t.Errorf("without dm-delay: %s\nlacks %s", got, want)
		}
	}
	got = fmt.Sprint(FlushReach(time.Millisecond, targets, &DelayReadiness{}))
	for _, want := range []string{"{loopback true its directory ext4 on dm-delay, every flush delayed 1ms",
		"{native true ext4 on dm-delay", "{xfs true XFS on dm-delay"} {
		if !strings.Contains(got, want) {
			t.Errorf("with dm-delay: %s\nlacks %s", got, want)
		}
	}
}

// fakeDelayOps records what making a delayed device runs; fail names a
// program (by its first argument) that fails.
type fakeDelayOps struct {
	ran        []string
	fail       string
	writeCache string
}

func (f *fakeDelayOps) ops() delayOps {
	return delayOps{
		dmsetup: "/sbin/dmsetup", losetup: "/sbin/losetup",
		run: func(name string, args ...string) ([]byte, error) {
			cmd := filepath.Base(name) + " " + strings.Join(args, " ")
			f.ran = append(f.ran, cmd)
			if f.fail != "" && strings.HasPrefix(cmd, f.fail) {
				return []byte("it failed"), errors.New("exit status 1")
			}
			if strings.HasPrefix(cmd, "losetup --find") {
				return []byte("/dev/loop7\n"), nil
			}
			return nil, nil
		},
		mount: func(dev, dir, fstype string) error {
			f.ran = append(f.ran, "mount "+fstype+" "+dev+" "+dir)
			return nil
		},
		unmount:    func(dir string) error { f.ran = append(f.ran, "umount "+dir); return nil },
		writeCache: func(dev string) (string, error) { return f.writeCache, nil },
	}
}

// Making a delayed device: the image, a loop device over it, dm-delay with
// the flush delay over that, ext4 on it, mounted; torn down in reverse.
// A step that fails undoes the ones before, and a device-mapper device
// that would drop flushes (write through) is refused, not used.
func TestMakeDelayed(t *testing.T) {
	dir := t.TempDir()
	f := &fakeDelayOps{writeCache: "write back"}
	img := filepath.Join(dir, "delayed.img")
	d, err := makeDelayed(f.ops(), img, 1<<30, "xlogfs-bench-1-native-1", 2*time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.mkfsMount("/sbin/mkfs.ext4", ext4Args, "ext4", filepath.Join(dir, "store")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(img); err != nil || st.Size() != 1<<30 {
		t.Errorf("image %v, %v; want 1 GiB", st, err)
	}
	if err := d.teardown(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"losetup --find --show " + img,
		"dmsetup create xlogfs-bench-1-native-1 --table 0 2097152 delay /dev/loop7 0 0 /dev/loop7 0 0 /dev/loop7 0 2",
		"mkfs.ext4 -q -F -E nodiscard /dev/mapper/xlogfs-bench-1-native-1",
		"mount ext4 /dev/mapper/xlogfs-bench-1-native-1 " + filepath.Join(dir, "store"),
		"umount " + filepath.Join(dir, "store"),
		"dmsetup remove --retry xlogfs-bench-1-native-1",
		"losetup -d /dev/loop7",
	}
	if !slices.Equal(f.ran, want) {
		t.Errorf("ran\n%s\nwant\n%s", strings.Join(f.ran, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(img); !os.IsNotExist(err) {
		t.Errorf("the image is left after teardown: %v", err)
	}

	for _, c := range []struct {
		name, fail, wc, err string
		undo                []string
	}{
		{"dmsetup create fails", "dmsetup create", "write back", "dmsetup create xlogfs-bench-x", []string{"losetup -d /dev/loop7"}},
		{"write through", "", "write through", `reports write_cache "write through"`,
			[]string{"dmsetup remove --retry xlogfs-bench-x", "losetup -d /dev/loop7"}},
		{"losetup fails", "losetup --find", "write back", "losetup --find --show", nil},
	} {
		f := &fakeDelayOps{fail: c.fail, writeCache: c.wc}
		img := filepath.Join(t.TempDir(), "delayed.img")
		d, err := makeDelayed(f.ops(), img, 1<<30, "xlogfs-bench-x", time.Millisecond, false)
		if err == nil || d != nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, %v; want an error saying %q", c.name, d, err, c.err)
			continue
		}
		i := slices.IndexFunc(f.ran, func(s string) bool {
			return strings.HasPrefix(s, "dmsetup remove") || strings.HasPrefix(s, "losetup -d")
		})
		var undone []string
		if i >= 0 {
			undone = f.ran[i:]
		}
		if !slices.Equal(undone, c.undo) {
			t.Errorf("%s: undid %q, want %q (ran %q)", c.name, undone, c.undo, f.ran)
		}
		if _, err := os.Stat(img); !os.IsNotExist(err) {
			t.Errorf("%s: the image is left: %v", c.name, err)
		}
	}
}
