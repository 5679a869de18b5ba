package algobench

import (
	"math/rand/v2"
	"sync"
)

// How a detection cell was measured (results.json's "method").
const (
	// MethodCRC: the exact CRC shortcut (shortcut.go) on a damage to a
	// pooled buffer.
	MethodCRC = "crc-linearity"
	// MethodSum: the exact modular-sum shortcut (shortcut.go).
	MethodSum = "sum-delta"
	// MethodRecompute: the damaged buffer hashed again, resuming from the
	// saved state after its undamaged leading blocks.
	MethodRecompute = "recomputed"
	// MethodFresh: a new buffer per trial, hashed whole before and after.
	MethodFresh = "recomputed-fresh"
	// MethodPrefix: a new buffer per record, hashed in one streaming pass
	// whose state is read at every block boundary (each cut's checksum).
	MethodPrefix = "prefix-stream"
	// MethodSameAs prefixes the name of the algorithm whose cells these are.
	MethodSameAs = "same-as:"
)

// MethodDesc explains each method in a sentence, for the report.
var MethodDesc = map[string]string{
	MethodCRC:       "exact CRC linearity: CRC(m⊕e) = CRC(m)⊕CRC₀(e) for equal lengths, so a damage e is missed iff CRC₀(e) = 0; computed from the damaged bytes alone",
	MethodSum:       "exact: the two sums change by Σδ and Σ(words after)·δ over the changed bytes, so a damage is missed iff both are 0 mod M",
	MethodRecompute: "the checksum of the damaged buffer recomputed, resuming from the state after its undamaged leading blocks",
	MethodFresh:     "a new buffer every trial, its checksum computed in full before and after the damage",
	MethodPrefix:    "a new buffer every N/512−1 trials; each cut's checksum read from one streaming pass at the block boundary (cuts of one buffer are not independent)",
}

// DetCell is one measured cell: an algorithm, a buffer shape, a damage model
// and a compared width.
type DetCell struct {
	Shape    string  `json:"record"`
	Bytes    int     `json:"bytes"`
	Model    string  `json:"model"`
	Width    int     `json:"width"` // bits compared: the algorithm's own, or its low 16
	Trials   int64   `json:"trials"`
	Missed   int64   `json:"missed"`
	Observed float64 `json:"observed"`
	Upper95  float64 `json:"upper95"`
	Method   string  `json:"method"`
	// Capped cells ran fewer trials than asked, to stay in the time budget.
	Capped bool `json:"capped,omitempty"`
}

// DetectConfig sets the detection run.
type DetectConfig struct {
	Trials  int    // wanted per cell
	Seed    uint64 // every trial's randomness derives from it
	Workers int
	// RecomputeBudget caps the trials of a cell that hashes the damaged
	// buffer again at RecomputeBudget/size; FreshBudget caps the buffers made
	// for a fresh-buffer model at FreshBudget/size.
	RecomputeBudget int64
	FreshBudget     int64
	// PoolSize is how many buffers of each shape the damages are drawn on.
	PoolSize func(Shape) int
}

// DefaultPoolSize: 64 pages, 16 log records.
func DefaultPoolSize(s Shape) int { return max(16, (512<<10)/s.Bytes) }

// plan returns the trials and method of a cell.
func (c *DetectConfig) plan(a *Algo, m Model, s Shape) (trials int, method string) {
	n := s.Bytes
	fresh := int(max(1, c.FreshBudget/int64(n)))
	switch {
	case m == Truncate:
		return min(c.Trials, fresh*(n/BlockSize-1)), MethodPrefix
	case m == ZeroToFF:
		return min(c.Trials, fresh), MethodFresh
	case a.family == famCRC:
		return c.Trials, MethodCRC
	case a.family == famSum:
		return c.Trials, MethodSum
	default:
		return min(c.Trials, int(max(1, c.RecomputeBudget/int64(n)))), MethodRecompute
	}
}

type tally struct{ trials, missed, missed16 int64 }

func (t *tally) add(nat, low16 bool) {
	t.trials++
	if nat {
		t.missed++
	}
	if low16 {
		t.missed16++
	}
}

// pool is the read-only set of buffers of one shape that equal-length
// damages are drawn on, with what the algorithms need precomputed.
type pool struct {
	shape Shape
	index int // of the shape
	bufs  [][]byte
	sums  [][]uint64   // [algo][buf]: the checksum of each buffer
	cps   [][][]stream // [algo][buf][k]: hash algorithms' state after k blocks
	pow   [][]uint64   // [algo]: CRC power table for this length
}

