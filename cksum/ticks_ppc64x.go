//go:build ppc64 || ppc64le

package cksum

// ticks reads the time base (ticks_ppc64x.s).
func ticks() uint64

// The counter ticks reads, for Stats.Clock.
const ticksName = "timebase"

// ticksUntrusted: the time base runs at a constant rate, the same on every
// CPU (the architecture requires it); the calibration checks it anyway.
func ticksUntrusted() string { return "" }
