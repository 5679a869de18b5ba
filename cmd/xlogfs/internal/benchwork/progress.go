package benchwork

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Progress draws a one-line progress bar on stderr while a run goes.
type Progress struct {
	label string
	total time.Duration
	start time.Time
	tty   bool
	on    bool
}

func NewProgress(label string, total time.Duration, on bool) *Progress {
	_, err := unix.IoctlGetTermios(int(os.Stderr.Fd()), unix.TCGETS)
	p := &Progress{label: label, total: total, start: time.Now(), tty: err == nil, on: on}
	if on && !p.tty {
		fmt.Fprintf(os.Stderr, "%s ...\n", label)
	}
	return p
}

// run redraws the bar twice a second until stop closes; status adds a
// live figure (current throughput).
func (p *Progress) run(stop <-chan struct{}, status func() string) {
	if !p.on || !p.tty {
		<-stop
		return
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		el := time.Since(p.start)
		frac := min(1, el.Seconds()/p.total.Seconds())
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(os.Stderr, "\r\033[K%s ▕%s%s▏ %3.0fs/%.0fs %s", p.label, strings.Repeat("█", n), strings.Repeat("░", width-n),
			el.Seconds(), p.total.Seconds(), status())
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func (p *Progress) Done() {
	if p.on && p.tty {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
}
