package xfsbase

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// controlled is a perf command (record or stat) on the whole machine,
// started with its events disabled (-D -1) and switched on and off through
// its control pipe (--control fd:3,4), so that what it measures is the
// workload's time alone.
type controlled struct {
	what   string // "perf record", "perf stat"
	cmd    *exec.Cmd
	ctl    *os.File
	acks   chan string
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
	stderr bytes.Buffer
}

// commandTimeout bounds perf's answer to a control command.
const commandTimeout = 15 * time.Second

func startControlled(perf, sub string, args ...string) (*controlled, error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	c := &controlled{what: "perf " + sub, ctl: ctlW, acks: make(chan string, 4), exited: make(chan struct{})}
	c.cmd = exec.Command(perf, append([]string{sub, "-D", "-1", "--control", "fd:3,4"}, args...)...)
	c.cmd.ExtraFiles = []*os.File{ctlR, ackW}
	c.cmd.Stdout, c.cmd.Stderr = &c.stderr, &c.stderr
	// Its own process group: a ^C at the terminal reaches the bench, which
	// stops perf itself. Pdeathsig: a bench that dies leaves no perf behind.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = c.cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		ctlW.Close()
		ackR.Close()
		return nil, fmt.Errorf("starting %s: %w", c.what, err)
	}
	go func() {
		sc := bufio.NewScanner(ackR)
		for sc.Scan() {
			// perf writes "ack\n" with its C string's NUL.
			c.acks <- strings.Trim(sc.Text(), "\x00 \t\r")
		}
		ackR.Close()
	}()
	go func() {
		c.err = c.cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Pid is perf's process id.
func (c *controlled) Pid() int { return c.cmd.Process.Pid }

// command sends perf a control command and waits for its ack.
func (c *controlled) command(cmd string) error {
	if _, err := fmt.Fprintln(c.ctl, cmd); err != nil {
		return fmt.Errorf("%s: sending %q: %w%s", c.what, cmd, err, c.tail())
	}
	select {
	case a := <-c.acks:
		if a != "ack" {
			return fmt.Errorf("%s answered %q to %q%s", c.what, a, cmd, c.tail())
		}
		return nil
	case <-c.exited:
		return fmt.Errorf("%s exited (%v) before it acknowledged %q%s", c.what, c.err, cmd, c.tail())
	case <-time.After(commandTimeout):
		return fmt.Errorf("%s did not acknowledge %q within %v%s", c.what, cmd, commandTimeout, c.tail())
	}
}

// Enable starts measuring; it returns once perf has.
func (c *controlled) Enable() error { return c.command("enable") }

// Stop stops measuring and lets perf write its output and exit. The
// control pipe stays open until perf has exited: perf takes its closing
// for an error, and perf record then writes no data.
func (c *controlled) Stop() error {
	defer c.ctl.Close()
	derr := c.command("disable")
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(60 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("%s did not exit within 60 s of SIGINT%s", c.what, c.tail())
	}
	if derr != nil {
		return derr
	}
	// After a SIGINT perf writes its output, then exits with 0 or raises
	// SIGINT again.
	if c.err != nil {
		var ee *exec.ExitError
		if !errors.As(c.err, &ee) {
			return fmt.Errorf("%s: %v%s", c.what, c.err, c.tail())
		}
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			return fmt.Errorf("%s: %v%s", c.what, c.err, c.tail())
		}
	}
	return nil
}

// Kill ends perf however it can (after a failure).
func (c *controlled) Kill() {
	defer c.ctl.Close()
	select {
	case <-c.exited:
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
}

func (c *controlled) tail() string {
	s := strings.TrimSpace(c.stderr.String())
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return ":\n" + strings.Join(lines, "\n")
}