func newPool(algos []*Algo, s Shape, size int, seed uint64) *pool {
	p := &pool{shape: s}
	r := rand.New(rand.NewPCG(seed, 0x9001^uint64(s.Bytes)))
	for range size {
		b := make([]byte, s.Bytes)
		s.fill(r, b)
		p.bufs = append(p.bufs, b)
	}
	nb := s.Bytes / BlockSize
	p.sums = make([][]uint64, len(algos))
	p.cps = make([][][]stream, len(algos))
	p.pow = make([][]uint64, len(algos))
	for ai, a := range algos {
		if !a.defined(s.Bytes) || a.SameAs != "" {
			continue
		}
		for _, b := range p.bufs {
			p.sums[ai] = append(p.sums[ai], a.Sum(b))
		}
		switch a.family {
		case famCRC:
			p.pow[ai] = a.crc.powerTable(s.Bytes)
		case famHash:
			p.cps[ai] = make([][]stream, len(p.bufs))
			for bi, b := range p.bufs {
				st := a.newStream()
				cps := make([]stream, nb)
				for k := range nb {
					cps[k] = st.Clone()
					st.Write(b[k*BlockSize : (k+1)*BlockSize])
				}
				p.cps[ai][bi] = cps
			}
		}
	}
	return p
}

type job struct {
	shape        int
	model        Model
	first, count int // trials, or for Truncate buffers
}

// detector runs the cells of a detection run.
type detector struct {
	cfg    DetectConfig
	algos  []*Algo
	shapes []Shape
	pools  []*pool
	plans  [][][]int // [shape][model][algo] trials wanted
}

// Detect measures every (algorithm, shape, model) cell, at the algorithm's
// width and at 16 bits, on cfg.Workers goroutines. The result does not
// depend on the number of workers: every chunk of trials has its own seed.
func Detect(cfg DetectConfig, algos []*Algo, shapes []Shape, models []Model) map[string][]DetCell {
	return detect(cfg, algos, shapes, models, nil)
}

func detect(cfg DetectConfig, algos []*Algo, shapes []Shape, models []Model, check func(a *Algo, before, after []byte, delta uint64)) map[string][]DetCell {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.PoolSize == nil {
		cfg.PoolSize = DefaultPoolSize
	}
	dt := &detector{cfg: cfg, algos: algos, shapes: shapes}
	var jobs []job
	for si, s := range shapes {
		dt.pools = append(dt.pools, nil)
		dt.plans = append(dt.plans, make([][]int, numModels))
		needPool := false
		for _, m := range models {
			plan := make([]int, len(algos))
			most := 0
			for ai, a := range algos {
				if a.SameAs != "" || !a.defined(s.Bytes) {
					continue
				}
				plan[ai], _ = cfg.plan(a, m, s)
				most = max(most, plan[ai])
			}
			dt.plans[si][m] = plan
			chunk := 1024
			units := most
			switch m {
			case ZeroToFF:
				chunk = max(1, (8<<20)/s.Bytes)
			case Truncate:
				chunk = max(1, (1<<20)/s.Bytes)
				units = (most + s.Bytes/BlockSize - 2) / (s.Bytes/BlockSize - 1)
			default:
				needPool = true
			}
			for first := 0; first < units; first += chunk {
				jobs = append(jobs, job{shape: si, model: m, first: first, count: min(chunk, units-first)})
			}
		}
		if needPool {
			dt.pools[si] = newPool(algos, s, cfg.PoolSize(s), cfg.Seed)
			dt.pools[si].index = si
		}
	}
	// The biggest buffers first, so the last jobs are short ones.
	var ordered []job
	for si := len(shapes) - 1; si >= 0; si-- {
		for _, j := range jobs {
			if j.shape == si {
				ordered = append(ordered, j)
			}
		}
	}

	ch := make(chan job)
	var wg sync.WaitGroup
	workers := make([]*worker, cfg.Workers)
	for i := range workers {
		workers[i] = dt.newWorker()
		workers[i].check = check
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			for j := range ch {
				w.run(j)
			}
		}(workers[i])
	}
	for _, j := range ordered {
		ch <- j
	}
	close(ch)
	wg.Wait()

	total := make([][][]tally, len(shapes))
	for si := range shapes {
		total[si] = make([][]tally, numModels)
		for m := range total[si] {
			total[si][m] = make([]tally, len(algos))
			for _, w := range workers {
				for ai := range algos {
					t := &total[si][m][ai]
					wt := w.tallies[si][m][ai]
					t.trials += wt.trials
					t.missed += wt.missed
					t.missed16 += wt.missed16
				}
			}
		}
	}
	out := map[string][]DetCell{}
	for ai, a := range algos {
		src, prefix := ai, ""
		if a.SameAs != "" {
			for bi, b := range algos {
				if b.Name == a.SameAs {
					src, prefix = bi, MethodSameAs+b.Name+" "
				}
			}
		}
		for si, s := range shapes {
			if !a.defined(s.Bytes) {
				continue
			}
			for _, m := range models {
				t := total[si][m][src]
				_, method := cfg.plan(algos[src], m, s)
				widths := []int{a.Width}
				if a.Width > 16 {
					widths = append(widths, 16)
				}
				for _, wd := range widths {
					missed := t.missed
					if wd == 16 {
						missed = t.missed16
					}
					c := DetCell{Shape: s.Key, Bytes: s.Bytes, Model: m.String(), Width: wd,
						Trials: t.trials, Missed: missed, Upper95: Upper95(missed, t.trials),
						Method: prefix + method, Capped: t.trials < int64(cfg.Trials)}
					if t.trials > 0 {
						c.Observed = float64(missed) / float64(t.trials)
					}
					out[a.Name] = append(out[a.Name], c)
				}
			}
		}
	}
	return out
}

