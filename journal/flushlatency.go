package journal

import (
	"github.com/xlogfs/xlogfs/journal/datafile"
	"github.com/xlogfs/xlogfs/journal/xlog"
)

// flushDevice is a log device whose Sync takes the emulated latency
// (Options.FlushLatency; datafile.FlushLatency applies it to data files).
type flushDevice struct {
	xlog.Device
	lat *datafile.FlushLatency
}

func (d flushDevice) StoreLog() bool { return xlog.IsStoreLog(d.Device) }

func (d flushDevice) Sync() error {
	start := d.lat.Start()
	err := d.Device.Sync()
	d.lat.Wait(start)
	return err
}
