// Package labels is the one definition of the pprof labels xlogfs's
// journal runs its log writer under and package profiling's analyser
// breaks CPU profiles down by. It imports nothing, so the journal can use
// it without importing the analyser (which must not import the
// filesystem, nor be imported by it).
package labels

const (
	// Phase says what the labelled code is doing: PhaseChecksum while it
	// seals and checksums records, PhaseLogWrite for the rest of the log
	// writer's work.
	Phase         = "phase"
	PhaseChecksum = "checksum"
	PhaseLogWrite = "logwrite"
	// Mode is the checksum mode of the checksum work: batched, xfs, sector
	// or inline (cksum.Mode's names).
	Mode = "cksum_mode"
)