type worker struct {
	dt      *detector
	bufs    [][][]byte // [shape][buf]: private copies of the pools
	fresh   []byte
	streams []stream // per algorithm, reused
	zero    []stream // per algorithm, the initial state
	prefix  []uint64
	orig    []uint64
	after   []uint64
	tallies [][][]tally // [shape][model][algo]
	d       Damage
	// check, in tests, sees every equal-length trial: the buffer before
	// and after the damage and the change the harness computed.
	check func(a *Algo, before, after []byte, delta uint64)
}

func (dt *detector) newWorker() *worker {
	w := &worker{dt: dt}
	maxBytes := 0
	for si, s := range dt.shapes {
		maxBytes = max(maxBytes, s.Bytes)
		var copies [][]byte
		if p := dt.pools[si]; p != nil {
			for _, b := range p.bufs {
				copies = append(copies, append([]byte(nil), b...))
			}
		}
		w.bufs = append(w.bufs, copies)
		ts := make([][]tally, numModels)
		for m := range ts {
			ts[m] = make([]tally, len(dt.algos))
		}
		w.tallies = append(w.tallies, ts)
	}
	w.fresh = make([]byte, maxBytes)
	w.prefix = make([]uint64, maxBytes/BlockSize)
	w.orig = make([]uint64, len(dt.algos))
	w.after = make([]uint64, len(dt.algos))
	for _, a := range dt.algos {
		w.streams = append(w.streams, a.newStream())
		w.zero = append(w.zero, a.newStream())
	}
	return w
}

