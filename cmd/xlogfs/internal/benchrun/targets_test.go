package benchrun

import (
	"fmt"
	"slices"
	"testing"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

// The rounds' orders: each a permutation of the targets, a function of the
// seed and the round alone (so --seed repeats a run's order), and
// different from round to round.
func TestRoundOrderSeeded(t *testing.T) {
	const n, rounds = 6, 10
	distinct := map[string]bool{}
	for r := 1; r <= rounds; r++ {
		o := RoundOrder(42, r, n)
		sorted := slices.Sorted(slices.Values(o))
		if !slices.Equal(sorted, []int{0, 1, 2, 3, 4, 5}) {
			t.Fatalf("round %d order %v is not a permutation of 0..5", r, o)
		}
		if again := RoundOrder(42, r, n); !slices.Equal(o, again) {
			t.Errorf("round %d: seed 42 gave %v then %v", r, o, again)
		}
		distinct[fmt.Sprint(o)] = true
	}
	if len(distinct) < rounds-1 {
		t.Errorf("only %d distinct orders in %d rounds", len(distinct), rounds)
	}
	same := 0
	for r := 1; r <= rounds; r++ {
		if slices.Equal(RoundOrder(42, r, n), RoundOrder(43, r, n)) {
			same++
		}
	}
	if same > 1 {
		t.Errorf("seeds 42 and 43 gave the same order in %d of %d rounds", same, rounds)
	}
	// Pinned: a change of generator would silently change what an old
	// run's --seed repeats.
	if o := RoundOrder(1, 1, 6); fmt.Sprint(o) != "[3 1 2 4 0 5]" {
		t.Errorf("roundOrder(1, 1, 6) = %v, want [3 1 2 4 0 5]", o)
	}
}

func TestFactorialTargets(t *testing.T) {
	var cfg benchreport.Config
	best := cksum.Best().Name
	ts, err := Targets(&cfg, "batched,per-chunk,sector", "best,generic,"+best)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range ts {
		names = append(names, tg.Name)
	}
	want := []string{"batched/" + best, "batched/generic", "xfs/" + best, "xfs/generic", "sector/" + best, "sector/generic"}
	if best == "generic" { // no faster kernel here
		want = []string{"batched/generic", "xfs/generic", "sector/generic"}
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets %v, want %v (best resolved, duplicates dropped)", names, want)
	}
	if ts[0].ImplSpec != "best" || ts[0].Mode != "batched" || ts[0].Kind != "xlogfs" {
		t.Errorf("first target %+v", ts[0])
	}
	if ref, err := ResolveReference("batched/best", ts); err != nil || ref != "batched/"+best {
		t.Errorf("reference batched/best → %q, %v", ref, err)
	}
	if _, err := ResolveReference("inline/best", ts); err == nil {
		t.Error("a reference that is no target resolved")
	}
	if _, err := Targets(&cfg, "bogus", "best"); err == nil {
		t.Error("--modes bogus accepted")
	}
	if _, err := Targets(&cfg, "batched", "nope"); err == nil {
		t.Error("--impls nope accepted")
	}
}

func TestWithTransports(t *testing.T) {
	ts := []benchreport.Target{{Name: "batched/generic", Kind: "xlogfs", Mode: "batched", Impl: "generic"}}
	got, err := WithTransports(ts, "classic, uring,classic")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "batched/generic" || got[0].Transport != "" ||
		got[1].Name != "batched/generic+uring" || got[1].Transport != "uring" {
		t.Errorf("targets %+v, want batched/generic (classic) and batched/generic+uring", got)
	}
	if ref, err := ResolveReference("batched/generic", got); err != nil || ref != "batched/generic" {
		t.Errorf("reference batched/generic → %q, %v; want the classic target", ref, err)
	}
	if _, err := WithTransports(ts, "splice"); err == nil {
		t.Error("--transports splice accepted")
	}
}
