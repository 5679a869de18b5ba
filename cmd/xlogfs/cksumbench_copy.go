package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchstat"
)

// The CopyUpdate section of cksum-bench: each implementation's one-pass
// copy+checksum against Go's copy alone (what the checksum adds to a copy
// that has to happen anyway) and against copy then Update (what fusing
// saves).

type cksumCopySize struct {
	Bytes      int64   `json:"bytes"`
	CopyGBps   float64 `json:"copy_gbps"`        // copy alone
	TwoPass    float64 `json:"copy_update_gbps"` // copy, then Update over dst
	OnePass    float64 `json:"copyupdate_gbps"`  // CopyUpdate
	VsCopy     float64 `json:"ratio_copy"`       // CopyUpdate ÷ copy
	VsCopyThen float64 `json:"ratio_copy_update"`
}

type cksumCopyResult struct {
	Name  string          `json:"name"`
	Sizes []cksumCopySize `json:"sizes"`
}

// measureCopyUpdate samples copy, copy+Update and CopyUpdate for every
// implementation and size in turns (round robin, like the other sections)
// and keeps the medians. total is the time per implementation.
func measureCopyUpdate(impls []cksum.Impl, sizes []int64, total time.Duration, rounds int) []cksumCopyResult {
	per := total / time.Duration(3*len(sizes)*rounds)
	srcs, dsts := make([][]byte, len(sizes)), make([][]byte, len(sizes))
	for i, n := range sizes {
		srcs[i], dsts[i] = make([]byte, n), make([]byte, n)
		for j := range srcs[i] {
			srcs[i][j] = byte(j*131 + 7)
		}
	}
	copies := make([][]float64, len(sizes))
	type key struct{ impl, size int }
	two, one := map[key][]float64{}, map[key][]float64{}
	for range rounds {
		for si := range sizes {
			src, dst := srcs[si], dsts[si]
			copies[si] = append(copies[si], throughput(per, len(src), func() { copy(dst, src) }))
			for ii, im := range impls {
				k := key{ii, si}
				two[k] = append(two[k], throughput(per, len(src), func() { copy(dst, src); sink ^= im.Update(sink, dst) }))
				one[k] = append(one[k], throughput(per, len(src), func() { sink ^= im.CopyUpdate(dst, src, sink) }))
			}
		}
	}
	var out []cksumCopyResult
	for ii, im := range impls {
		r := cksumCopyResult{Name: im.Name}
		for si, n := range sizes {
			c, t, o := benchstat.MedianValue(copies[si]), benchstat.MedianValue(two[key{ii, si}]), benchstat.MedianValue(one[key{ii, si}])
			r.Sizes = append(r.Sizes, cksumCopySize{Bytes: n, CopyGBps: c / 1e9, TwoPass: t / 1e9, OnePass: o / 1e9, VsCopy: o / c, VsCopyThen: o / t})
		}
		out = append(out, r)
	}
	return out
}

func printCopyUpdate(w io.Writer, rs []cksumCopyResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCopyUpdate (copy and checksum in one pass), GB/s, against copy alone and copy then Update\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "impl\tsize\tcopy\tcopy+Update\tCopyUpdate\t÷ copy\t÷ copy+Update\t")
	for _, r := range rs {
		for _, s := range r.Sizes {
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f×\t%.2f×\t\n", r.Name, humanSize(s.Bytes), s.CopyGBps, s.TwoPass, s.OnePass, s.VsCopy, s.VsCopyThen)
		}
	}
	tw.Flush()
}
