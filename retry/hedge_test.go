package retry

import (
	"context"
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
		samples func(i int, delay time.Duration) (time.Duration, bool) // the i-th sample, censored, under the delay then
		n       int
		start   time.Duration // delay before the samples (0: the default start)
		want    time.Duration
	}{
		{name: "before enough samples: the ceiling", n: hedgeMinCount - 1,
			samples: func(int, time.Duration) (time.Duration, bool) { return ms, false }, want: 250 * ms},
		{name: "p99 (the default) of 1..256 ms", n: 256, opts: []HedgeOption{HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, _ time.Duration) (time.Duration, bool) { return time.Duration(i+1) * ms, false }, want: 254 * ms},
		{name: "p95 of 1..256 ms", n: 256, opts: []HedgeOption{HedgePercentile(0.95), HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, _ time.Duration) (time.Duration, bool) { return time.Duration(i+1) * ms, false }, want: 244 * ms},
		{name: "p50 of 1..256 ms", n: 256, opts: []HedgeOption{HedgePercentile(0.5), HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, _ time.Duration) (time.Duration, bool) { return time.Duration(i+1) * ms, false }, want: 128 * ms},
		{name: "only the last 256 count", n: 512, opts: []HedgeOption{HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, _ time.Duration) (time.Duration, bool) {
				if i < 256 {
					return 900 * ms, false
				}
				return 10 * ms, false
			}, want: 10 * ms},
		{name: "below the floor", n: 64,
			samples: func(int, time.Duration) (time.Duration, bool) { return 100 * time.Microsecond, false }, want: 2 * ms},
		{name: "above the ceiling", n: 64,
			samples: func(int, time.Duration) (time.Duration, bool) { return time.Second, false }, want: 250 * ms},
		{name: "4% outlasted the delay: p95 still known", n: 256, start: 7 * ms, opts: []HedgeOption{HedgePercentile(0.95), HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, _ time.Duration) (time.Duration, bool) { return 5 * ms, i%25 == 0 }, want: 5 * ms},
		// 10% lost responses: the tail is unknown; waiting longer would not help.
		{name: "10% outlasted the delay: delay stays", n: 256, start: 7 * ms, opts: []HedgeOption{HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, _ time.Duration) (time.Duration, bool) { return 5 * ms, i%10 == 0 }, want: 7 * ms},
		// Responses lost from the start, at the ceiling: no answer came in between the
		// answers (1 to 6.7 ms) and the delay, so those were lost, not slow: the delay
		// drops to the answers' p99 and stays there (answers at or past it are then
		// censored too, as they are in a real run).
		{name: "10% lost from the start: learnt from the answers", n: 512,
			samples: func(i int, delay time.Duration) (time.Duration, bool) {
				d := ms + time.Duration(i%20)*300*time.Microsecond
				return d, i%10 == 0 || d >= delay
			}, want: 6700 * time.Microsecond},
		{name: "10% outlasted a delay the answers reach: delay stays", n: 256, start: 6 * ms, opts: []HedgeOption{HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, delay time.Duration) (time.Duration, bool) {
				d := ms + time.Duration(i%20)*300*time.Microsecond
				return d, i%10 == 0 || d >= delay
			}, want: 6 * ms},
		// Most executions slower than the delay: the cluster is slow, back off.
		{name: "60% outlasted the delay: delay doubles per recompute", n: hedgeEvery, start: 7 * ms, opts: []HedgeOption{HedgeDelayBounds(ms, time.Second)},
			samples: func(i int, _ time.Duration) (time.Duration, bool) { return 5 * ms, i%5 < 3 }, want: 14 * ms},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHedger(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.start != 0 {
				h.delayNs.Store(int64(tc.start))
			}
			for i := 0; i < tc.n; i++ {
				h.record(tc.samples(i, h.delay()))
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
	next := hedgeIterator(fakeHosts{hosts: []*gocql.HostInfo{a, b}}.Pick(nil), 3)
	for h := next(); h != nil; h = next() {
		got = append(got, h.Info())
	}
	want := []*gocql.HostInfo{a, b, a, b, a}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hosts %p, want %p", got, want)
	}

	single := &gocql.HostInfo{}
	next = hedgeIterator(fakeHosts{hosts: []*gocql.HostInfo{single}}.Pick(nil), 1)
	if h1, h2, h3 := next(), next(), next(); h1 == nil || h2 == nil || h2.Info() != single || h3 != nil {
		t.Errorf("single node: %v %v %v, want the node twice then nil", h1, h2, h3)
	}

	next = hedgeIterator(fakeHosts{}.Pick(nil), 5)
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

// TestHedgeRecordsLatency: a hedging Policy's executions feed the delay, censored when
// they outlasted a hedge that was due.
func TestHedgeRecordsLatency(t *testing.T) {
	h, _ := newHedger([]HedgeOption{HedgeDelayBounds(time.Microsecond, time.Second)})
	_, tr, spec := h.begin(context.Background(), nopTrace{}, true)
	x := spec.(*hedgeExec)
	x.picked.Store(true)
	x.Delay()
	x.start = time.Now().Add(-2 * time.Second) // outlasted its delay
	tr.End(nil, 1)
	_, tr, _ = h.begin(context.Background(), nopTrace{}, false)
	tr.End(nil, 1)
	_, tr, _ = h.begin(context.Background(), nopTrace{}, false)
	tr.End(context.Canceled, 1) // failures are not latencies
	if h.n != 2 || h.ring[0] != censoredSample || h.ring[1] == censoredSample {
		t.Errorf("samples %d: %v", h.n, h.ring[:2])
	}
}
