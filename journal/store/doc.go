// Package store is the xlogfs store directory: the superblock and mkfs,
// the checkpoint file, the lock that marks a store in use, and StoreFS, the
// filesystem every read and write of the store goes through (OSFS in use;
// the test doubles of journal/internal/testfs in tests), with what the
// journal asks of the filesystem under the store (can an overwrite skip its
// metadata: fiemap.go). The formats are in package journal's
// documentation, The store.
package store
