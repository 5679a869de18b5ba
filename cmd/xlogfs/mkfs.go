package main

import (
	"fmt"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

func init() {
	register(command{name: "mkfs", summary: "make an empty xlogfs store in a directory", args: "DIR", min: 1, max: 1, setup: runMkfs})
}

func runMkfs(fs *flagSet) func(pos []string) error {
	fs.about = `
Makes an empty filesystem in DIR: the superblock, a zeroed circular log of
--log-size, the data directory, and an initial checkpoint holding the root
directory. DIR may be missing or empty. A non-empty directory that is not an
xlogfs store is always refused; an existing store only with --force.

A store in use is refused, --force or not: one that is mounted (in the mount
table, whether or not its daemon still holds it) or whose lock a process
holds (a mount, check, an unmount finishing); the error names the mount
point and the process, as check's does. mkfs --force holds the store's lock
while it remakes the store, so no mount can start on it meanwhile.

A store that lost only its superblock is not remade: its log and checkpoint
still hold every file. xlogfs check --rebuild-superblock writes the
superblock again.

--logbsize sets the default iclog size that mounts use; by default it is the
largest (up to 256 KiB) the log has room for.

--crc sets what every log record's CRC covers, for the store's life (the
superblock records it; mount, check and logprint read it):
  whole  every header block in full, then the payload: the record's
         contiguous bytes, which the batched mode checksums in one call
         (the default, and what stores made before --crc hold)
  xfs    what XFS's xlog_cksum covers: the record header to h_pad0 (328
         bytes), xh_cycle and xh_cycle_data (260 bytes) of the extension
         headers h_len needs, the payload; the xfs mode then makes
         exactly xlog_cksum's crc32c calls over its bytes
Every checksum mode (mount --mode) works under either.`
	logSize := &sizeFlag{n: store.DefaultLogSize}
	fs.Var(logSize, "log-size", "size of the circular log (k, m, g suffixes)")
	logbsize := &sizeFlag{}
	fs.Var(logbsize, "logbsize", "default iclog size, 32k to 256k, a power of two (default: the largest that suits the log)")
	crc := enumVar(fs, "crc", "whole", []string{"whole", "xfs"}, cksum.ParseCoverage, "what each log record's CRC covers: whole or xfs (XFS's xlog_cksum)")
	force := fs.Bool("force", false, "recreate DIR if it already is an xlogfs store (its files are lost)")
	return func(pos []string) (err error) {
		cov := crc.v
		switch {
		case logSize.n < store.MinLogSize || logSize.n > store.MaxLogSize:
			return fs.usagef("--log-size %s: want %dk to %dG", logSize, store.MinLogSize>>10, store.MaxLogSize>>30)
		case logbsize.n != 0 && logbuf.CheckLogBSize(int(logbsize.n)) != nil:
			return fs.usagef("--logbsize %s: want a power of two from %dk to %dk", logbsize, logbuf.MinLogBSize>>10, logbuf.MaxLogBSize>>10)
		}
		if err := storeArg(pos[0]); err != nil {
			return err
		}
		if err := refuseMounted(pos[0]); err != nil {
			return err
		}
		sb, err := store.Mkfs(pos[0], store.MkfsOptions{LogSize: logSize.n, LogBSize: int(logbsize.n), Coverage: cov, Force: *force})
		if err != nil {
			return inUseOf(pos[0], err)
		}
		fmt.Printf("made xlogfs store %s: log %s, logbsize %s, crc %s, uuid %x\n", pos[0], humanSize(sb.LogSize), humanSize(int64(sb.LogBSize)), sb.Coverage, sb.UUID)
		return nil
	}
}
