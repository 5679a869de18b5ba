// Package xfsbase is the bench's kernel XFS baseline: what the kernel's own
// XFS log writes and what its log checksum costs under the same workload
// as xlogfs, at the same log geometry.
//
// Each round makes a sparse image file (Setup), attaches a loop device to
// it, formats it with mkfs.xfs (a version 2 internal log of the xlogfs
// store's size, no log stripe unit, so that a record is padded to 512-byte
// blocks as xlogfs pads it), mounts it with logbsize and logbufs set to
// xlogfs's iclog size and count, and afterwards unmounts it, detaches the
// loop device and removes the image (Teardown).
//
// Around the workload it reads /proc/fs/xfs/stat (ParseStat, Delta): the
// kernel's counters, summed over every XFS mounted on the machine, so any
// other XFS in use adds its own work (OtherMounts names them). The "log"
// line gives log writes (iclogs written) and the 512-byte blocks they
// wrote; a record's header takes HeaderBlocks(logbsize) of them, the rest
// is payload and padding.
//
// Where perf can profile the whole machine (Probe), a cpu-clock profile
// with call chains covers the workload (Recorder: perf record -a, switched
// on and off through its control pipe), and ParseScript reads perf
// script's output: the samples in xlog_cksum (the kernel's log checksum),
// those busy at all (idle and perf's own excluded; see Profile for the
// exact rules), each weighed by its period in CPU nanoseconds. Where perf
// cannot, Probe says why, and the bench reports the checksum CPU as not
// measured, never as zero.
package xfsbase
