package xlog

// Device is where the log lives. The journal writes whole records at block
// offsets and makes them durable with Sync; nothing written is durable
// before Sync returns. Tests substitute CrashDevice.
type Device interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Sync() error // durable: fdatasync for a file
	Size() int64
	Close() error
}

// StoreLog is a Device that is the store's own log file (DIR/log, through
// the store's StoreFS), or wraps it: its Sync is then a flush of the
// filesystem the data files are on, which an fsync may count on to make a
// data file's written-back blocks durable too (FS.flushCovers). A Device
// that does not say so is taken to be elsewhere.
type StoreLog interface {
	Device
	StoreLog() bool
}

// IsStoreLog reports whether d says it is the store's log file.
func IsStoreLog(d Device) bool {
	s, ok := d.(StoreLog)
	return ok && s.StoreLog()
}

// File is what the log needs of its file: a StoreFile has it.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Datasync() error
	Size() (int64, error)
	Close() error
}

// fileDevice is the log file of a store.
type fileDevice struct {
	f    File
	size int64
}

// NewFileDevice makes the open log file f a Device; it closes f if that
// fails.
func NewFileDevice(f File) (Device, error) {
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileDevice{f: f, size: size}, nil
}

func (d *fileDevice) ReadAt(p []byte, off int64) (int, error)  { return d.f.ReadAt(p, off) }
func (d *fileDevice) WriteAt(p []byte, off int64) (int, error) { return d.f.WriteAt(p, off) }
func (d *fileDevice) Size() int64                              { return d.size }
func (d *fileDevice) Close() error                             { return d.f.Close() }
func (d *fileDevice) StoreLog() bool                           { return true }

// Sync uses fdatasync: the log file's size never changes, so its data is
// all that needs to reach the disk.
func (d *fileDevice) Sync() error { return d.f.Datasync() }