func (w *worker) run(j job) {
	dt := w.dt
	s := dt.shapes[j.shape]
	plan := dt.plans[j.shape][j.model]
	tal := w.tallies[j.shape][j.model]
	r := rand.New(rand.NewPCG(dt.cfg.Seed, uint64(j.shape)<<56|uint64(j.model)<<48|uint64(j.first)))
	n := s.Bytes
	switch j.model {
	case ZeroToFF:
		buf := w.fresh[:n]
		for t := j.first; t < j.first+j.count; t++ {
			s.fill(r, buf)
			if !w.d.generate(r, ZeroToFF, s, buf) {
				continue // no 0x00 byte at all: not a trial
			}
			for ai, a := range dt.algos {
				if t < plan[ai] {
					w.orig[ai] = a.Sum(buf)
				}
			}
			w.d.Apply(buf)
			for ai, a := range dt.algos {
				if t < plan[ai] {
					got := a.Sum(buf)
					tal[ai].add(got == w.orig[ai], got&0xffff == w.orig[ai]&0xffff)
				}
			}
		}

	case Truncate:
		buf := w.fresh[:n]
		nb := n / BlockSize
		for b := j.first; b < j.first+j.count; b++ {
			s.fill(r, buf)
			for ai := range dt.algos {
				if b*(nb-1) >= plan[ai] {
					continue
				}
				st := w.streams[ai]
				st.CopyFrom(w.zero[ai])
				for k := range nb {
					st.Write(buf[k*BlockSize : (k+1)*BlockSize])
					w.prefix[k] = st.Sum()
				}
				full := w.prefix[nb-1]
				for k := 1; k < nb && b*(nb-1)+k-1 < plan[ai]; k++ {
					cut := w.prefix[k-1] // the checksum of the first k blocks
					tal[ai].add(cut == full, cut&0xffff == full&0xffff)
				}
			}
		}

	default:
		p := dt.pools[j.shape]
		bufs := w.bufs[j.shape]
		nb := n / BlockSize
		for t := j.first; t < j.first+j.count; t++ {
			bi := r.IntN(len(bufs))
			buf := bufs[bi]
			// Zeroed and swapped blocks take their contents from the pooled
			// buffer, which would make the same few thousand damages recur;
			// so the blocks they hit get new contents first.
			var fresh []int
			ok := false
			for attempt := 0; attempt < 8 && !ok; attempt++ {
				w.restore(p, bi, fresh)
				switch j.model {
				case ZeroBlock:
					fresh = append(fresh[:0], r.IntN(nb))
					s.refreshBlock(r, buf, fresh[0])
					ok = w.d.zeroBlock(buf, fresh[0])
				case SwapBlocks:
					a, b := twoBlocks(r, nb)
					fresh = append(fresh[:0], a, b)
					s.refreshBlock(r, buf, a)
					s.refreshBlock(r, buf, b)
					ok = w.d.swapBlocks(buf, a, b)
				default:
					fresh = fresh[:0]
					ok = w.d.generate(r, j.model, s, buf)
				}
			}
			if !ok {
				w.restore(p, bi, fresh)
				continue // no such damage to this buffer: not a trial
			}
			hashed := false
			for ai, a := range dt.algos {
				if t >= plan[ai] {
					continue
				}
				var delta uint64
				switch a.family {
				case famCRC:
					delta = a.crc.crcDelta(n, &w.d, p.pow[ai])
				case famSum:
					delta = a.sumDelta(n, &w.d)
				case famHash:
					if !hashed {
						w.hashAll(p, bi, buf, plan, t, fresh)
						hashed = true
					}
					delta = w.after[ai] ^ w.orig[ai]
				}
				tal[ai].add(delta == 0, delta&0xffff == 0)
				if w.check != nil {
					w.check(a, buf, w.d.Damaged(buf), delta)
				}
			}
			w.restore(p, bi, fresh)
		}
	}
}

// hashAll computes, for every hash-family algorithm the trial t is planned
// for, the checksum of buf before (w.orig) and after (w.after) the damage
// w.d, resuming from the pool's saved state after the undamaged leading
// blocks. Blocks given new contents (fresh) make the buffer's own checksum
// differ from the pool's, so it is recomputed from the first of them.
func (w *worker) hashAll(p *pool, bi int, buf []byte, plan []int, t int, fresh []int) {
	k := w.d.Patches[0].Off / BlockSize
	for ai, a := range w.dt.algos {
		if a.family != famHash || t >= plan[ai] {
			continue
		}
		if len(fresh) > 0 {
			w.orig[ai] = w.resume(ai, p.cps[ai][bi][fresh[0]], buf[fresh[0]*BlockSize:])
		} else {
			w.orig[ai] = p.sums[ai][bi]
		}
	}
	w.d.Apply(buf)
	for ai, a := range w.dt.algos {
		if a.family != famHash || t >= plan[ai] {
			continue
		}
		w.after[ai] = w.resume(ai, p.cps[ai][bi][k], buf[k*BlockSize:])
	}
	w.d.Revert(buf)
}

func (w *worker) resume(ai int, from stream, rest []byte) uint64 {
	st := w.streams[ai]
	st.CopyFrom(from)
	st.Write(rest)
	return st.Sum()
}

// restore puts the pool's contents back into blocks given new ones.
func (w *worker) restore(p *pool, bi int, blocks []int) {
	for _, b := range blocks {
		off := b * BlockSize
		copy(w.bufs[p.index][bi][off:off+BlockSize], p.bufs[bi][off:off+BlockSize])
	}
}
