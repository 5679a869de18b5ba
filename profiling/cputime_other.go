//go:build !unix

package profiling

import (
	"errors"
	"time"
)

// processCPUTime cannot tell the process's CPU time here: the profile is
// written as the runtime took it.
func processCPUTime() (time.Duration, error) {
	return 0, errors.New("no getrusage on this system")
}
