package cksum

import (
	"os"
	"strings"
)

// ticks reads the time-stamp counter (ticks_amd64.s).
func ticks() uint64

// The counter ticks reads, for Stats.Clock.
const ticksName = "tsc"

// ticksUntrusted says why the time-stamp counter must not be used, or ""
// if it may be (subject to the calibration's consistency check). On Linux
// the kernel's own verdict counts: it uses the TSC as its clock source only
// when it found it invariant and in step across CPUs (a VM's kvm-clock or
// hpet means it did not, or could not tell). Elsewhere there is no such
// verdict, and the calibration alone decides.
func ticksUntrusted() string {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return ""
	}
	if src := strings.TrimSpace(string(b)); src != "tsc" {
		return "the kernel's clock source is " + src + ", not the TSC"
	}
	return ""
}
