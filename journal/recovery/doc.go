// Package recovery brings a store's log back at mount, and reads it for
// xlogfs check and logprint without changing anything.
//
// Recover walks the log from the checkpoint's tail (journal/xlog's scan,
// which returns opaque regions), refuses a corrupt log, refuses data files
// that lack bytes a checkpoint made durable (datafiles.go; or marks those
// files, when the mount allows them), decodes each
// committed transaction's op (journal/meta) and replays it onto the
// checkpoint's model and, in data-journal mode, the data files
// (journal/datafile), except those of inodes the replayed log frees; cuts a torn tail with a warning; frees orphans; keeps
// the longer data file of an inode marked size-follows; reconciles the data
// files with the recovered model; and clears stale blocks past the head
// before the new writer starts. The rules it applies (what is torn, what is
// corrupt, what replay keeps) are defined in package journal's
// documentation, the definition of the store.
//
// Inspect does the walk and the replay in memory, and the data files'
// check, for a report; Repair
// cuts a corrupt log at its bad record.
package recovery
