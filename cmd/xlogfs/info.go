package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/store"
)

func init() {
	register(command{name: "info", summary: "a store's or mount's geometry and state, as xfs_info: log, checksum, journal mode, mounted where", args: "STORE|MOUNTPOINT", min: 1, max: 1, setup: runInfo})
}

// storeInfo is what info prints; a mount's choices are read from its
// .stats, an unmounted store's from its superblock and log.
type storeInfo struct {
	Store      string   `json:"store"`
	UUID       string   `json:"uuid,omitempty"`
	LogSize    int64    `json:"log_size"`
	LogBSize   int64    `json:"logbsize"`
	LogBufs    int      `json:"logbufs,omitempty"`
	CRC        string   `json:"crc_coverage"`
	CksumMode  string   `json:"cksum_mode,omitempty"`
	CksumImpl  string   `json:"cksum_impl,omitempty"`
	Journal    string   `json:"journal,omitempty"`
	LogItems   string   `json:"log_items,omitempty"`
	MountMode  string   `json:"mount_mode,omitempty"`
	State      string   `json:"state"`
	MountedAt  []string `json:"mounted_at,omitempty"`
	LockedBy   []string `json:"locked_by,omitempty"`
	Records    int      `json:"log_records,omitempty"`
	Replayable int      `json:"transactions_to_replay,omitempty"`
}

func runInfo(fs *flagSet) func([]string) error {
	fs.about = `
Prints what a store is and how it is mounted, as xfs_info does for XFS: the
log's size, its default iclog size (logbsize) and, when mounted, the iclog
count (logbufs); what each record's CRC covers (mkfs --crc); when mounted,
the checksum mode, the crc32c kernel and the journal mode the mount chose
(an unmounted store has none: they are mount flags); the state, clean (the
log ends with an unmount record), dirty (a mount will replay it) or in use;
and where it is mounted, by which process.

The argument is a store directory or the mount point of one. An unmounted
store's log is read (as check reads it) to tell clean from dirty.`
	asJSON := fs.Bool("json", false, "print JSON")
	return func(pos []string) error {
		in, err := gatherInfo(pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(os.Stdout, in)
		}
		printInfo(os.Stdout, in)
		return nil
	}
}

func gatherInfo(arg string) (*storeInfo, error) {
	if err := storeArg(arg); err != nil {
		return nil, err
	}
	if _, err := os.Stat(arg); err != nil {
		return nil, fmt.Errorf("%s does not exist", arg)
	}
	in := &storeInfo{}
	dir, mnt := "", ""
	if m, err := mountPath(arg); err == nil {
		if s, err := xlogfsMount(m); err == nil {
			dir, mnt = s, m
		}
	}
	if dir == "" {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return nil, err
		}
		if !store.IsStore(store.OSFS(), abs) {
			return nil, fmt.Errorf("%s is neither an xlogfs store nor the mount point of one", arg)
		}
		dir = abs
		if ms := storeMounts(dir); len(ms) > 0 {
			mnt = ms[0]
		}
	}
	in.Store = dir
	in.MountedAt = storeMounts(dir)
	in.LockedBy = lockHolders(dir)
	if mnt != "" {
		st, err := readMountStats(mnt)
		if err != nil {
			return nil, err
		}
		v := func(name string) string { s, _ := st.file.Value(name); return s }
		n := func(name string) int64 { x, _ := strconv.ParseInt(v(name), 10, 64); return x }
		in.LogSize, in.LogBSize, in.LogBufs = n("log_size"), n("logbsize"), int(n("logbufs"))
		in.CRC, in.CksumMode, in.CksumImpl, in.Journal, in.MountMode = v("crc_coverage"), v("cksum_mode"), v("cksum_impl"), v("journal"), v("mount_mode")
		in.LogItems = v("log_items")
		in.State = "in use: mounted, journal " + v("state")
		if len(in.MountedAt) == 0 {
			in.MountedAt = []string{mnt}
		}
	}
	if in.CRC == "" || mnt == "" {
		rep, err := recovery.Inspect(dir)
		if err != nil {
			return nil, err
		}
		sb := rep.Superblock
		in.UUID = fmt.Sprintf("%x", sb.UUID)
		in.LogSize, in.LogBSize, in.CRC = sb.LogSize, int64(sb.LogBSize), sb.Coverage.String()
		in.Records, in.Replayable = len(rep.Records), rep.Replayed
		switch {
		case rep.Mounted:
			in.State = "in use (locked by another process)"
		case rep.Corrupt != nil || rep.ReplayErr != nil || len(rep.Problems) > 0:
			in.State = "damaged: run xlogfs check " + dir
		case rep.Clean:
			in.State = "clean (the log ends with an unmount record)"
		case len(rep.Records) == 0:
			in.State = "clean (nothing logged since mkfs)"
		default:
			in.State = fmt.Sprintf("dirty (no unmount record: a mount replays %d transactions)", rep.Replayed)
		}
	}
	return in, nil
}

func printInfo(w io.Writer, in *storeInfo) {
	line := func(k, v string) { fmt.Fprintf(w, "%-9s %s\n", k, v) }
	s := in.Store
	if in.UUID != "" {
		s += " (uuid " + in.UUID + ")"
	}
	line("store", s)
	log := fmt.Sprintf("size %s, logbsize %s", formatSize(in.LogSize), formatSize(in.LogBSize))
	if in.LogBufs > 0 {
		log += fmt.Sprintf(", logbufs %d", in.LogBufs)
	}
	line("log", log)
	ck := "crc covers " + in.CRC
	if in.CksumMode != "" {
		ck += ", mode " + in.CksumMode + ", kernel " + in.CksumImpl
	} else {
		ck += "; mode and kernel are chosen at mount (--cksum-mode, --cksum-impl)"
	}
	line("checksum", ck)
	if in.Journal != "" {
		j := in.Journal
		if in.LogItems != "" {
			j += ", log items " + in.LogItems
		}
		line("journal", j+", mounted "+in.MountMode)
	} else {
		line("journal", "chosen at mount (--journal meta or data, --log-items xfs or logical)")
	}
	line("state", in.State)
	switch {
	case len(in.MountedAt) > 0 && len(in.LockedBy) > 0:
		line("mounted", "at "+strings.Join(in.MountedAt, ", ")+" by "+strings.Join(in.LockedBy, ", "))
	case len(in.MountedAt) > 0:
		line("mounted", "at "+strings.Join(in.MountedAt, ", "))
	default:
		line("mounted", "no")
	}
}
