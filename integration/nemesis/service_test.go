package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/outbox"
)

// run is one load under one nemesis, settled and checked.
type runSpec struct {
	dur       time.Duration
	limit     int64 // requests (0: until dur)
	workers   int
	customers int // per worker
	mix       mix
	faults    []string
	gap       time.Duration
	seed      uint64
	skewBound time.Duration
	// readBack: after each acknowledged profile put, read the row back (QUORUM) and
	// count the put shadowed when the row holds an earlier put.
	readBack bool
}

type runResult struct {
	v        *verdict
	n        *nemesis
	requests int
	elapsed  time.Duration
	pending  int // outbox records left after the instances' last replay
}

func (e *env) run(t *testing.T, spec runSpec) runResult {
	t.Helper()
	h := &history{}
	n := &nemesis{e: e, rng: rand.New(rand.NewPCG(spec.seed, 1)), faults: spec.faults, gap: spec.gap, firstRound: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nemDone := make(chan struct{})
	go func() {
		defer close(nemDone)
		if len(spec.faults) > 0 {
			n.run(ctx)
		} else {
			close(n.firstRound)
		}
	}()
	// The load runs for spec.dur and, past it, until every fault kind has run once
	// (at most 5 minutes more).
	go func() {
		timer := time.NewTimer(spec.dur)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		select {
		case <-n.firstRound:
		case <-ctx.Done():
		case <-time.After(5 * time.Minute):
		}
		cancel()
	}()
	start := time.Now()
	var shadowed atomic.Int64
	var readBack func(o *op)
	if spec.readBack {
		readBack = func(o *op) {
			var name string
			if err := e.direct.Query(`SELECT name FROM `+e.ks+`.customers WHERE id = ?`, o.Customer).Scan(&name); err != nil {
				return
			}
			var seq int
			if _, err := fmt.Sscanf(name, "name-%d", &seq); err == nil && seq < o.Seq {
				shadowed.Add(1)
			}
		}
	}
	progressDone := make(chan struct{})
	if spec.dur >= 10*time.Minute {
		// A long run says how far it is every 5 minutes, on stderr (go test -v holds t.Log
		// back until the test ends).
		go progress(ctx, h, n, start, 5*time.Minute, progressDone)
	} else {
		close(progressDone)
	}
	load(ctx, e, h, spec.workers, spec.customers, spec.seed, spec.mix, spec.limit, readBack)
	elapsed := time.Since(start)
	cancel()
	<-nemDone
	<-progressDone
	e.settle(t, n.counts[faultKillNode]+n.counts[faultPauseNode] > 0)
	pending := 0
	for _, in := range e.insts {
		ob, err := outbox.Open(in.outbox)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ob.Pending()
		ob.Close()
		if err != nil {
			t.Fatal(err)
		}
		pending += len(p)
	}
	held, err := e.read()
	if err != nil {
		t.Fatal(err)
	}
	v := check(h.ops, held, n, spec.skewBound)
	v.readShadowed = int(shadowed.Load())
	return runResult{v: v, n: n, requests: len(h.ops), elapsed: elapsed, pending: pending}
}

// settle heals the cluster and the proxies, lets every instance replay its outbox, and
// stops them gracefully (a last replay).
func (e *env) settle(t *testing.T, nodesFaulted bool) {
	t.Helper()
	e.heal()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if nodesFaulted {
		for i := 0; i < nodes; i++ {
			_ = cluster.Resume(ctx, i)
		}
		if err := cluster.WaitUp(ctx, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range e.insts {
		if err := in.start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Two replay rounds (--replay-every 2s); after a node fault, also the batchlog's
	// replay of a logged batch whose coordinator died (every 10 s, for batches older than
	// twice the write timeout).
	wait := 5 * time.Second
	if nodesFaulted {
		wait = 25 * time.Second
	}
	time.Sleep(wait)
	for _, in := range e.insts {
		in.stop()
	}
}

// progress prints the requests and faults so far every period until ctx ends.
func progress(ctx context.Context, h *history, n *nemesis, start time.Time, period time.Duration, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		h.mu.Lock()
		ops := len(h.ops)
		h.mu.Unlock()
		n.mu.Lock()
		faults := fmt.Sprint(n.counts)
		n.mu.Unlock()
		el := time.Since(start)
		fmt.Fprintf(os.Stderr, "nemesis: %v: %d requests (%.1f/s), faults %s\n", el.Round(time.Second), ops, float64(ops)/el.Seconds(), faults)
	}
}

func (r runResult) report(t *testing.T, name string) {
	t.Helper()
	r.n.report(t)
	var counts []string
	for _, f := range append(allFaults, faultDropCounter) {
		if n := r.n.counts[f]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", f, n))
		}
	}
	t.Logf("%s: %d requests in %.0fs (%.1f/s); faults: %s; outbox records left %d\n%s",
		name, r.requests, r.elapsed.Seconds(), float64(r.requests)/r.elapsed.Seconds(), strings.Join(counts, ", "), r.pending, r.v.summary())
}

// TestNemesisService: three instances of the example service, clocks 40 ms apart, under
// every fault kind; every acknowledged request must be in Cassandra exactly once,
// refused ones absent, unknown ones at most once, the outboxes empty at the end.
func TestNemesisService(t *testing.T) {
	bound := 150 * time.Millisecond
	e := newEnv(t)
	e.startInstances(t, "run", instanceConfig{offsets: []time.Duration{0, -40 * time.Millisecond, 40 * time.Millisecond}, maxClockOffset: bound})
	faults := allFaults
	if f := os.Getenv("CQLSAFE_NEMESIS_FAULTS"); f != "" {
		// A subset, or "none" for the fault-free baseline of the throughput figures.
		faults = nil
		for _, k := range strings.Split(f, ",") {
			if !slices.Contains(allFaults, k) && k != "none" {
				t.Fatalf("CQLSAFE_NEMESIS_FAULTS: unknown fault %q (known: %s, none)", k, strings.Join(allFaults, ", "))
			}
			if k != "none" {
				faults = append(faults, k)
			}
		}
	}
	// The short mode (CI): 80 s with a mean pause of 1 s, longer if every fault kind has
	// not run once by then.
	dur, gap := 80*time.Second, time.Second
	if longMode() {
		dur, gap = 100*time.Second, 2*time.Second
	}
	r := e.run(t, runSpec{
		dur: envDuration(t, "CQLSAFE_NEMESIS_DURATION", dur), workers: 12, customers: 3,
		mix: mix{status: 0.25, profile: 0.25}, faults: faults, gap: envDuration(t, "CQLSAFE_NEMESIS_GAP", gap), seed: envSeed(t, 1),
		// Two instances within the bound of the cluster's clock are at most 2×bound apart;
		// the measurement's uncertainty adds a little.
		skewBound: 2*bound + 50*time.Millisecond,
	})
	r.report(t, "nemesis")
	for i, msg := range r.v.violations {
		if i == 20 {
			t.Errorf("… %d violations more", len(r.v.violations)-20)
			break
		}
		t.Errorf("violation: %s", msg)
	}
	for _, f := range faults {
		if r.n.injected(f) == 0 {
			t.Errorf("fault %s never injected without an error (%d tried; see the nemesis events above)", f, r.n.counts[f])
		}
	}
	if r.pending > 0 {
		t.Errorf("%d outbox records still pending after the last replay: unknown outcomes not settled", r.pending)
	}
	if r.v.outcomes["place"][outcomeOK] == 0 || r.v.outcomes["profile"][outcomeOK] == 0 || r.v.outcomes["status"][outcomeOK] == 0 {
		t.Errorf("a request kind never succeeded: %v", r.v.outcomes)
	}
}

// TestNemesisControl: the same service re-sending writes on any error (NaiveRetries) while,
// now and then, every response to the counter's UPDATE is dropped: the checker must find
// an order counted twice, or it proves nothing. (Only the counter's responses: the check
// is per customer, counter ≤ orders, and an increment lost to a failed request would
// hide a double one.)
func TestNemesisControl(t *testing.T) {
	e := newEnv(t)
	e.startInstances(t, "control", instanceConfig{offsets: []time.Duration{0, 0, 0}, maxClockOffset: time.Hour, naive: true})
	r := e.run(t, runSpec{dur: 30 * time.Second, workers: 6, customers: 2, mix: mix{status: 0.2, profile: 0.1},
		faults: []string{faultDropCounter}, gap: 2 * time.Second, seed: envSeed(t, 1)})
	r.report(t, "control (naive retries)")
	for i, msg := range r.v.violations {
		if i < 5 {
			t.Logf("control violation: %s", msg)
		}
	}
	if !controlShows(r.v) {
		t.Fatalf("the control run shows no effect applied twice (%v): the checker cannot tell a naive service from cqlsafe's", r.v.kinds)
	}
}

// controlShows reports whether a run shows what naive retries break: an increment or
// an effect applied twice.
func controlShows(v *verdict) bool { return v.kinds[violationCounted]+v.kinds[violationTwice] > 0 }

// TestNemesisClockSkew measures how many acknowledged profile overwrites are shadowed by
// a put acknowledged earlier in real time, with the instances' clocks in step or 500 ms
// apart either way, and with the guard (WithMaxClockOffset 100 ms) off or on. The short
// mode runs the two rows with the clocks apart.
func TestNemesisClockSkew(t *testing.T) {
	requireCluster(t)
	skew := 500 * time.Millisecond
	type row struct {
		name    string
		offsets []time.Duration
		guard   time.Duration
		seed    uint64 // added to the run's seed: a row's load is the same in both modes
	}
	rows := []row{
		{"in step, no guard", []time.Duration{0, 0, 0}, time.Hour, 0},
		{"±500 ms, no guard", []time.Duration{0, skew, -skew}, time.Hour, 1},
		{"in step, guard 100 ms", []time.Duration{0, 0, 0}, 100 * time.Millisecond, 2},
		{"±500 ms, guard 100 ms", []time.Duration{0, skew, -skew}, 100 * time.Millisecond, 3},
	}
	if !longMode() {
		// The short mode (CI) keeps the two rows with the clocks apart: what skew does
		// without the guard, and that the guard bounds it.
		rows = []row{rows[1], rows[3]}
	}
	dur := envDuration(t, "CQLSAFE_NEMESIS_SKEW_DURATION", 10*time.Second)
	table := []string{"| clocks | guard | acknowledged puts | refused or unknown | acknowledged, yet the row read back holds an earlier put | at the end, shadowed by an earlier acknowledged put |", "|---|---|---|---|---|---|"}
	got := map[string]int{}
	e := newEnv(t)
	for _, r := range rows {
		name := strings.NewReplacer(" ", "_", ",", "", "±", "pm").Replace(r.name)
		t.Run(name, func(t *testing.T) {
			e.startInstances(t, name, instanceConfig{offsets: r.offsets, maxClockOffset: r.guard})
			res := e.run(t, runSpec{dur: dur, workers: 6, customers: 1, mix: mix{profile: 1}, seed: envSeed(t, 1) + r.seed, readBack: true})
			t.Log(res.v.summary())
			p := res.v.outcomes["profile"]
			guard := "off"
			if r.guard < time.Hour {
				guard = r.guard.String()
			}
			clocks := strings.Split(r.name, ",")[0]
			table = append(table, fmt.Sprintf("| %s | %s | %d | %d | %d | %d |", clocks, guard, p[outcomeOK], p[outcomeRefused]+p[outcomeUnknown], res.v.readShadowed, res.v.shadowed))
			got[r.name] = res.v.readShadowed + res.v.shadowed
			if len(res.v.violations) > 0 {
				t.Errorf("violations: %v", res.v.violations[:min(5, len(res.v.violations))])
			}
		})
	}
	t.Logf("clock skew (%v per configuration, 6 sequential writers, each put to a random instance of 3):\n%s", dur, strings.Join(table, "\n"))
	for _, r := range rows {
		skewed := slices.ContainsFunc(r.offsets, func(d time.Duration) bool { return d != 0 })
		switch {
		case (!skewed || r.guard < time.Hour) && got[r.name] != 0:
			t.Errorf("%s: %d overwrites shadowed with clocks in step or with the guard on", r.name, got[r.name])
		case skewed && r.guard >= time.Hour && got[r.name] == 0:
			t.Errorf("%s: no overwrite shadowed with clocks 500 ms apart and no guard: the measurement cannot see skew", r.name)
		}
	}
}
