// Package span is sets of byte ranges [Lo, Hi), kept sorted and disjoint:
// the parts of an immediate write's logged bytes that a replay must still
// write (no later write covers them), and the ranges of a file CrashFS has
// written to its disk.
package span
