package benchrun

import (
	"fmt"
	"math"
	"testing"
)

// The sync-write route and the syncs and log forces per fsync from .stats
// before and after the workload: differences over the workload, routes as
// shares of the opens, each count per fsync served; a line an older
// daemon does not write gives no value at all, never a zero.
func TestSyncValues(t *testing.T) {
	before := map[string]float64{"opens_passthrough": 10, "opens_log_route": 0, "opens_daemon": 5, "log_syncs": 7, "syncs_data": 1,
		"syncs_dir": 1, "force_requests": 3, "force_caller_rounds": 2, "force_sleeps": 0, "immediate_write_bytes": 4096}
	after := map[string]float64{"opens_passthrough": 810, "opens_log_route": 150, "opens_daemon": 55, "log_syncs": 407, "syncs_data": 41,
		"syncs_dir": 1, "force_requests": 403, "force_caller_rounds": 202, "force_sleeps": 100, "immediate_write_bytes": 4096 + 400*8192}
	v := map[string]float64{}
	syncValues(v, before, after, 400)
	want := map[string]float64{"opens": 1000, "opens_passthrough_share": 0.8, "opens_log_route_share": 0.15, "opens_daemon_share": 0.05,
		"log_syncs_per_fsync": 1, "data_syncs_per_fsync": 0.1, "dir_syncs_per_fsync": 0, "force_requests_per_fsync": 1,
		"force_caller_rounds_per_fsync": 0.5, "force_sleeps_per_fsync": 0.25, "immediate_write_bytes_per_fsync": 8192}
	if fmt.Sprint(v) != fmt.Sprint(want) {
		t.Errorf("values\n %v\nwant\n %v", v, want)
	}

	// A daemon before the route and force counts: its syncs by kind alone.
	old := map[string]float64{"log_syncs": 400, "syncs_data": 40, "syncs_dir": 0}
	v = map[string]float64{}
	syncValues(v, map[string]float64{}, old, 400)
	if want := map[string]float64{"log_syncs_per_fsync": 1, "data_syncs_per_fsync": 0.1, "dir_syncs_per_fsync": 0}; fmt.Sprint(v) != fmt.Sprint(want) {
		t.Errorf("old daemon: %v, want %v", v, want)
	}
	// No fsync (pwrite): the opens, nothing per fsync.
	v = map[string]float64{}
	syncValues(v, before, after, 0)
	if len(v) != 4 || v["opens"] != 1000 {
		t.Errorf("no fsync: %v, want the opens and their shares alone", v)
	}
}

// Emulated flushes per fsync, or why not: uncounted flushes or fsyncs give
// their reason, no fsync says so; never a zero or a NaN value.
func TestEmulatedFlushes(t *testing.T) {
	const m = "emulated_flushes_per_fsync"
	for _, c := range []struct {
		flushes, fsyncs float64
		want            float64
		why             string
	}{
		{1020, 1000, 1.02, ""},
		{math.NaN(), 1000, 0, "no flush count"},
		{50, math.NaN(), 0, "dbench counts the fsyncs of its execute phase alone"},
		{0, 0, 0, "the workload made no fsync"},
	} {
		v, un := map[string]float64{}, map[string]string{}
		emulatedFlushes(v, un, c.flushes, "no flush count", c.fsyncs, "dbench counts the fsyncs of its execute phase alone")
		got, ok := v[m]
		switch {
		case c.why == "" && (!ok || got != c.want || len(un) != 0):
			t.Errorf("%v flushes, %v fsyncs: %v (%v), unmeasured %v; want %v", c.flushes, c.fsyncs, got, ok, un, c.want)
		case c.why != "" && (ok || un[m] != c.why):
			t.Errorf("%v flushes, %v fsyncs: value %v (%v), unmeasured %q; want none, for %q", c.flushes, c.fsyncs, got, ok, un[m], c.why)
		}
	}
}
