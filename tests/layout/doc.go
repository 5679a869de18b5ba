// Package layout holds the tests of the repository's structure: the import
// direction of its packages (cmd → fusefs → journal → logbuf → cksum →
// amd64/ppc64 → cksum/crc32c; under journal, store → meta and xlog →
// logbuf with no edge between meta and xlog; profiling apart), checked with
// go list for
// every architecture with its own files, and the README's layout table
// against the tree. It has no code of its own.
package layout
