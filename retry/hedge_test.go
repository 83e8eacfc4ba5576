package retry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func TestHedgeDelayPercentile(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name    string
		opts    []HedgeOption
		samples func(i int) time.Duration // the i-th request latency
		n       int
		want    time.Duration
	}{
		{name: "before enough samples: the ceiling", n: hedgeMinCount - 1,
			samples: func(int) time.Duration { return ms }, want: 250 * ms},
		{name: "p99 (the default) of 1..256 ms", n: 256, opts: []HedgeOption{HedgeDelayBounds(ms, time.Second)},
			samples: func(i int) time.Duration { return time.Duration(i+1) * ms }, want: 254 * ms},
		{name: "p95 of 1..256 ms", n: 256, opts: []HedgeOption{HedgePercentile(0.95), HedgeDelayBounds(ms, time.Second)},
			samples: func(i int) time.Duration { return time.Duration(i+1) * ms }, want: 244 * ms},
		{name: "p50 of 1..256 ms", n: 256, opts: []HedgeOption{HedgePercentile(0.5), HedgeDelayBounds(ms, time.Second)},
			samples: func(i int) time.Duration { return time.Duration(i+1) * ms }, want: 128 * ms},
		{name: "only the last 256 count", n: 512, opts: []HedgeOption{HedgeDelayBounds(ms, time.Second)},
			samples: func(i int) time.Duration {
				if i < 256 {
					return 900 * ms
				}
				return 10 * ms
			}, want: 10 * ms},
		{name: "below the floor", n: 64,
			samples: func(int) time.Duration { return 100 * time.Microsecond }, want: 2 * ms},
		{name: "above the ceiling", n: 64,
			samples: func(int) time.Duration { return time.Second }, want: 250 * ms},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHedger(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.n; i++ {
				h.record(tc.samples(i))
			}
			if got := h.delay(); got != tc.want {
				t.Errorf("delay %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHedgeOptionsRejectInvalid(t *testing.T) {
	for name, o := range map[string]HedgeOption{
		"percentile 0":    HedgePercentile(0),
		"percentile 1":    HedgePercentile(1),
		"percentile NaN":  HedgePercentile(nan()),
		"floor 0":         HedgeDelayBounds(0, time.Second),
		"ceiling < floor": HedgeDelayBounds(time.Second, time.Millisecond),
		"max in flight 1": HedgeMaxInFlight(1),
	} {
		if err := NewPolicy(WithHedging(o)).Err(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := NewPolicy(WithHedging(HedgePercentile(0.99), HedgeDelayBounds(time.Millisecond, time.Second), HedgeMaxInFlight(3))).Err(); err != nil {
		t.Errorf("valid options rejected: %v", err)
	}
}

func nan() float64 { z := 0.0; return z / z }

// specOf returns the type of the speculative execution policy gocql will use for q (a
// *gocql.Query or *gocql.Batch): gocql has no getter.
func specOf(q any) string {
	f := reflect.ValueOf(q).Elem().FieldByName("spec")
	if f.IsNil() {
		return "nil"
	}
	return f.Elem().Type().String()
}

// fakeHosts is a host selection policy over a fixed list of hosts.
type fakeHosts struct {
	gocql.HostSelectionPolicy
	hosts []*gocql.HostInfo
}

type fakeSelected struct{ h *gocql.HostInfo }

func (s fakeSelected) Info() *gocql.HostInfo { return s.h }
func (fakeSelected) Mark(error)              {}

func (f fakeHosts) Pick(gocql.ExecutableQuery) gocql.NextHost {
	i := 0
	return func() gocql.SelectedHost {
		if i >= len(f.hosts) {
			return nil
		}
		i++
		return fakeSelected{f.hosts[i-1]}
	}
}

// TestHedgeOnlyRepeatablePinned: only statements the Policy judges repeatable and
// pins get a speculative execution policy, and only one picked through HedgingHosts
// asks gocql for a hedge.
func TestHedgeOnlyRepeatablePinned(t *testing.T) {
	p := NewPolicy(WithHedging(), WithSchema(mapSchema{"c.n": ColumnCounter, "l.l": ColumnList}))
	hosts := HedgingHosts(fakeHosts{hosts: []*gocql.HostInfo{{}, {}}})
	s := &gocql.Session{}
	cases := []struct {
		stmt   string
		opts   []ExecOption
		hedged bool
	}{
		{stmt: `INSERT INTO ks.t (id, v) VALUES (?, ?)`, hedged: true},
		{stmt: `DELETE FROM ks.t WHERE id = ?`, hedged: true},
		{stmt: `UPDATE ks.c SET n = n + ? WHERE id = ?`},
		{stmt: `UPDATE ks.l SET l = l + ? WHERE id = ?`},
		{stmt: `INSERT INTO ks.t (id, v) VALUES (?, ?) IF NOT EXISTS`},
		{stmt: `UPDATE ks.t SET v = ? WHERE id = ? IF v = 1`},
		{stmt: `INSERT INTO ks.t (id, v) VALUES (now(), ?)`},
		{stmt: `INSERT INTO ks.t (id, v) VALUES (?, ?)`, opts: []ExecOption{NotRepeatable("the caller knows better")}},
		{stmt: `SELECT v FROM ks.t WHERE id = ?`}, // not pinned: reads are not hedged
	}
	for _, tc := range cases {
		c, err := execOptions(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		q := s.Query(tc.stmt, 1, 2)
		if strings.Contains(tc.stmt, "l + ?") {
			q = s.Query(tc.stmt, []int{1}, 2)
		}
		pq, err := p.pin(context.Background(), q, c)
		if err != nil {
			t.Fatal(err)
		}
		want := "*gocql.NonSpeculativeExecution"
		if tc.hedged {
			want = "*retry.hedgeExec"
		}
		if got := specOf(pq.query); got != want {
			t.Errorf("%s: speculative policy %s, want %s", tc.stmt, got, want)
		}
		hosts.Pick(pq.query)
		x, _ := pq.query.Context().Value(hedgeKey{}).(*hedgeExec)
		if (x != nil) != tc.hedged {
			t.Errorf("%s: marked for hedging %v, want %v", tc.stmt, x != nil, tc.hedged)
		}
		if x != nil && x.Attempts() != 1 {
			t.Errorf("%s: %d hedges after HedgingHosts picked, want 1", tc.stmt, x.Attempts())
		}
	}

	// Not picked through HedgingHosts (a session without it): no hedge.
	pq, err := p.pin(context.Background(), s.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 1, 2), execConfig{})
	if err != nil {
		t.Fatal(err)
	}
	x := pq.query.Context().Value(hedgeKey{}).(*hedgeExec)
	if n := x.Attempts(); n != 0 {
		t.Errorf("%d hedges without HedgingHosts, want 0", n)
	}

	// Without WithHedging nothing changes.
	pq, err = NewPolicy().pin(context.Background(), s.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 1, 2), execConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := specOf(pq.query); got != "*gocql.NonSpeculativeExecution" {
		t.Errorf("no hedging configured: speculative policy %s", got)
	}
}

func TestHedgeBatches(t *testing.T) {
	p := NewPolicy(WithHedging(), WithSchema(mapSchema{"c.n": ColumnCounter}))
	for _, tc := range []struct {
		typ    gocql.BatchType
		stmts  []string
		hedged bool
	}{
		{gocql.UnloggedBatch, []string{`DELETE FROM ks.t USING TIMESTAMP 1 WHERE id = ?`, `INSERT INTO ks.t (id, v) VALUES (?, 1) USING TIMESTAMP 2`}, true},
		{gocql.LoggedBatch, []string{`INSERT INTO ks.t (id, v) VALUES (?, 1)`}, true},
		{gocql.UnloggedBatch, []string{`INSERT INTO ks.t (id, v) VALUES (?, 1)`, `INSERT INTO ks.t (id, v) VALUES (?, 1) IF NOT EXISTS`}, false},
		{gocql.CounterBatch, []string{`UPDATE ks.c SET n = n + 1 WHERE id = ?`}, false},
	} {
		//lint:ignore SA1019 no session is needed to build a batch for the verdict
		b := gocql.NewBatch(tc.typ)
		for _, st := range tc.stmts {
			b.Query(st, 1)
		}
		pb, err := p.pinBatch(context.Background(), nil, b, execConfig{})
		if err != nil {
			t.Fatal(err)
		}
		want := "*gocql.NonSpeculativeExecution"
		if tc.hedged {
			want = "*retry.hedgeExec"
		}
		if got := specOf(pb.batch); got != want {
			t.Errorf("%v: speculative policy %s, want %s", tc.stmts, got, want)
		}
		if pb.batch.IsIdempotent() != tc.hedged {
			t.Errorf("%v: batch idempotent %v, want %v (gocql speculates only idempotent batches)", tc.stmts, pb.batch.IsIdempotent(), tc.hedged)
		}
	}
}

// TestHedgeIteratorNeverRunsDry: a hedged execution's host iterator gives inner's
// hosts, then the up ones again within the bound, so a speculative execution always
// finds a host while one is up; an execution not hedged sees inner's iterator.
func TestHedgeIteratorNeverRunsDry(t *testing.T) {
	a, b := &gocql.HostInfo{}, &gocql.HostInfo{}
	var got []*gocql.HostInfo
	next := hedgeIterator(fakeHosts{hosts: []*gocql.HostInfo{a, b}}.Pick(nil), 3, nil)
	for h := next(); h != nil; h = next() {
		got = append(got, h.Info())
	}
	want := []*gocql.HostInfo{a, b, a, b, a}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hosts %p, want %p", got, want)
	}

	single := &gocql.HostInfo{}
	next = hedgeIterator(fakeHosts{hosts: []*gocql.HostInfo{single}}.Pick(nil), 1, nil)
	if h1, h2, h3 := next(), next(), next(); h1 == nil || h2 == nil || h2.Info() != single || h3 != nil {
		t.Errorf("single node: %v %v %v, want the node twice then nil", h1, h2, h3)
	}

	next = hedgeIterator(fakeHosts{}.Pick(nil), 5, nil)
	if h := next(); h != nil {
		t.Errorf("no hosts at all: got %v", h)
	}

	// Not hedged: inner's iterator unchanged.
	s := &gocql.Session{}
	pol := HedgingHosts(fakeHosts{hosts: []*gocql.HostInfo{single}})
	it := pol.Pick(s.Query(`INSERT INTO ks.t (id) VALUES (1)`))
	if h1, h2 := it(), it(); h1 == nil || h2 != nil {
		t.Errorf("unhedged query: %v %v, want the node then nil", h1, h2)
	}
}

// TestHedgeRecordsLatency: a hedging Policy's successful executions feed the delay with
// the latency of the request that answered, as HedgingHosts times it (the first to be
// marked with success: the overtaken one is marked after, cancelled), not with the
// execution's end-to-end time; an execution not timed (not hedged, or not picked
// through HedgingHosts) and failures give nothing.
func TestHedgeRecordsLatency(t *testing.T) {
	h, _ := newHedger([]HedgeOption{HedgeDelayBounds(time.Microsecond, time.Second)})
	_, tr, spec := h.begin(context.Background(), nopTrace{}, true)
	x := spec.(*hedgeExec)
	x.picked.Store(true)
	x.Delay()
	x.start = time.Now().Add(-2 * time.Second) // the execution took 2 s …
	next := hedgeIterator(fakeHosts{hosts: []*gocql.HostInfo{{}}}.Pick(nil), 1, x)
	first, hedge := next(), next()
	first.(*timedHost).at = x.start                               // … its first request was lost,
	hedge.(*timedHost).at = time.Now().Add(-5 * time.Millisecond) // … a hedge answered in 5 ms
	hedge.Mark(nil)
	first.Mark(nil) // cancelled after the answer: gocql marks it nil too
	tr.End(nil, 1)
	_, tr, _ = h.begin(context.Background(), nopTrace{}, false)
	tr.End(nil, 1)
	_, tr, _ = h.begin(context.Background(), nopTrace{}, false)
	tr.End(context.Canceled, 1) // failures are not latencies
	if h.n != 1 || time.Duration(h.ring[0]) < 5*time.Millisecond || time.Duration(h.ring[0]) > time.Second {
		t.Errorf("samples %d: %v", h.n, h.ring[:2])
	}
}

// hedgeTrace records what a Trace that implements HedgeTrace hears, in order.
type hedgeTrace struct {
	calls []string
	hs    Hedges
}

func (t *hedgeTrace) Attempt(Event)  { t.calls = append(t.calls, "attempt") }
func (t *hedgeTrace) End(error, int) { t.calls = append(t.calls, "end") }
func (t *hedgeTrace) Hedged(h Hedges) {
	t.calls = append(t.calls, fmt.Sprintf("hedged %d", h.Sent))
	t.hs = h
}

// TestHedgeTraceHearsHedges: a Trace that implements HedgeTrace hears, once and before
// End, how many hedges gocql's ticker sent — one per delay elapsed since gocql asked for
// the delay, up to HedgeMaxInFlight − 1 — and nothing when none was: answered within
// the delay, not picked through HedgingHosts, gocql never asked for a delay, or not
// offered for hedging at all.
func TestHedgeTraceHearsHedges(t *testing.T) {
	const delay = 20 * time.Millisecond
	cases := []struct {
		name       string
		inFlight   int
		repeatable bool
		picked     bool
		asked      bool    // gocql called Delay (it does when Attempts > 0)
		elapsed    float64 // delays between gocql asking and the end
		err        error   // what the execution ended with
		want       int     // hedges heard; 0: Hedged not called
	}{
		{name: "one delay and a half: one hedge", inFlight: 2, repeatable: true, picked: true, asked: true, elapsed: 1.5, want: 1},
		{name: "three delays and a half, at most one hedge", inFlight: 2, repeatable: true, picked: true, asked: true, elapsed: 3.5, want: 1},
		{name: "two delays and a half, up to three hedges: two", inFlight: 4, repeatable: true, picked: true, asked: true, elapsed: 2.5, want: 2},
		{name: "failed after a hedge: still heard", inFlight: 2, repeatable: true, picked: true, asked: true, elapsed: 1.5, err: errors.New("x"), want: 1},
		{name: "answered within the delay", inFlight: 2, repeatable: true, picked: true, asked: true, elapsed: 0.5},
		{name: "not picked through HedgingHosts", inFlight: 2, repeatable: true, asked: true, elapsed: 1.5},
		{name: "gocql never asked for the delay", inFlight: 2, repeatable: true, picked: true, elapsed: 1.5},
		{name: "not repeatable: not offered", inFlight: 2, picked: true, asked: true, elapsed: 1.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHedger([]HedgeOption{HedgeMaxInFlight(tc.inFlight)})
			if err != nil {
				t.Fatal(err)
			}
			h.delayNs.Store(int64(delay))
			rec := &hedgeTrace{}
			_, tr, _ := h.begin(context.Background(), rec, tc.repeatable)
			x := tr.(*hedgeExec)
			x.picked.Store(tc.picked)
			if tc.asked { // gocql asks for the attempts, then (when > 0) for the delay
				if x.Attempts() > 0 {
					x.Delay()
				}
			}
			before := time.Now()
			elapsed := time.Duration(tc.elapsed * float64(delay))
			x.start = x.start.Add(-elapsed) // as if gocql had asked elapsed ago
			tr.End(tc.err, 1)
			want := []string{"end"}
			if tc.want > 0 {
				want = []string{fmt.Sprintf("hedged %d", tc.want), "end"}
			}
			if !reflect.DeepEqual(rec.calls, want) {
				t.Fatalf("calls %v, want %v", rec.calls, want)
			}
			if tc.want == 0 {
				return
			}
			if rec.hs.Delay != delay {
				t.Errorf("delay %v, want %v", rec.hs.Delay, delay)
			}
			// Start is when gocql asked, moved back with x.start: elapsed before now.
			if ago := before.Sub(rec.hs.Start); ago < elapsed-delay/4 || ago > elapsed+delay/4 {
				t.Errorf("hedges timed from %v before the end, want about %v", ago, elapsed)
			}
		})
	}

	// A Trace without HedgeTrace just ends.
	h, _ := newHedger(nil)
	_, tr, _ := h.begin(context.Background(), nopTrace{}, true)
	x := tr.(*hedgeExec)
	x.picked.Store(true)
	x.Attempts()
	x.Delay()
	x.start = x.start.Add(-time.Second)
	tr.End(nil, 1)
}
