package journal

import (
	"os"
	"path/filepath"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/store"
)

// Passthrough: under kernel FUSE passthrough (package fusefs) the kernel
// reads and writes a regular file's data file directly while the file is
// open, and the journal learns what that did to the inode from the data
// file. The rules, and the size-follows mark that keeps the kernel's
// synchronous appends across a crash, are package datafile's
// (datafile/passthrough.go); the engine counts the opens and frees the
// inode after its last release.

// OpenPassthrough counts an open of the regular file ino, as Open does,
// whose data file the caller (the kernel) reads, and writes if write is
// set, directly. It returns the data file, created if missing, valid until
// the open's ReleasePassthrough; or a nil file when the open must go
// through the daemon (datafile.Files.OpenPassthrough says when). Either
// kind of open is undone by ReleasePassthrough.
func (fs *FS) OpenPassthrough(ino meta.Ino, write, preferDaemon bool) (store.StoreFile, error) {
	if err := fs.Open(ino); err != nil {
		return nil, err
	}
	f, err := fs.files.OpenPassthrough(ino, write, preferDaemon)
	if err != nil {
		fs.Release(ino)
		return nil, errno(err)
	}
	return f, nil
}

// ReleasePassthrough undoes OpenPassthrough, given write as it was and
// passthrough, whether it returned a data file: the journal learns what
// the kernel did to the file, then counts the release; the last release of
// an unlinked, unheld inode frees it.
func (fs *FS) ReleasePassthrough(ino meta.Ino, write, passthrough bool) error {
	err := fs.files.ReleasePassthrough(ino, write, passthrough)
	if ferr := fs.maybeFree(ino); err == nil {
		err = ferr
	}
	return errno(err)
}

// OpenProbe opens a file of the store read-only, to try whether the
// kernel accepts the store's files as passthrough backing files.
func (fs *FS) OpenProbe() (store.StoreFile, error) {
	return fs.st.OpenFile(filepath.Join(fs.dir, store.SuperblockName), os.O_RDONLY, 0)
}
