package journal

import (
	"os"

	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// OpenFileDevice opens a store's log file.
func OpenFileDevice(path string) (xlog.Device, error) { return openFileDevice(store.OSFS(), path) }

func openFileDevice(st store.StoreFS, path string) (xlog.Device, error) {
	f, err := st.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return xlog.NewFileDevice(f)
}
