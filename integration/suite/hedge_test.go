package suite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

// hedgedSession is a session through a fault proxy whose hosts are picked through
// retry.HedgingHosts, as hedging requires.
func hedgedSession(t *testing.T, ks string, timeout time.Duration) (*gocql.Session, *faultproxy.Proxy) {
	t.Helper()
	px, err := faultproxy.Start(node.Hosts()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	cl, err := node.ClusterVia(px.Addr(), ks)
	if err != nil {
		t.Fatal(err)
	}
	cl.Timeout = timeout
	cl.NumConns = 2
	cl.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.RoundRobinHostPolicy())
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, px
}

// countWrites wraps rule: every write request whose text contains one of the keys is
// counted under that key before rule decides.
func countWrites(counts map[string]*atomic.Int64, rule faultproxy.Rule) faultproxy.Rule {
	return func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() {
			for k, c := range counts {
				if strings.Contains(r.CQL, k) {
					c.Add(1)
				}
			}
		}
		if rule == nil {
			return faultproxy.Forward
		}
		return rule(r)
	}
}

// TestHedgeSingleNodeDroppedResponses: hedging on a single node, 10% of write responses
// dropped. A speculative execution that found no further host would fail the write
// (gocql v1.7.0 lets its ErrNoConnections win); through HedgingHosts it goes to the
// same node again. Every write must succeed and land exactly once with the pinned
// WRITETIME — events through Exec and rows through overwrite.Row (a batch). The
// negative control shows the trap: gocql's own speculative execution on the same
// single-node session fails writes with ErrNoConnections.
func TestHedgeSingleNodeDroppedResponses(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`,
		`CREATE TABLE shapes (id int PRIMARY KEY, a text, b text)`)
	ctx := context.Background()
	const timeout = 2 * time.Second
	s, px := hedgedSession(t, ks, timeout)
	p := retry.NewPolicy(retry.WithHedging(retry.HedgeDelayBounds(2*time.Millisecond, 50*time.Millisecond), retry.HedgeMaxInFlight(3)),
		retry.WithMaxAttempts(5), retry.WithBackoff(2*time.Millisecond, 20*time.Millisecond))
	tbl := describe(t, s, ks, "shapes")

	counts := map[string]*atomic.Int64{"INSERT INTO ev": new(atomic.Int64), "INSERT INTO": new(atomic.Int64)}
	px.SetRule(countWrites(counts, faultproxy.DropFraction(0.10, 7, faultproxy.Writes(""))))
	const n, rows, workers = 400, 100, 16
	ids := make([]gocql.UUID, n)
	ts := make([]int64, n)
	owTS := make([]int64, rows)
	base := time.Now()
	for i := range ids {
		ids[i] = clientid.NewTimeUUID(base.Add(time.Duration(i) * time.Microsecond))
	}
	var next atomic.Int64
	var errs []error
	var mu sync.Mutex
	var slow atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n+rows {
					return
				}
				t0 := time.Now()
				var err error
				if i < n {
					ts[i] = p.Clock().Next()
					err = p.Exec(ctx, s.Query(`INSERT INTO ev (p, id, v) VALUES (?, ?, ?)`, 1, ids[i], i), retry.AtTimestamp(ts[i]))
				} else {
					var res overwrite.Result
					res, err = overwrite.Row(ctx, s, tbl, map[string]any{"id": i - n, "a": fmt.Sprint("a", i)}, overwrite.WithRetryPolicy(p))
					owTS[i-n] = res.Timestamp
				}
				if time.Since(t0) >= timeout {
					slow.Add(1)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("write %d: %w", i, err))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	px.SetRule(nil)
	for _, err := range errs {
		t.Error(err)
	}

	seen := map[gocql.UUID]bool{}
	var wrong int
	iter := s0.Query(`SELECT id, v, WRITETIME(v) FROM ev WHERE p = 1`).PageSize(5000).Iter()
	var id gocql.UUID
	var v int
	var wt int64
	for iter.Scan(&id, &v, &wt) {
		if seen[id] || v < 0 || v >= n || ids[v] != id || wt != ts[v] {
			wrong++
		}
		seen[id] = true
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n || wrong != 0 {
		t.Errorf("ev: %d rows of %d, %d duplicated or with another WRITETIME than pinned", len(seen), n, wrong)
	}
	for r := 0; r < rows; r++ {
		var a string
		var wta int64
		if err := s0.Query(`SELECT a, WRITETIME(a) FROM shapes WHERE id = ?`, r).Scan(&a, &wta); err != nil {
			t.Errorf("shapes %d: %v", r, err)
			continue
		}
		if a != fmt.Sprint("a", n+r) || wta != owTS[r]+1 {
			t.Errorf("shapes %d: a=%q WRITETIME %d, want %q at N+1 = %d", r, a, wta, fmt.Sprint("a", n+r), owTS[r]+1)
		}
	}
	dropped := px.Stats().Dropped.Load()
	sent := counts["INSERT INTO"].Load()
	if dropped == 0 {
		t.Fatal("no response was dropped: the fault was not injected")
	}
	// Every dropped response needs a second request; hedges beyond that are the slow tail.
	if sent < int64(n)+dropped {
		t.Errorf("%d write requests for %d writes with %d responses dropped: hedges or retries missing", sent, n+rows, dropped)
	}
	t.Logf("single node, 10%% of write responses dropped (%d): %d writes in %v, %d write requests (%d beyond one per write), %d writes waited ≥ the %v client timeout",
		dropped, n+rows, elapsed.Round(time.Millisecond), sent, sent-int64(n+rows), slow.Load(), timeout)

	// Negative control: gocql's own speculative execution on this single-node session.
	// The speculative execution finds no further host, returns ErrNoConnections at
	// once, and that result wins the race: writes fail that never needed to.
	px.SetRule(faultproxy.DropFraction(0.5, 11, faultproxy.Writes("INSERT INTO ev")))
	var noConn int
	for i := 0; i < 40; i++ {
		q := s.Query(`INSERT INTO ev (p, id, v) VALUES (?, ?, ?)`, 2, gocql.TimeUUID(), i).Idempotent(true).
			SetSpeculativeExecutionPolicy(&gocql.SimpleSpeculativeExecution{NumAttempts: 1, TimeoutDelay: 5 * time.Millisecond})
		if err := q.Exec(); errors.Is(err, gocql.ErrNoConnections) {
			noConn++
		}
	}
	px.SetRule(nil)
	if noConn == 0 {
		t.Error("negative control: gocql's speculative execution never failed with ErrNoConnections on one node; the trap this test guards against did not show")
	}
	t.Logf("negative control: gocql.SimpleSpeculativeExecution on one node, 50%% dropped: %d of 40 writes failed with %v", noConn, gocql.ErrNoConnections)
}

// TestHedgeNotRepeatableSentOnce: with hedging on and every request slow (the hedge
// delay long past), the response of a counter increment, a list append and an LWT is
// dropped: each is sent exactly once (counted at the proxy) and Cassandra holds it
// applied once. The positive control, an idempotent INSERT under the same faults, is
// sent more than once: the proxy would see a hedge.
func TestHedgeNotRepeatableSentOnce(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE hits (id int PRIMARY KEY, n counter)`,
		`CREATE TABLE items (id int PRIMARY KEY, l list<int>)`,
		`CREATE TABLE owners (id int PRIMARY KEY, owner text)`,
		`CREATE TABLE plain (id int PRIMARY KEY, v int)`)
	ctx := context.Background()
	s, px := hedgedSession(t, ks, 1500*time.Millisecond)
	p := retry.NewPolicy(retry.WithHedging(retry.HedgeDelayBounds(time.Millisecond, 10*time.Millisecond), retry.HedgeMaxInFlight(3)),
		retry.WithSchema(retry.SessionSchema(s0)), retry.WithMaxAttempts(4))
	// Warm up: prepare the statements before faults, so the proxy counts executions only.
	for _, st := range []string{`UPDATE hits SET n = n + 1 WHERE id = 0`, `UPDATE items SET l = l + [1] WHERE id = 0`,
		`INSERT INTO owners (id, owner) VALUES (0, 'w') IF NOT EXISTS`, `INSERT INTO plain (id, v) VALUES (0, 0)`} {
		if err := s.Query(st).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	px.SetLatency(30 * time.Millisecond) // each way: every request outlasts the hedge delay
	cases := []struct {
		name, key, stmt string
		args            []any
		check           func() (string, bool)
		hedged          bool
	}{
		{"counter increment", "UPDATE hits", `UPDATE hits SET n = n + 1 WHERE id = ?`, []any{1}, func() (string, bool) {
			var c int64
			s0.Query(`SELECT n FROM hits WHERE id = 1`).Scan(&c)
			return fmt.Sprint("n = ", c), c == 1
		}, false},
		{"list append", "UPDATE items", `UPDATE items SET l = l + ? WHERE id = ?`, []any{[]int{7}, 1}, func() (string, bool) {
			var l []int
			s0.Query(`SELECT l FROM items WHERE id = 1`).Scan(&l)
			return fmt.Sprint("l = ", l), len(l) == 1
		}, false},
		{"LWT", "INSERT INTO owners", `INSERT INTO owners (id, owner) VALUES (?, ?) IF NOT EXISTS`, []any{1, "me"}, func() (string, bool) {
			var o string
			s0.Query(`SELECT owner FROM owners WHERE id = 1`).Scan(&o)
			return "owner = " + o, o == "me"
		}, false},
		{"idempotent INSERT (positive control)", "INSERT INTO plain", `INSERT INTO plain (id, v) VALUES (?, ?)`, []any{1, 1}, func() (string, bool) {
			var v int
			s0.Query(`SELECT v FROM plain WHERE id = 1`).Scan(&v)
			return fmt.Sprint("v = ", v), v == 1
		}, true},
	}
	// Fill the latency window so the delay is known (and short) before the faults.
	for i := 0; i < 64; i++ {
		if err := p.Exec(ctx, s.Query(`INSERT INTO plain (id, v) VALUES (?, ?)`, 100+i, i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range cases {
		c := new(atomic.Int64)
		px.SetRule(countWrites(map[string]*atomic.Int64{tc.key: c}, faultproxy.DropNext(1, faultproxy.Writes(tc.key))))
		err := p.Exec(ctx, s.Query(tc.stmt, tc.args...))
		px.SetRule(nil)
		state, ok := tc.check()
		sent := c.Load()
		t.Logf("%s, response dropped: sent %d time(s), %s, err = %v", tc.name, sent, state, err)
		if tc.hedged {
			if err != nil || sent < 2 || !ok {
				t.Errorf("%s: sent %d, %s, err %v; want hedged (≥ 2 sends), applied, no error", tc.name, sent, state, err)
			}
			continue
		}
		if sent != 1 {
			t.Errorf("%s: sent %d times, want exactly once", tc.name, sent)
		}
		if !ok {
			t.Errorf("%s: Cassandra holds %s, want it applied once", tc.name, state)
		}
		if !errors.Is(err, retry.ErrOutcomeUnknown) {
			t.Errorf("%s: err = %v, want the outcome-unknown error", tc.name, err)
		}
	}
}
