package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestXFSCoverageStore: a store made with mkfs --crc xfs is written and
// read back in every checksum mode; .stats and the mount's log name its
// coverage; check and logprint verify it; and in the xfs mode the crc32c
// calls and bytes are xlog_cksum's for the records written: per record one
// call over the 328-byte header and one over the payload, and one over 260
// bytes per extension header the payload needs (the same count in calls and
// bytes), whatever the iclog size.
func TestXFSCoverageStore(t *testing.T) {
	t.Parallel()
	store, mnt := newStore(t)
	mkfs(t, store, "--crc", "xfs", "--log-size", "32m", "--logbsize", "256k")
	want := map[string][]byte{}
	for i, mode := range []string{"xfs", "batched", "sector", "inline", "xfs"} {
		m := mountForeground(t, store, mnt, "--journal", "data", "--cksum-mode", mode)
		for name, b := range want {
			if got, err := os.ReadFile(filepath.Join(mnt, name)); err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%s mount: %s: %d bytes (%v), want %d", mode, name, len(got), err, len(b))
			}
		}
		for j := range 8 {
			name := fmt.Sprintf("%s%d-%d", mode, i, j)
			b := bytes.Repeat([]byte(name+" "), 1+j*j*2000) // records of every size, up to full 256 KiB ones
			if err := os.WriteFile(filepath.Join(mnt, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(mnt, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			want[name] = b
		}
		st := quietStats(t, mnt)
		if st["crc_coverage"] != "xfs" || st["cksum_mode"] != mode {
			t.Fatalf("%s mount: .stats crc_coverage %q, cksum_mode %q", mode, st["crc_coverage"], st["cksum_mode"])
		}
		if mode == "xfs" {
			records, hlen := statUint(t, st, "log_records"), statUint(t, st, "log_bytes")-statUint(t, st, "log_header_bytes")
			calls, n := statUint(t, st, "cksum_seal_calls"), statUint(t, st, "cksum_seal_bytes")
			ext := calls - 2*records // extension headers in the CRC
			if calls < 2*records || n != 328*records+260*ext+hlen || ext == 0 || ext > 7*records {
				t.Errorf("xfs mode on an xfs-coverage store: %d records of %d payload bytes in %d calls over %d bytes: "+
					"not 2 calls and 328 + h_len bytes a record, and 260 bytes a further call", records, hlen, calls, n)
			}
		}
		m.unmount(t)
		if log := m.log(); !strings.Contains(log, "under the store's xfs CRC coverage") {
			t.Errorf("%s mount's log does not name the coverage:\n%s", mode, log)
		}
		if out := checkStore(t, store, true); !strings.Contains(out, "crc xfs") {
			t.Errorf("check does not name the coverage:\n%s", out)
		}
	}
	out, err := xlogfs("logprint", "--all", store)
	if err != nil || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "crc xfs") || strings.Contains(out, "error:") {
		t.Fatalf("logprint --all of the xfs-coverage store: %v\n%s", err, out)
	}
}

// quietStats reads .stats once the log has settled: every record sealed
// has been written (cksum_records is log_records).
func quietStats(t *testing.T, mnt string) map[string]string {
	t.Helper()
	for range 100 {
		st := readStats(t, mnt)
		if st["cksum_records"] == st["log_records"] {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal(".stats: cksum_records never matched log_records")
	return nil
}
