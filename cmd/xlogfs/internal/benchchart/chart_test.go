package benchchart

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

func TestRender(t *testing.T) {
	res := &benchreport.Results{Config: benchreport.Config{Workload: "builtin", Journal: "data", Device: "ram", Rounds: 6, Reference: "batched/avx512"}}
	for _, m := range []string{"batched", "sector"} {
		for _, im := range []string{"avx512", "generic"} {
			res.Targets = append(res.Targets, benchreport.Target{Name: m + "/" + im, Kind: "xlogfs", Mode: m, Impl: im})
		}
	}
	for r := 1; r <= 6; r++ {
		for i, tg := range res.Targets {
			res.Runs = append(res.Runs, benchreport.Run{Target: tg.Name, Round: r, Values: map[string]float64{
				"cksum_cpu": 0.01 * float64(i+1) * (1 + 0.01*float64(r)), "throughput": 100 + float64(r), "fsync_p99": 500 + float64(i),
			}})
		}
	}
	benchreport.Analyze(res)
	svg, pngData, err := Render(res)
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if !strings.Contains(s, "<svg") || !strings.Contains(s, "sector") || !strings.Contains(s, "generic") || !strings.Contains(s, "checksum CPU") {
		t.Errorf("SVG lacks the chart's parts (svg element, modes, impls, titles): %.300s", s)
	}
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatalf("PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 600 {
		t.Errorf("PNG is %v", b)
	}
	if _, _, err := Render(&benchreport.Results{Targets: []benchreport.Target{{Name: "native", Kind: "native"}}}); err == nil {
		t.Error("a chart of no xlogfs target drawn")
	}
}
