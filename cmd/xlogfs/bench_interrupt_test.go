package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountsUnder lists the mount points under dir, from /proc/self/mountinfo
// (its fifth field, with spaces and the like octal-escaped).
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := fields[4]
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// processesNaming lists the processes whose command line names dir.
func processesNaming(dir string) []string {
	var out []string
	pids, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range pids {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		out = append(out, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " "))
	}
	return out
}

// Ctrl-C during a bench: the bench, run as a process of its own, gets
// SIGINT (sent to its process group, as the terminal sends it) after its
// first round; it must report an interruption (not a failure), save the
// completed runs in results.json marked partial, which bench report then
// reads, and leave no mount and no process behind.
func TestBenchInterrupted(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Fatalf("the bench needs /dev/fuse to mount (%v): load the fuse module", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(os.Args[0], "bench", "--device", "ram", "--modes", "batched", "--impls", "best,generic",
		"--rounds", "4", "--time", "2s", "--no-progress", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Whatever happens, nothing stays: the bench's process group, its
	// daemons (their own groups: found by the folder on their command
	// line), its mounts.
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, p := range processesNaming(out) {
			if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		for _, mp := range mountsUnder(t, out) {
			exec.Command("fusermount3", "-u", "-z", mp).Run()
			unix.Unmount(mp, unix.MNT_DETACH)
		}
	})

	// Round 1 is over when round 2's first mount log appears (the rounds
	// run one after another).
	deadline := time.Now().Add(90 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(out, "mount-*-2.log")); len(m) > 0 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the bench ended before its second round (%v):\n%s\n%s", err, stdout.String(), stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second round within 90 s:\n%s", stderr.String())
		}
	}
	time.Sleep(500 * time.Millisecond) // into the round's workload
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("the bench did not end within 60 s of SIGINT:\n%s", stderr.String())
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Errorf("the interrupted bench ended with %v, want exit status 1", err)
	}
	errs := stderr.String()
	if !strings.Contains(errs, "xlogfs bench: interrupted") || strings.Contains(errs, "failed") {
		t.Errorf("the interruption is not reported as one:\n%s", errs)
	}
	if !strings.Contains(stdout.String(), "PARTIAL: interrupted") {
		t.Errorf("the report does not say it is partial:\n%s", stdout.String())
	}

	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatalf("no results.json after the interrupt: %v", err)
	}
	var res struct {
		Partial    bool   `json:"partial"`
		PartialWhy string `json:"partial_why"`
		Runs       []struct {
			Target string `json:"target"`
			Round  int    `json:"round"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	round1 := 0
	for _, r := range res.Runs {
		if r.Round == 1 {
			round1++
		}
		if r.Round > 2 {
			t.Errorf("a run of round %d saved, though the bench was interrupted in round 2", r.Round)
		}
	}
	if !res.Partial || !strings.Contains(res.PartialWhy, "interrupted in round 2 of 4") || round1 != 2 {
		t.Errorf("results.json: partial %v (%q), %d runs of round 1; want partial, interrupted in round 2, both targets' round 1",
			res.Partial, res.PartialWhy, round1)
	}

	code, rep, repErr := runCapture(t, "bench", "report", "--no-chart", out)
	if code != 0 || !strings.Contains(rep, "PARTIAL: interrupted in round 2 of 4") || !strings.Contains(rep, "This run is partial") {
		t.Errorf("bench report of the partial run: exit %d, %s\n%s", code, repErr, rep)
	}

	// Nothing left: no mount under the run's folder, no process naming it.
	if m := mountsUnder(t, out); len(m) > 0 {
		t.Errorf("mounts left after the interrupt: %v", m)
	}
	time.Sleep(200 * time.Millisecond)
	if ps := processesNaming(out); len(ps) > 0 {
		t.Errorf("processes left after the interrupt:\n%s", strings.Join(ps, "\n"))
	}
}
