package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/statsfile"
	"github.com/xlogfs/xlogfs/journal/store"
	"github.com/xlogfs/xlogfs/logbuf"
)

// A mount checksums under its store's CRC coverage and says so in .stats
// (crc_coverage); on an xfs-coverage store the xfs mode's crc32c calls and
// bytes are xlog_cksum's for each record's h_len (1 + extension headers
// needed + 1 calls; 328 + 260 per extension header + h_len bytes), and
// the records verify under that coverage only.
func TestMountUsesStoreCoverage(t *testing.T) {
	for _, cov := range cksum.Coverages() {
		dir := filepath.Join(t.TempDir(), "store")
		if _, err := store.Mkfs(dir, store.MkfsOptions{LogSize: 8 << 20, LogBSize: 256 << 10, Coverage: cov}); err != nil {
			t.Fatal(err)
		}
		fs := mount(t, dir, Options{Mode: cksum.XFS, Journal: JournalData, LogBufs: 2})
		a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
		for i := range 12 {
			// 1 KiB to 200 KiB: records with none to six extension headers in the CRC
			must[int](t)(fs.Write(a.Ino, bytes.Repeat([]byte{byte(i)}, 1024+i*17000), 0))
			check(t, fs.Fsync(a.Ino, false))
		}
		st := fs.Stats()
		var buf bytes.Buffer
		st.WriteTo(&buf)
		f, err := statsfile.Parse(buf.Bytes())
		check(t, err)
		if v, _ := f.Value("crc_coverage"); v != cov.String() {
			t.Errorf("%s store: .stats says crc_coverage %q", cov, v)
		}
		check(t, fs.Close())
		sum := fs.x.Sum.Stats() // the unmount record's too
		img, err := os.ReadFile(filepath.Join(dir, store.LogName))
		check(t, err)

		// What the records' h_len ask of xlog_cksum, from the log itself
		// (the mount's records, one after the other from block 0).
		var calls, nbytes uint64
		n := 0
		for off := 0; off+logbuf.BBSize <= len(img); off += logbuf.BBSize {
			h, err := logbuf.ParseHeader(img[off:])
			if err != nil || int(h.LSN.Block()) != off/logbuf.BBSize {
				continue
			}
			rec := img[off : off+h.RecordBytes()]
			if _, _, err := logbuf.VerifyRecord(rec, cov); err != nil {
				t.Fatalf("%s store: record %v: %v", cov, h.LSN, err)
			}
			if _, _, err := logbuf.VerifyRecord(rec, logbuf.CoverWhole+logbuf.CoverXFS-cov); err == nil {
				t.Fatalf("%s store: record %v verifies under the other coverage", cov, h.LSN)
			}
			x := (int(h.Len)+32<<10-1)/(32<<10) - 1
			if cov == logbuf.CoverXFS {
				calls += uint64(2 + x)
				nbytes += uint64(328 + 260*x + int(h.Len))
			} else {
				calls += uint64(2 + 7) // every header block, the payload
				nbytes += uint64(h.RecordBytes())
			}
			n++
			off += h.RecordBytes() - logbuf.BBSize
		}
		if n < 12 || uint64(n) != sum.Records || sum.Calls != calls || sum.Bytes != nbytes {
			t.Errorf("%s store: xfs mode made %d calls over %d bytes for %d records; the %d records in the log need %d over %d",
				cov, sum.Calls, sum.Bytes, sum.Records, n, calls, nbytes)
		}
	}
}
