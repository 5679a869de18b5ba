// Package benchrun runs the bench: the targets (every pair of checksum
// modes and crc32c implementations, and the baselines), their order in each
// round (RoundOrder, rebuilt from the seed), the prerequisites, and the
// Bencher, which for each round and target makes a fresh store, starts and
// stops the xlogfs daemon (or a baseline), runs the workload (package
// benchwork) and collects its values from the daemon's .stats, its CPU time
// and the device's flushes into the results (package benchreport). The
// kernel XFS baseline (target xfs) makes a loop-mounted XFS image with the
// stores' log geometry instead, and reads the kernel's counters and perf's
// profile around the workload (package xfsbase).
//
// With --flush-latency every target's flushes take the latency where the
// bench can make them (FlushReach): xlogfs's by its mount's emulated
// flush, the loopback's by loopback-mount's, and where the kernel has
// dm-delay (ProbeDelay) the baselines' by a device of its per round, a
// loop device over an image with dm-delay delaying its flushes alone.
// Each target's flushes of that device per fsync go beside its syncs per
// fsync by kind and its sync-write routes; a target the latency did not
// reach has them "not measured", with the probe's reason.
package benchrun
