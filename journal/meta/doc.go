// Package meta is xlogfs's metadata model and the logical operations that
// change it: every inode, directory entry and xattr in memory (Model), the
// one Op a transaction carries, with its encoding (the region a log record
// holds, Op.Encode and DecodeOp), and the consistency check xlogfs check
// runs on a replayed model (Model.Check).
//
// It imports only the standard library and knows nothing of the log, the
// store or FUSE: package journal validates and applies ops at commit and at
// replay, and the checkpoint file (package store) holds Model.Encode. What
// each op means, and the rules recovery follows, are in package journal's
// documentation.
package meta
