package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestCksumBenchCopyUpdate(t *testing.T) {
	code, out, errs := runCapture(t, "cksum-bench", "--json", "--time", "30ms", "--rounds", "1", "--sizes", "4k,32k", "--modes", "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res cksumBenchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if res.Choice.Impl != res.Best || res.Best == "" || res.Choice.Reason == "" || res.Choice.Linux == "" {
		t.Errorf("choice %+v, best %q: want the choice of best with its reason and linux's rule", res.Choice, res.Best)
	}
	if !slices.ContainsFunc(res.Impls, func(r cksumImplResult) bool { return r.Name == "linux" }) {
		t.Errorf("no linux row among %+v", res.Impls)
	}
	if len(res.CopyUpdate) != len(res.Impls) {
		t.Fatalf("CopyUpdate for %d implementations, throughput for %d", len(res.CopyUpdate), len(res.Impls))
	}
	for i, r := range res.CopyUpdate {
		if r.Name != res.Impls[i].Name || len(r.Sizes) != 2 {
			t.Fatalf("CopyUpdate row %d: %+v", i, r)
		}
		for _, s := range r.Sizes {
			if s.CopyGBps <= 0 || s.TwoPass <= 0 || s.OnePass <= 0 {
				t.Errorf("%s at %d: %+v", r.Name, s.Bytes, s)
			}
			if d := s.VsCopy - s.OnePass/s.CopyGBps; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s at %d: ratio to copy %v, from the rates %v", r.Name, s.Bytes, s.VsCopy, s.OnePass/s.CopyGBps)
			}
		}
	}

	// The table, and --copy=false leaves the section out.
	code, out, errs = runCapture(t, "cksum-bench", "--time", "20ms", "--rounds", "1", "--sizes", "4k", "--modes", "", "--impls", "generic")
	if code != 0 || !strings.Contains(out, "CopyUpdate (copy and checksum in one pass)") || !strings.Contains(out, "÷ copy+Update") ||
		!strings.Contains(out, "  why: ") || !strings.Contains(out, "  linux: ") {
		t.Errorf("exit %d, output lacks the CopyUpdate table:\n%s%s", code, out, errs)
	}
	code, out, _ = runCapture(t, "cksum-bench", "--json", "--copy=false", "--time", "20ms", "--rounds", "1", "--sizes", "64", "--modes", "")
	if code != 0 || strings.Contains(out, "copy_update") {
		t.Errorf("--copy=false: exit %d, output has copy_update:\n%s", code, out)
	}
}
