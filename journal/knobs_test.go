package journal

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// crashKnobs reads the environment knobs of a randomized crash test named
// by prefix: PREFIX_STATES, how many crash states it recovers (2,000 in
// `make test`, 300 with -short, more in make crashtest), and PREFIX_SEED,
// the seed to rerun a failure with (a new one when unset). It logs both,
// with how to rerun; a knob that is no number fails the test.
func crashKnobs(t *testing.T, prefix string) (states int, seed uint64) {
	t.Helper()
	states = 2000
	if testing.Short() {
		states = 300
	}
	if s := os.Getenv(prefix + "_STATES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("%s_STATES=%q: want a count of crash states (%v)", prefix, s, err)
		}
		states = n
	}
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv(prefix + "_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s_SEED=%q: %v", prefix, s, err)
		}
		seed = n
	}
	t.Logf("seed %d (rerun with %s_SEED=%d), %d crash states", seed, prefix, seed, states)
	return states, seed
}

func TestCrashKnobs(t *testing.T) {
	t.Setenv("XLOGFS_TESTKNOB_STATES", "17")
	t.Setenv("XLOGFS_TESTKNOB_SEED", "18446744073709551615")
	if n, seed := crashKnobs(t, "XLOGFS_TESTKNOB"); n != 17 || seed != 1<<64-1 {
		t.Errorf("knobs set: %d states, seed %d; want 17, 2^64-1", n, seed)
	}
	t.Setenv("XLOGFS_TESTKNOB_STATES", "")
	t.Setenv("XLOGFS_TESTKNOB_SEED", "")
	want := 2000
	if testing.Short() {
		want = 300
	}
	if n, _ := crashKnobs(t, "XLOGFS_TESTKNOB"); n != want {
		t.Errorf("knobs unset: %d states, want %d", n, want)
	}
}
