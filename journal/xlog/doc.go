// Package xlog is xlogfs's log manager, after XFS's struct xlog: the ring
// of in-core log buffers (each a logbuf.Iclog and what the log knows of the
// record it holds), log forces with group commit, the log head and tail,
// and the rounds of log I/O that seal, write and sync records (one at a
// time: the goroutine that forces runs one itself when the log is idle, as
// XFS's xlog_force_lsn does, and forces that find one in flight join the
// next); the
// recovery scan that walks the log from a checkpoint's tail and decides how
// it ends (ScanLog: the rules are package journal's documentation,
// Recovery); the clearing of stale blocks past the head after a crash
// (ZeroAfterHead); the records behind the tail (OldRecords) for logprint;
// and the Device the log lives on.
//
// It knows nothing of what a transaction means: Commit takes opaque
// regions (asking for them once it knows the record the transaction
// starts in) and an item the log hands back once the record holding the
// transaction is durable (Config.OnDurable), and the scan returns records
// whose regions the caller decodes (Window.Describe names them when a cut
// is at stake). The record format is package logbuf's.
package xlog
