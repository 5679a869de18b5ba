package journal

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/statsfile"
)

// TestStatsFileRoundTrip writes a mount's stats after some work and reads
// them back with ParseStats: every counter under its name, histograms in
// numeric bucket order with the counts and percentiles WriteTo had, and
// the record bytes split into header and payload.
func TestStatsFileRoundTrip(t *testing.T) {
	dir := mkfs(t, 8<<20, 64<<10)
	fs := mount(t, dir, Options{Journal: JournalData})
	a := must[Attr](t)(fs.Create(meta.RootIno, "f", meta.ModeReg|0o644, 0, 0, 0, ""))
	for i := range 50 {
		must[int](t)(fs.Write(a.Ino, bytes.Repeat([]byte{byte(i)}, 100+i*300), int64(i)*20000))
		check(t, fs.Fsync(a.Ino, false))
	}
	st := fs.Stats()
	check(t, fs.Close())
	var buf bytes.Buffer
	st.WriteTo(&buf)
	f, err := statsfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("ParseStats of WriteTo's output: %v\n%s", err, buf.String())
	}
	num := func(name string) float64 {
		t.Helper()
		v, ok := f.Number(name)
		if !ok {
			t.Fatalf(".stats has no number %s", name)
		}
		return v
	}
	if num("log_records") != float64(st.Records) || num("fsyncs") != 50 || num("log_bytes") != float64(st.RecordBytes) {
		t.Errorf("log_records %v, fsyncs %v, log_bytes %v; want %d, 50, %d", num("log_records"), num("fsyncs"), num("log_bytes"), st.Records, st.RecordBytes)
	}
	// A 64 KiB iclog has 2 header blocks; a record's bytes are its header
	// blocks, its payload and the padding to a block.
	hdr, payload, total := num("log_header_bytes"), num("log_payload_bytes"), num("log_bytes")
	if hdr != float64(st.Records)*1024 || payload <= 0 || hdr+payload > total || total-hdr-payload >= float64(st.Records)*512 {
		t.Errorf("header %v + payload %v bytes against %v in %d records: want 1024 header bytes a record and under a block of padding", hdr, payload, total, st.Records)
	}
	// Batched mode copies the ops in outside the checksum and times it, so
	// copy+checksum CPU is the checksum's at seal plus the plain copy's.
	// Every op's region was copied so: the payload less 12 bytes an op
	// header (the regions here are most of it).
	if rest := payload - num("copy_plain_bytes"); int(rest)%12 != 0 || rest > payload/10 || num("copy_plain_ns") <= 0 ||
		num("copy_cksum_ns") != num("cksum_seal_ns")+num("cksum_copy_ns")+num("copy_plain_ns") {
		t.Errorf("copy_plain_bytes %v of %v payload bytes, copy_plain_ns %v, copy_cksum_ns %v = seal %v + copy %v + plain %v?",
			num("copy_plain_bytes"), payload, num("copy_plain_ns"), num("copy_cksum_ns"), num("cksum_seal_ns"), num("cksum_copy_ns"), num("copy_plain_ns"))
	}
	if v, _ := f.Value("cksum_mode"); v != "batched" {
		t.Errorf("cksum_mode %q", v)
	}
	if _, ok := f.Number("cksum_mode"); ok {
		t.Error("cksum_mode parsed as a number")
	}
	for _, name := range statsfile.HistNames {
		h := f.Hist(name)
		if len(h.Buckets) == 0 {
			t.Errorf("%s: no buckets", name)
			continue
		}
		for i := 1; i < len(h.Buckets); i++ {
			if h.Buckets[i].Lo < h.Buckets[i-1].Hi {
				t.Errorf("%s: bucket %d [%d,%d) before the previous one's end %d", name, i, h.Buckets[i].Lo, h.Buckets[i].Hi, h.Buckets[i-1].Hi)
			}
		}
	}
	if got := f.Hist(statsfile.HistFsync).Count(); got != 50 {
		t.Errorf("fsync histogram holds %d, want 50", got)
	}
	if p, want := f.Hist(statsfile.HistFsync).Percentile(99), statsfile.HistPercentile(st.FsyncHist, 99); p != want {
		t.Errorf("fsync p99 from the file %v, from the counters %v", p, want)
	}
	if p, want := f.Hist(statsfile.HistCksumRecord).Percentile(50), statsfile.HistPercentile(st.CksumRecordHist, 50); p != want {
		t.Errorf("checksum p50 from the file %v, from the counters %v", p, want)
	}
	// A histogram line never shows up as a plain value.
	if _, ok := f.Value(statsfile.HistFsync); ok {
		t.Errorf("%s parsed as a plain line", statsfile.HistFsync)
	}

	// The JSON form: numbers as numbers, histograms summarised, buckets
	// only when asked, in numeric order.
	b, err := json.Marshal(f.JSON(true))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Records    float64                          `json:"log_records"`
		Mode       string                           `json:"cksum_mode"`
		Histograms map[string]statsfile.HistSummary `json:"histograms"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	fsync := back.Histograms[statsfile.HistFsync]
	if back.Records != float64(st.Records) || back.Mode != "batched" || fsync.Count != 50 || len(fsync.Buckets) != len(f.Hist(statsfile.HistFsync).Buckets) || fsync.P50 > fsync.P90 || fsync.P90 > fsync.P99 || fsync.P99 > fsync.Max {
		t.Errorf("JSON: %s", b)
	}
	b, _ = json.Marshal(f.JSON(false))
	if strings.Contains(string(b), `"buckets"`) {
		t.Errorf("JSON without buckets has buckets: %s", b)
	}
}
