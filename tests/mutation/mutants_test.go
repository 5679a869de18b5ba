package main

import "testing"

// TestMutantsMatch keeps the list up to date: every snippet must match its
// file exactly once, the mutated file must parse, and every test named
// must exist. It runs with the rest of the suite (make test), so a change
// that moves a snippet fails here at once, not when someone next runs make
// mutation; fix the snippet in mutants.go to name the new code.
func TestMutantsMatch(t *testing.T) {
	if err := Validate("../..", Mutants); err != nil {
		t.Fatal(err)
	}
	if len(Mutants) < 20 {
		t.Errorf("%d mutants; the list should not shrink without a reason", len(Mutants))
	}
}
