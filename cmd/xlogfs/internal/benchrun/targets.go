package benchrun

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/xlogfs/xlogfs/cksum"
	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

func ModeNames() []string {
	var n []string
	for _, m := range cksum.Modes() {
		n = append(n, m.String())
	}
	return n
}

// Targets makes a target of every mode × implementation, in the
// order given. "best" resolves to this CPU's fastest kernel; two names
// for one implementation (best and avx512) make one target.
func Targets(cfg *benchreport.Config, modes, impls string) ([]benchreport.Target, error) {
	var ms []cksum.Mode
	for _, s := range strings.Split(modes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		m, err := cksum.ParseMode(s)
		if err != nil {
			return nil, fmt.Errorf("--modes: %v", err)
		}
		if !slices.Contains(ms, m) {
			ms = append(ms, m)
			cfg.Modes = append(cfg.Modes, m.String())
		}
	}
	type impl struct{ spec, name string }
	var is []impl
	for _, s := range strings.Split(impls, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		spec := s
		if s == benchreport.BestImpl || s == "auto" {
			s, spec = "auto", benchreport.BestImpl
		}
		im, err := cksum.Lookup(s)
		if err != nil {
			return nil, fmt.Errorf("--impls: %v", err)
		}
		if slices.ContainsFunc(is, func(x impl) bool { return x.name == im.Name }) {
			continue
		}
		is = append(is, impl{spec, im.Name})
		cfg.Impls = append(cfg.Impls, spec)
	}
	if len(ms) > 0 && len(is) == 0 {
		return nil, errors.New("--impls: none given")
	}
	var ts []benchreport.Target
	for _, m := range ms {
		for _, im := range is {
			ts = append(ts, benchreport.Target{Name: m.String() + "/" + im.name, Kind: "xlogfs", Mode: m.String(), Impl: im.name, ImplSpec: im.spec})
		}
	}
	return ts, nil
}

// WithTransports makes a target of every xlogfs target × transport
// (classic keeps the target's name, uring adds "+uring").
func WithTransports(ts []benchreport.Target, list string) ([]benchreport.Target, error) {
	var trs []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" || slices.Contains(trs, s) {
			continue
		}
		if s != "classic" && s != "uring" {
			return nil, fmt.Errorf("--transports: unknown transport %q (want classic or uring)", s)
		}
		trs = append(trs, s)
	}
	if len(trs) == 0 {
		return nil, errors.New("--transports: none given")
	}
	var out []benchreport.Target
	for _, tr := range trs {
		for _, t := range ts {
			if tr != "classic" {
				t.Name += "+" + tr
				t.Transport = tr
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// ResolveReference finds the target spec names: a target's name, or
// MODE/IMPL with IMPL as asked (best).
func ResolveReference(spec string, targets []benchreport.Target) (string, error) {
	for _, t := range targets {
		if t.Name == spec {
			return t.Name, nil
		}
	}
	if m, im, ok := strings.Cut(spec, "/"); ok {
		if mode, err := cksum.ParseMode(m); err == nil {
			m = mode.String()
		}
		for _, t := range targets {
			if t.Mode == m && (t.ImplSpec == im || t.Impl == im) {
				return t.Name, nil
			}
		}
	}
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	return "", fmt.Errorf("%q is none of the targets (%s)", spec, strings.Join(names, ", "))
}

// RoundOrder is the order targets run in, in round r (from 1): a
// permutation of 0..n-1 drawn from a generator seeded with the bench's seed
// and the round, so any round's order can be rebuilt from the seed alone.
func RoundOrder(seed uint64, round, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(round))).Perm(n)
}
