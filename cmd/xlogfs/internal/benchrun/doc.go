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
package benchrun
