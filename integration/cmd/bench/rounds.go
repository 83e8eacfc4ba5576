package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// sample is one side's measurement in one round.
type sample struct {
	ops    int
	wall   time.Duration
	allocs uint64 // client heap allocations (runtime.MemStats.Mallocs delta)
	bytes  uint64 // client heap bytes allocated (TotalAlloc delta)
	note   string // checks after the run (lost, duplicated…)
}

func (s sample) nsPerOp() float64     { return float64(s.wall.Nanoseconds()) / float64(max(s.ops, 1)) }
func (s sample) allocsPerOp() float64 { return float64(s.allocs) / float64(max(s.ops, 1)) }
func (s sample) bytesPerOp() float64  { return float64(s.bytes) / float64(max(s.ops, 1)) }

// side is one half of a pair. prepare (untimed) readies round r — fresh partitions,
// rows to delete, a proxy rule — and returns the operation to time; op i runs once for
// every i in [0, n). check (untimed, may be nil) verifies what Cassandra holds after.
type side struct {
	name    string
	workers int
	prepare func(ctx context.Context, r, n int) (op func(ctx context.Context, i int) error, check func(ctx context.Context) (string, error), err error)
	// whole, when set, replaces prepare: it runs a whole measurement itself (a
	// backfill) and returns the operations it did; the runner times and counts it.
	whole func(ctx context.Context, r int) (ops int, check func(ctx context.Context) (string, error), err error)
}

// pair is a side-by-side benchmark: A is cqlsafe, B its baseline. Ratio is B's time per
// op over A's: A's throughput as a fraction of B's.
type pair struct {
	key, title string
	a, b       side
	n          int                             // operations per side per round
	flush      func(ctx context.Context) error // before each round, when server state matters
	targets    []target
	note       string // said in the target column: why a pair has no target here
	rounds     int    // 0: the command's -rounds
}

// target is a goal checked against a pair's result.
type target struct {
	what string
	ok   func(res result) bool
}

// round is one round's two samples and which side ran first.
type round struct {
	a, b   sample
	aFirst bool
}

func (r round) ratio() float64 { return r.b.nsPerOp() / r.a.nsPerOp() }

// result is a pair's rounds.
type result struct {
	p      *pair
	rounds []round
	err    error
}

// runPair runs p in rounds A B, B A, A B …: the side that runs first alternates, so
// warm-up, compaction and flushes do not land on one side.
func runPair(ctx context.Context, p *pair, rounds int, logf func(string, ...any)) result {
	res := result{p: p}
	if p.rounds > 0 {
		rounds = p.rounds
	}
	for r := 0; r < rounds; r++ {
		if p.flush != nil {
			if err := p.flush(ctx); err != nil {
				res.err = fmt.Errorf("flush before round %d: %w", r+1, err)
				return res
			}
		}
		rd := round{aFirst: r%2 == 0}
		order := []*side{&p.a, &p.b}
		if !rd.aFirst {
			order = []*side{&p.b, &p.a}
		}
		for _, sd := range order {
			s, err := runSide(ctx, sd, r, p.n)
			if err != nil {
				res.err = fmt.Errorf("round %d, %s: %w", r+1, sd.name, err)
				return res
			}
			if sd == &p.a {
				rd.a = s
			} else {
				rd.b = s
			}
		}
		res.rounds = append(res.rounds, rd)
		first := p.a.name
		if !rd.aFirst {
			first = p.b.name
		}
		logf("%s round %d (%s first): %s %.1f µs/op %.0f allocs/op; %s %.1f µs/op %.0f allocs/op; ratio %.3f %s%s",
			p.key, r+1, first, p.a.name, rd.a.nsPerOp()/1e3, rd.a.allocsPerOp(), p.b.name, rd.b.nsPerOp()/1e3, rd.b.allocsPerOp(),
			rd.ratio(), rd.a.note, rd.b.note)
	}
	return res
}

func runSide(ctx context.Context, sd *side, r, n int) (sample, error) {
	var s sample
	var check func(context.Context) (string, error)
	if sd.whole != nil {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		ops, c, err := sd.whole(ctx, r)
		s.wall = time.Since(start)
		runtime.ReadMemStats(&after)
		if err != nil {
			return s, err
		}
		s.ops, check = ops, c
		s.allocs, s.bytes = after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc
	} else {
		op, c, err := sd.prepare(ctx, r, n)
		if err != nil {
			return s, err
		}
		check = c
		s, err = parallel(ctx, n, sd.workers, op)
		if err != nil {
			return s, err
		}
	}
	if check != nil {
		note, err := check(ctx)
		if err != nil {
			return s, err
		}
		s.note = note
	}
	return s, nil
}

// parallel runs op for i in [0, n) on workers goroutines and measures wall time and the
// client's allocations. The first error stops the run.
func parallel(ctx context.Context, n, workers int, op func(context.Context, int) error) (sample, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := op(ctx, i); err != nil {
					once.Do(func() { first = fmt.Errorf("op %d: %w", i, err) })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	runtime.ReadMemStats(&after)
	return sample{ops: n, wall: wall, allocs: after.Mallocs - before.Mallocs, bytes: after.TotalAlloc - before.TotalAlloc}, first
}

// spread is the distribution of a pair's per-round values.
type spread struct{ median, min, max, q1, q3 float64 }

func spreadOf(v []float64) spread {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return spread{}
	}
	return spread{median: quantile(s, 0.5), min: s[0], max: s[len(s)-1], q1: quantile(s, 0.25), q3: quantile(s, 0.75)}
}

// quantile of sorted s, linear between closest ranks.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

func (res result) ratios() []float64 {
	var v []float64
	for _, r := range res.rounds {
		v = append(v, r.ratio())
	}
	return v
}

// ratiosWhen are the ratios of the rounds where A ran first (aFirst) or B did.
func (res result) ratiosWhen(aFirst bool) []float64 {
	var v []float64
	for _, r := range res.rounds {
		if r.aFirst == aFirst {
			v = append(v, r.ratio())
		}
	}
	return v
}

func (res result) medianOf(f func(round) float64) float64 {
	var v []float64
	for _, r := range res.rounds {
		v = append(v, f(r))
	}
	return spreadOf(v).median
}

func (res result) allocRatio() float64 {
	return res.medianOf(func(r round) float64 { return r.a.allocsPerOp() }) / res.medianOf(func(r round) float64 { return r.b.allocsPerOp() })
}

// allocExtra is A's client allocations per op minus B's (medians over rounds).
func (res result) allocExtra() float64 {
	return res.medianOf(func(r round) float64 { return r.a.allocsPerOp() }) - res.medianOf(func(r round) float64 { return r.b.allocsPerOp() })
}
