package cksum

import (
	"slices"
	"sync"
	"time"
)

// clocks is what timing a record costs, measured once per process by
// calibrateClocks: wall is the wall time two back-to-back reads of the wall
// clock show, cpu the thread CPU time around an empty record (two wall
// clock reads inside two CPU clock reads). name says which clocks there are.
var clocks struct {
	once      sync.Once
	wall, cpu time.Duration
	name      string
}

// calibrateClocks measures the clocks' own cost: the median of 101 empty
// measurements each (the median, so that a measurement the scheduler
// interrupted does not count). It takes well under a millisecond.
func calibrateClocks() {
	clocks.once.Do(func() {
		const n = 101
		walls := make([]time.Duration, n)
		cpus := make([]time.Duration, n)
		_, haveCPU := threadCPUTime()
		for i := range n {
			c0, _ := threadCPUTime()
			w0 := time.Now()
			walls[i] = time.Since(w0)
			c1, _ := threadCPUTime()
			cpus[i] = c1 - c0
		}
		slices.Sort(walls)
		slices.Sort(cpus)
		clocks.wall = walls[n/2]
		clocks.name = "wall"
		if haveCPU {
			clocks.cpu = cpus[n/2]
			clocks.name = "thread"
		}
	})
}

// ClockOverhead returns what the clocks around a record cost, as
// calibrated and taken off every record's time: the wall clock pair's, and
// the CPU clock pair's (0 without a thread CPU clock).
func ClockOverhead() (wall, cpu time.Duration) {
	calibrateClocks()
	return clocks.wall, clocks.cpu
}
