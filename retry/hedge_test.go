package retry

import (
	"github.com/cqlsafe/cqlsafe/internal/core/engine"

	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/hedge"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
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
				h.Record(tc.samples(i))
			}
			if got := h.Delay(); got != tc.want {
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

// fakeSelected is a selected host; the embedded interface (nil) completes the method
// set on drivers whose SelectedHost has more methods (the ScyllaDB fork's Token).
type fakeSelected struct {
	gocql.SelectedHost
	h *gocql.HostInfo
}

func (s fakeSelected) Info() *gocql.HostInfo { return s.h }
func (fakeSelected) Mark(error)              {}

func (f fakeHosts) Pick(gocql.ExecutableQuery) gocql.NextHost {
	i := 0
	return func() gocql.SelectedHost {
		if i >= len(f.hosts) {
			return nil
		}
		i++
		return fakeSelected{h: f.hosts[i-1]}
	}
}

// TestHedgeOnlyRepeatablePinned: only statements the Policy judges repeatable and
// pins are run to be hedged, only one picked through HedgingHosts is hedged, and gocql's
// own speculative executions are never used.
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
		if got := specOf(pq.query); got != "*gocql.NonSpeculativeExecution" {
			t.Errorf("%s: gocql speculative policy %s, want none", tc.stmt, got)
		}
		if (pq.hedge != nil) != tc.hedged {
			t.Errorf("%s: run to be hedged %v, want %v", tc.stmt, pq.hedge != nil, tc.hedged)
		}
		hosts.Pick(pq.query)
		x := hedge.First[gocql.SelectedHost](pq.query.Context())
		if (x != nil) != tc.hedged {
			t.Errorf("%s: marked for hedging %v, want %v", tc.stmt, x != nil, tc.hedged)
		}
		if x != nil && !x.Picked.Load() {
			t.Errorf("%s: not seen as picked through HedgingHosts", tc.stmt)
		}
	}

	// Not picked through HedgingHosts (a session without it): the timer finds it so and
	// sends nothing.
	pq, err := p.pin(context.Background(), s.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 1, 2), execConfig{})
	if err != nil {
		t.Fatal(err)
	}
	x := hedge.First[gocql.SelectedHost](pq.query.Context())
	if x.Picked.Load() {
		t.Errorf("picked without HedgingHosts")
	}

	// Without WithHedging nothing changes.
	pq, err = NewPolicy().pin(context.Background(), s.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 1, 2), execConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := specOf(pq.query); got != "*gocql.NonSpeculativeExecution" || pq.hedge != nil {
		t.Errorf("no hedging configured: speculative policy %s, hedged %v", got, pq.hedge != nil)
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
		b := new(gocql.Session).NewBatch(tc.typ)
		for _, st := range tc.stmts {
			b.Query(st, 1)
		}
		pb, err := p.pinBatch(context.Background(), nil, b, execConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if got := specOf(pb.batch); got != "*gocql.NonSpeculativeExecution" {
			t.Errorf("%v: gocql speculative policy %s, want none", tc.stmts, got)
		}
		if (pb.hedge != nil) != tc.hedged {
			t.Errorf("%v: run to be hedged %v, want %v", tc.stmts, pb.hedge != nil, tc.hedged)
		}
		if pb.batch.IsIdempotent() != tc.hedged {
			t.Errorf("%v: batch idempotent %v, want %v", tc.stmts, pb.batch.IsIdempotent(), tc.hedged)
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
	_, tr, spec := h.Begin(context.Background(), engine.NopTrace{}, true, "")
	x := spec
	x.Picked.Store(true)
	x.Start = time.Now().Add(-2 * time.Second) // the execution took 2 s …
	next := hedgeIterator(fakeHosts{hosts: []*gocql.HostInfo{{}}}.Pick(nil), 1, x)
	first, hedge := next(), next()
	first.(*timedHost).At = x.Start                               // … its first request was lost,
	hedge.(*timedHost).At = time.Now().Add(-5 * time.Millisecond) // … a hedge answered in 5 ms
	hedge.Mark(nil)
	first.Mark(nil) // cancelled after the answer: gocql marks it nil too
	tr.End(nil, 1)
	_, tr, _ = h.Begin(context.Background(), engine.NopTrace{}, false, "")
	tr.End(nil, 1)
	_, tr, _ = h.Begin(context.Background(), engine.NopTrace{}, false, "")
	tr.End(context.Canceled, 1) // failures are not latencies
	if got := h.Samples(); len(got) != 1 || got[0] < 5*time.Millisecond || got[0] > time.Second {
		t.Errorf("samples: %v", got)
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
	t.hs = h
	t.calls = append(t.calls, fmt.Sprintf("hedged %d", h.Sent))
}

// TestHedgeTraceHearsHedges: a Trace that implements HedgeTrace hears, once and before
// End, the hedges the execution sent, its delay and start, and whether one won; nothing
// when none was sent or the execution was not offered for hedging.
func TestHedgeTraceHearsHedges(t *testing.T) {
	const delay = 20 * time.Millisecond
	cases := []struct {
		name       string
		repeatable bool
		sent       int
		won        bool
		err        error // what the execution ended with
		want       int   // hedges heard; 0: Hedged not called
	}{
		{name: "one hedge, lost", repeatable: true, sent: 1, want: 1},
		{name: "one hedge, won", repeatable: true, sent: 1, won: true, want: 1},
		{name: "two hedges", repeatable: true, sent: 2, want: 2},
		{name: "failed after a hedge: still heard, not won", repeatable: true, sent: 1, won: true, err: errors.New("x"), want: 1},
		{name: "none sent", repeatable: true},
		{name: "not repeatable: not offered", sent: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHedger([]HedgeOption{HedgeMaxInFlight(3)})
			if err != nil {
				t.Fatal(err)
			}
			rec := &hedgeTrace{}
			_, tr, _ := h.Begin(context.Background(), rec, tc.repeatable, "")
			x := tr.(*hedgeExec)
			x.Picked.Store(true)
			armed := time.Now()
			x.Sent, x.Won, x.Delay, x.Armed = tc.sent, tc.won, delay, armed
			x.Handed.Store(int32(tc.sent)) // each was given a host
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
			if rec.hs.Delay != delay || !rec.hs.Start.Equal(armed) || rec.hs.Won != (tc.won && tc.err == nil) {
				t.Errorf("heard %+v, want delay %v, start %v, won %v", rec.hs, delay, armed, tc.won && tc.err == nil)
			}
		})
	}
}

// TestHedgeHostsAnotherHostFirst: a hedge's iterator gives first the hosts no request of
// the execution was given (the first execution had a; the hedges get b, then c), then
// those given again, the first execution's host last; at most extra+1 of those.
func TestHedgeHostsAnotherHostFirst(t *testing.T) {
	const ida, idb, idc = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b", "00000000-0000-4000-8000-00000000000c"
	a, b, c := cqlvalue.Host(nil, ida), cqlvalue.Host(nil, idb), cqlvalue.Host(nil, idc)
	h, _ := newHedger(nil)
	_, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, "")
	inner := fakeHosts{hosts: []*gocql.HostInfo{a, b, c}}
	first := hedgeIterator(inner.Pick(nil), 0, x)
	if got := first().Info(); got != a {
		t.Fatalf("first execution got %s, want a", got.HostID())
	}
	hedge1 := hedgeHosts(inner.Pick(nil), 1, x)
	if got := hedge1().Info(); got != b {
		t.Errorf("first hedge got %s, want b", got.HostID())
	}
	hedge2 := hedgeHosts(inner.Pick(nil), 1, x)
	if got := hedge2().Info(); got != c {
		t.Errorf("second hedge got %s, want c", got.HostID())
	}
	// Every host given: hedge2 again, then again — b, c before a; two at most (extra 1).
	var again []string
	for sh := hedge2(); sh != nil; sh = hedge2() {
		again = append(again, sh.Info().HostID())
	}
	if !reflect.DeepEqual(again, []string{idb, idc}) {
		t.Errorf("hosts given again %v, want [b c] (the first execution's last, at most 2)", again)
	}
	if x.Handed.Load() != 2 {
		t.Errorf("%d hedges counted as given a host, want 2", x.Handed.Load())
	}
}

// TestHedgingHostsNilInner: gocql v1.7 defaults a nil PoolConfig.HostSelectionPolicy to
// round robin (session.go:172), so HedgingHosts(nil) wraps round robin: returning nil
// left a session configured as HedgingHosts(cluster.PoolConfig.HostSelectionPolicy)
// without the wrapper, and nothing was hedged (found by review).
func TestHedgingHostsNilInner(t *testing.T) {
	cl := gocql.NewCluster("127.0.0.1")
	cl.PoolConfig.HostSelectionPolicy = HedgingHosts(cl.PoolConfig.HostSelectionPolicy)
	switch cl.PoolConfig.HostSelectionPolicy.(type) {
	case hedgingHosts, readyHedgingHosts:
	default:
		t.Fatalf("HedgingHosts(nil) = %T, want the wrapper over round robin", cl.PoolConfig.HostSelectionPolicy)
	}
}
