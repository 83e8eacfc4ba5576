package faults

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// hedgeSession is a second session through e's proxies whose hosts are picked through
// retry.HedgingHosts (token-aware, round-robin), as hedging requires.
func hedgeSession(t *testing.T, e *env, timeout time.Duration) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(e.proxies[0].Addr())
	cl.ProtoVersion = 4
	cl.Keyspace = e.ks
	cl.Consistency = gocql.Quorum
	cl.Timeout = timeout
	cl.ConnectTimeout = 5 * time.Second
	cl.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()))
	cl.AddressTranslator = gocql.AddressTranslatorFunc(e.translate)
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// hedgeDelayEnv is CQLSAFE_HEDGE_DELAY_MS: a fixed hedge delay, 0 for the default.
func hedgeDelayEnv() time.Duration {
	if ms, err := strconv.Atoi(os.Getenv("CQLSAFE_HEDGE_DELAY_MS")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 0
}

// hedgePolicy hedges with WithHedging's defaults (the 99th percentile, 2–250 ms,
// budget 0.05), extra options appended (a tracer). CQLSAFE_HEDGE_DELAY_MS=N fixes the
// delay at N ms instead: at 250 no hedge is due when nothing is wrong, and the
// fault-free test then measures what the hedging path itself costs.
func hedgePolicy(extra ...retry.Option) *retry.Policy {
	var ho []retry.HedgeOption
	if d := hedgeDelayEnv(); d > 0 {
		ho = append(ho, retry.HedgeDelayBounds(d, d))
	}
	return retry.NewPolicy(append([]retry.Option{retry.WithMaxAttempts(8), retry.WithBackoff(5*time.Millisecond, 100*time.Millisecond),
		retry.WithTimeoutsOnNextHost(), retry.WithHedging(ho...)}, extra...)...)
}

// plainPolicy is hedgePolicy without hedging: the side hedging is measured against.
func plainPolicy(extra ...retry.Option) *retry.Policy {
	return retry.NewPolicy(append([]retry.Option{retry.WithMaxAttempts(8), retry.WithBackoff(5*time.Millisecond, 100*time.Millisecond),
		retry.WithTimeoutsOnNextHost()}, extra...)...)
}

// hedgeCounter is a retry.Tracer that counts what retry.HedgeTrace tells: executions,
// hedges sent, and executions a hedge answered first (won).
type hedgeCounter struct{ execs, sent, won atomic.Int64 }

type hedgeCount struct {
	c  *hedgeCounter
	hs retry.Hedges
}

func (c *hedgeCounter) Begin(ctx context.Context, _ retry.Execution) (context.Context, retry.Trace) {
	return ctx, &hedgeCount{c: c}
}
func (h *hedgeCount) Attempt(retry.Event)    {}
func (h *hedgeCount) Hedged(hs retry.Hedges) { h.hs = hs }
func (h *hedgeCount) End(error, int) {
	h.c.execs.Add(1)
	h.c.sent.Add(int64(h.hs.Sent))
	if h.hs.Won {
		h.c.won.Add(1)
	}
}

// take returns the counts since the last take and zeroes them.
func (c *hedgeCounter) take() (execs, sent, won int64) {
	return c.execs.Swap(0), c.sent.Swap(0), c.won.Swap(0)
}

// hedgeRounds is the rounds and writes per side of the hedging throughput tests: 6 and
// 3000 by default (CI sets 2 rounds); CQLSAFE_HEDGE_ROUNDS and CQLSAFE_HEDGE_WRITES make
// them longer where a small difference is to be told apart from noise.
func hedgeRounds(t *testing.T) (rounds, n int) {
	rounds, n = 6, 3000
	for _, v := range []struct {
		env string
		p   *int
	}{{"CQLSAFE_HEDGE_ROUNDS", &rounds}, {"CQLSAFE_HEDGE_WRITES", &n}} {
		if s := os.Getenv(v.env); s != "" {
			x, err := strconv.Atoi(s)
			if err != nil || x < 1 {
				t.Fatalf("%s=%q: want a positive number", v.env, s)
			}
			*v.p = x
		}
	}
	return rounds, n
}

// writeParts is how many partitions of ev one writeRun spreads its rows over: enough
// that every node coordinates a share (token-aware routing sends a partition's writes
// to one coordinator).
const writeParts = 16

// rowWriter is how writeRun sends its inserts through one driver: next pins a
// timestamp (the Policy's clock), insert runs INSERT INTO ev (p, id, v) with it.
type rowWriter struct {
	next   func() int64
	insert func(ctx context.Context, p int, id gocql.UUID, v int, ts int64) error
}

// v1Writer writes through gocql v1.7's session s and Policy p.
func v1Writer(s *gocql.Session, p *retry.Policy) rowWriter {
	return rowWriter{next: p.Clock().Next, insert: func(ctx context.Context, part int, id gocql.UUID, v int, ts int64) error {
		return p.Exec(ctx, s.Query(`INSERT INTO ev (p, id, v) VALUES (?, ?, ?)`, part, id, v), retry.AtTimestamp(ts))
	}}
}

// writeRun writes n rows of ev through w with 64 writers, spread over writeParts
// partitions of part, each at a timestamp pinned before its first attempt (an unknown
// outcome is re-sent with it), and reads them back: the rate, the rows lost, and those
// duplicated or at another WRITETIME than pinned.
func writeRun(t *testing.T, e *env, w rowWriter, part, n int) (rate float64, lost, dup int) {
	t.Helper()
	ctx := context.Background()
	ids := make([]gocql.UUID, n)
	ts := make([]int64, n)
	base := time.Now()
	for i := range ids {
		ids[i] = clientid.NewTimeUUID(base.Add(time.Duration(i) * time.Microsecond))
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				ts[i] = w.next()
				for try := 0; try < 5; try++ { // an unknown outcome is re-sent with its pinned timestamp
					if w.insert(ctx, part*writeParts+i%writeParts, ids[i], i, ts[i]) == nil {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	rate = float64(n) / time.Since(start).Seconds()
	seen := map[gocql.UUID]bool{}
	for k := 0; k < writeParts; k++ {
		iter := e.direct.Query(`SELECT id, v, WRITETIME(v) FROM ev WHERE p = ?`, part*writeParts+k).PageSize(5000).Iter()
		var id gocql.UUID
		var v int
		var wt int64
		for iter.Scan(&id, &v, &wt) {
			if seen[id] || v < 0 || v >= n || ids[v] != id || wt != ts[v] || v%writeParts != k {
				dup++
			}
			seen[id] = true
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return rate, n - len(seen), dup
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestHedgeDroppedResponsesThroughput: 10% of write responses dropped on every node,
// hedged writes vs the fault-free run, in alternating rounds. Target: throughput ≥ 0.6×
// fault-free (without hedging it is ≈ 0.08×: each drop costs a client timeout). Nothing
// lost or duplicated, every WRITETIME the pinned one.
func TestHedgeDroppedResponsesThroughput(t *testing.T) {
	e := newEnv(t, time.Second)
	e.exec(t, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`)
	s := hedgeSession(t, e, time.Second)
	hc := &hedgeCounter{}
	hedgeDroppedThroughput(t, e, hc, v1Writer(s, hedgePolicy(retry.WithTracer(hc))), "hedged writes")
}

// hedgeDroppedThroughput is TestHedgeDroppedResponsesThroughput on one driver: w writes
// hedged, hc counts its hedges.
func hedgeDroppedThroughput(t *testing.T, e *env, hc *hedgeCounter, w rowWriter, label string) {
	t.Helper()
	var wonAll int64
	rounds, n := hedgeRounds(t)
	var ratios []float64
	for r := 0; r < rounds; r++ {
		var clean, faulty float64
		run := func(drop bool) {
			part := r*2 + map[bool]int{false: 0, true: 1}[drop]
			if drop {
				e.setRule(faultproxy.DropFraction(0.10, uint64(part), faultproxy.Writes("INSERT INTO ev")))
			}
			hc.take()
			rate, lost, dup := writeRun(t, e, w, part, n)
			e.setRule(nil)
			if execs, sent, won := hc.take(); drop {
				wonAll += won
				t.Logf("round %d, 10%% dropped: %d executions, %d hedges sent (%.1f%%), %d won", r+1, execs, sent, 100*float64(sent)/float64(execs), won)
			}
			if lost != 0 || dup != 0 {
				t.Errorf("round %d (drops %v): %d lost, %d duplicated or with another WRITETIME", r+1, drop, lost, dup)
			}
			if drop {
				faulty = rate
			} else {
				clean = rate
			}
		}
		if r%2 == 0 { // which side runs first alternates
			run(false)
			run(true)
		} else {
			run(true)
			run(false)
		}
		ratios = append(ratios, faulty/clean)
		t.Logf("round %d: fault-free %.0f writes/s, 10%% dropped %.0f writes/s: %.2f×", r+1, clean, faulty, faulty/clean)
	}
	if e.dropped() == 0 {
		t.Fatal("no response was dropped: the fault was not injected")
	}
	if wonAll == 0 && hedgeDelayEnv() < time.Second { // a fixed delay past the 1 s client timeout: the retry answers first
		t.Errorf("no hedge won under %d dropped responses: hedging did not run", e.dropped())
	}
	m := median(ratios)
	t.Logf("| %s, 10%% of responses dropped (%d) | median %.2f× fault-free (rounds %.2f–%.2f) | target ≥ 0.6× |", label, e.dropped(), m, slices.Min(ratios), slices.Max(ratios))
	if m < 0.6 {
		targetMissed(t, "median throughput %.2f× fault-free, want ≥ 0.6×", m)
	}
}

// TestHedgeFaultFreeCost: hedged vs not hedged with no fault, alternating rounds on the
// same proxies. Target: hedging costs ≤ 5% throughput. CQLSAFE_HEDGE_AA=1 runs it with
// neither side hedged: what the same command reports when there is no difference.
func TestHedgeFaultFreeCost(t *testing.T) {
	e := newEnv(t, time.Second)
	e.exec(t, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`)
	hs := hedgeSession(t, e, time.Second)
	hc := &hedgeCounter{}
	// On the same session: the sides differ in hedging only.
	hedgeFaultFreeCost(t, e, hc, v1Writer(hs, plainPolicy()), v1Writer(hs, hedgePolicy(retry.WithTracer(hc))),
		v1Writer(hs, plainPolicy(retry.WithTracer(hc))), "hedging")
}

// hedgeFaultFreeCost is TestHedgeFaultFreeCost on one driver: plain and hedged write
// through one session, hc counts the hedged side's hedges. With CQLSAFE_HEDGE_AA=1
// unhedged (not hedged, traced by hc) takes the hedged side's place.
func hedgeFaultFreeCost(t *testing.T, e *env, hc *hedgeCounter, plainW, hedgedW, unhedged rowWriter, label string) {
	t.Helper()
	if os.Getenv("CQLSAFE_HEDGE_AA") == "1" {
		// Calibration: both sides not hedged, so the ratio shows the spread of the
		// measurement itself on this machine.
		hedgedW = unhedged
		t.Log("CQLSAFE_HEDGE_AA=1: A/A calibration, neither side hedged")
	}
	rounds, n := hedgeRounds(t)
	var ratios, extra []float64
	var sentAll, wonAll int64
	for r := 0; r < rounds; r++ {
		var plain, hedged float64
		runPlain := func() {
			var lost, dup int
			plain, lost, dup = writeRun(t, e, plainW, r*2, n)
			if lost != 0 || dup != 0 {
				t.Errorf("round %d, not hedged: %d lost, %d duplicated", r+1, lost, dup)
			}
		}
		runHedged := func() {
			var lost, dup int
			before := e.requests()
			hc.take()
			hedged, lost, dup = writeRun(t, e, hedgedW, r*2+1, n)
			extra = append(extra, float64(e.requests()-before-int64(n))/float64(n))
			_, sent, won := hc.take()
			sentAll += sent
			wonAll += won
			t.Logf("round %d, hedged: %d hedges sent, %d won", r+1, sent, won)
			if lost != 0 || dup != 0 {
				t.Errorf("round %d, hedged: %d lost, %d duplicated", r+1, lost, dup)
			}
		}
		if r%2 == 0 {
			runPlain()
			runHedged()
		} else {
			runHedged()
			runPlain()
		}
		ratios = append(ratios, hedged/plain)
		t.Logf("round %d: not hedged %.0f writes/s, hedged %.0f writes/s: %.2f×; hedged run sent %.1f%% more requests than writes",
			r+1, plain, hedged, hedged/plain, 100*extra[r])
	}
	m := median(ratios)
	t.Logf("| %s, fault-free (%d rounds × %d writes) | median %.2f× not hedged (rounds %.2f–%.2f), median %.1f%% more requests; hedges sent %d, won %d | target ≥ 0.95× |",
		label, rounds, n, m, slices.Min(ratios), slices.Max(ratios), 100*median(extra), sentAll, wonAll)
	if m < 0.95 {
		targetMissed(t, "hedging costs %.0f%% throughput, want ≤ 5%%", (1-m)*100)
	}
}

// TestHedgePausedNode: overwrite.Row and eventlog.Append streams, hedged, while node 2
// is paused (SIGSTOP) for 5 s. Target: p99 of each ≤ 100 ms (without hedging an append
// coordinated by the paused node waits for the client timeout). Every row ends at its
// last acknowledged overwrite with WRITETIME N+1; every acknowledged event exactly once.
func TestHedgePausedNode(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	ctx := context.Background()
	e.exec(t, `CREATE TABLE shapes (id int PRIMARY KEY, a text, gen int)`)
	if err := schema.ApplyTemplate(ctx, e.direct, "eventlog", schema.Params{Keyspace: e.ks, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	s := hedgeSession(t, e, 2*time.Second)
	p := hedgePolicy()
	tbl, err := overwrite.Describe(ctx, s, e.ks, "shapes")
	if err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.New(s, e.ks, "events", eventlog.WithBucketWidth(time.Hour), eventlog.WithRetryPolicy(p))
	if err != nil {
		t.Fatal(err)
	}
	hedgePausedNode(t, e, "hedged, node 2 paused (SIGSTOP) 5 s", pausedNodeOps{
		overwrite: func(ctx context.Context, row map[string]any) (int64, error) {
			res, err := overwrite.Row(ctx, s, tbl, row, overwrite.WithRetryPolicy(p))
			return res.Timestamp, err
		},
		append: func(ctx context.Context, ev appended) error {
			_, err := l.Append(ctx, "stream", eventlog.Event{Time: ev.at, Key: []byte(ev.key), Type: "e", Payload: []byte(ev.payload), Writer: ev.writer})
			return err
		},
		read: func(ctx context.Context, yield func(payload string) bool) error {
			for ev, err := range l.Read(ctx, "stream") {
				if err != nil {
					return err
				}
				if !yield(string(ev.Payload)) {
					break
				}
			}
			return nil
		},
	})
}

// pausedNodeOps is one driver's side of hedgePausedNode, every call hedged.
type pausedNodeOps struct {
	// overwrite replaces a row of shapes (id int PRIMARY KEY, a text, gen int) through
	// overwrite.Row and returns its Result.Timestamp N (the INSERT is at N+1), also when
	// the outcome is unknown.
	overwrite func(ctx context.Context, row map[string]any) (ts int64, err error)
	// append appends ev to the eventlog stream "stream"; read walks that stream's payloads.
	append func(ctx context.Context, ev appended) error
	read   func(ctx context.Context, yield func(payload string) bool) error
}

// hedgePausedNode is the paused-node scenario on one driver: 4 overwrite and 4 append
// streams, hedged, while node 2 is paused (SIGSTOP) for 5 s. Target: p99 of each ≤ 100
// ms. Every row ends at its last acknowledged overwrite (or a later unknown one) with
// WRITETIME N+1; every acknowledged event exactly once.
func hedgePausedNode(t *testing.T, e *env, scenario string, ops pausedNodeOps) {
	t.Helper()
	ctx := context.Background()
	// Warm the latency window before the fault.
	for i := 0; i < 100; i++ {
		if _, err := ops.overwrite(ctx, map[string]any{"id": 1000 + i, "a": "warm", "gen": 0}); err != nil {
			t.Fatal(err)
		}
	}
	const rows, writers = 40, 4
	var owLat, apLat latencies
	type rowState struct {
		mu    sync.Mutex
		acked int
		ts    int64
		tried map[int]int64 // gen → N of writes whose outcome stayed unknown
	}
	st := make([]rowState, rows)
	for i := range st {
		st[i].tried = map[int]int64{}
	}
	var acked sync.Map // event key → true
	var ackedN, owErrs, apErrs atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func(w int) { // overwrites
			defer wg.Done()
			for g := 1; ; g++ {
				select {
				case <-stop:
					return
				default:
				}
				for id := w; id < rows; id += writers {
					t0 := time.Now()
					ts, err := ops.overwrite(ctx, map[string]any{"id": id, "a": fmt.Sprint("a", g), "gen": g})
					st[id].mu.Lock()
					if err == nil {
						owLat.add(time.Since(t0))
						st[id].acked, st[id].ts = g, ts
					} else {
						owErrs.Add(1)
						st[id].tried[g] = ts
					}
					st[id].mu.Unlock()
				}
			}
		}(w)
		go func(w int) { // appends
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d-%d", w, j)
				at := time.Now().Add(-time.Hour)
				t0 := time.Now()
				if err := ops.append(ctx, appended{at: at, key: key, payload: key, writer: fmt.Sprint("w", w)}); err != nil {
					apErrs.Add(1)
					continue
				}
				apLat.add(time.Since(t0))
				acked.Store(key, true)
				ackedN.Add(1)
			}
		}(w)
	}
	time.Sleep(3 * time.Second)
	if err := cluster.Pause(ctx, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if err := cluster.Resume(ctx, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()

	// Read back: each row at its last acknowledged overwrite (or a later unknown one),
	// its WRITETIME N+1 of that overwrite.
	var lost int
	for id := 0; id < rows; id++ {
		var a string
		var gen int
		var wt int64
		if err := e.direct.Query(`SELECT a, gen, WRITETIME(a) FROM shapes WHERE id = ?`, id).Scan(&a, &gen, &wt); err != nil {
			t.Errorf("row %d: %v", id, err)
			continue
		}
		r := &st[id]
		switch {
		case gen == r.acked && wt == r.ts+1:
		case gen > r.acked && r.tried[gen] != 0 && wt == r.tried[gen]+1:
		default:
			lost++
			t.Errorf("row %d at gen %d (WRITETIME %d); last acknowledged gen %d at N+1 = %d", id, gen, wt, r.acked, r.ts+1)
		}
	}
	count := map[string]int{}
	var dups int
	if err := ops.read(ctx, func(payload string) bool {
		count[payload]++
		if count[payload] > 1 {
			dups++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	acked.Range(func(k, _ any) bool {
		if count[k.(string)] == 0 {
			lost++
		}
		return true
	})
	owP99, apP99 := owLat.p99(), apLat.p99()
	t.Logf("| %s | overwrite.Row p99 %v (%d errors) | eventlog.Append p99 %v (%d acked, %d errors) | lost %d, duplicated %d | target p99 ≤ 100 ms |",
		scenario, owP99.Round(time.Millisecond), owErrs.Load(), apP99.Round(time.Millisecond), ackedN.Load(), apErrs.Load(), lost, dups)
	if lost != 0 || dups != 0 {
		t.Errorf("lost %d, duplicated %d", lost, dups)
	}
	if owP99 > 100*time.Millisecond || apP99 > 100*time.Millisecond {
		targetMissed(t, "p99 overwrite.Row %v, eventlog.Append %v: want ≤ 100 ms", owP99, apP99)
	}
}

// targetMissed reports a missed performance target. Lost or duplicated writes always
// fail the test; a speed target fails it only with CQLSAFE_HEDGE_TARGETS=1 (on a machine
// the benchmark has to itself), else it is logged: CI shares two cores with three nodes.
func targetMissed(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CQLSAFE_HEDGE_TARGETS") == "1" {
		t.Errorf("target missed: "+format, args...)
		return
	}
	t.Logf("TARGET MISSED (reported, not enforced): "+format, args...)
}
