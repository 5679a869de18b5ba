package logbuf

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
)

// shortCases are records cut short, as a log's end or a read cuts them,
// and records whose h_size claims more header blocks than the buffer
// holds: each is a buffer shorter than the record its header describes.
func shortCases(t testing.TB) []struct {
	name string
	b    []byte
} {
	var out []struct {
		name string
		b    []byte
	}
	add := func(name string, b []byte) {
		out = append(out, struct {
			name string
			b    []byte
		}{name, b})
	}
	for _, size := range []int{32 << 10, 64 << 10, 256 << 10} {
		hb := HeaderBlocks(size) * BBSize
		// A payload of a few blocks, and a full record.
		for _, payload := range []int{3 * BBSize, size - hb - OpHeaderSize} {
			rec, _ := sealRecord(t, size, payload, cksum.Batched, uint64(payload))
			n := len(rec) / BBSize
			add(fmt.Sprintf("%dk record of %d blocks cut one block short", size>>10, n), rec[:len(rec)-BBSize])
			add(fmt.Sprintf("%dk record of %d blocks cut after its headers", size>>10, n), rec[:hb])
			if hb > BBSize {
				add(fmt.Sprintf("%dk record of %d blocks cut one header block short", size>>10, n), rec[:hb-BBSize])
			}
			for big := 2 * size; big <= MaxLogBSize; big *= 2 {
				b := bytes.Clone(rec)
				be.PutUint32(b[offSize:], uint32(big))
				add(fmt.Sprintf("%dk record of %d blocks with h_size %dk", size>>10, n, big>>10), b)
			}
		}
	}
	return out
}

// TestRecordCutShortRefused: every function that reads a whole record
// refuses a buffer shorter than the record its header describes, with an
// error naming the record's LSN, and never reads past the buffer (each
// check is all that stands between such a buffer and a panic). What
// DecodeDamaged reads of one is only what fits.
func TestRecordCutShortRefused(t *testing.T) {
	lsn := MakeLSN(3, 64) // where sealRecord puts its records
	for _, c := range shortCases(t) {
		t.Run(c.name, func(t *testing.T) {
			h, err := ParseHeader(c.b)
			if err != nil {
				t.Fatalf("the header no longer parses: %v", err)
			}
			if h.RecordBytes() <= len(c.b) {
				t.Fatalf("the header describes %d bytes, the buffer holds %d: not short", h.RecordBytes(), len(c.b))
			}
			want := fmt.Sprintf("record %v: %d bytes, record needs %d", lsn, len(c.b), h.RecordBytes())
			if _, _, err := VerifyRecord(c.b, CoverWhole); err == nil || err.Error() != want {
				t.Errorf("VerifyRecord: %v, want %q", err, want)
			}
			if _, err := DecodeRecord(bytes.Clone(c.b), CoverWhole); err == nil || err.Error() != want {
				t.Errorf("DecodeRecord: %v, want %q", err, want)
			}
			if _, err := Restamp(bytes.Clone(c.b), lsn); err == nil || !strings.HasPrefix(err.Error(), "record "+lsn.String()+": ") {
				t.Errorf("Restamp: %v, want an error naming record %v", err, lsn)
			}
			r, err := DecodeDamaged(c.b)
			switch {
			case len(c.b) < h.HeaderBytes():
				if err == nil || !strings.Contains(err.Error(), "its headers need") {
					t.Errorf("DecodeDamaged of a record missing header blocks: %v", err)
				}
			case err != nil:
				t.Errorf("DecodeDamaged: %v", err)
			default:
				for _, op := range r.Ops {
					if len(op.Data) > len(c.b) {
						t.Errorf("DecodeDamaged decoded an op of %d bytes from %d", len(op.Data), len(c.b))
					}
				}
			}
		})
	}
}
