//go:build !amd64 && !ppc64 && !ppc64le

package cksum

// ticks is the monotonic clock in nanoseconds here: there is no cycle
// counter of ours on this architecture.
func ticks() uint64 { return monotonicTicks() }

// The counter ticks reads, for Stats.Clock.
const ticksName = "monotonic"

// ticksUntrusted: the monotonic clock is always usable.
func ticksUntrusted() string { return "" }
