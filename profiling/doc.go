// Package profiling is how xlogfs looks at where its CPU time goes: it
// serves net/http/pprof and expvar on a loopback address (Serve), writes a
// CPU profile for the life of a mount (StartCPUProfile, or
// StartCPUProfileRate at a rate that resolves a share of 0.1 %; either
// writes the profile scaled to the process's CPU time, as the kernel
// delivers fewer samples than a fast rate asks), and
// computes from a CPU profile the share of CPU time spent in checksum code
// (Analyze, AnalyzeFiles), overall and per checksum mode. Samples in the
// checksum counters' own clock reads (IsTimingFunc) are measuring, not
// checksumming, and are counted apart.
//
// The checksum work of the journal runs under the pprof labels
// cksum_mode=<batched|xfs|sector|inline> and phase=checksum (LabelMode,
// LabelPhase; package profiling/labels defines them for the journal and the
// analyser alike), which Analyze breaks the profile down by. Which functions
// count as checksum code is IsChecksumFunc's to say.
//
// Package profiling sits beside the filesystem, not in it: it must not
// import fusefs, journal or logbuf, so the binary and the bench can use it
// without pulling the filesystem in.
package profiling
