package v2suite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	v1 "github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/gocqlv2/clientid"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/integration/internal/scenario"
)

// hedgedSession is proxied with the session picking hosts through HedgingHosts and
// observing streams through HedgeStreams: what WithHedging needs.
func hedgedSession(t testing.TB, ks string, timeout time.Duration) (*gocql.Session, *faultproxy.Proxy) {
	t.Helper()
	return proxiedWith(t, ks, timeout, func(cl *gocql.ClusterConfig) {
		cl.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.RoundRobinHostPolicy())
		cl.StreamObserver = retry.HedgeStreams(cl.StreamObserver)
	})
}

// countWrites is scenario.CountWrites.
var countWrites = scenario.CountWrites

// hedgeCount is a Tracer whose traces count the hedges sent and won (HedgeTrace), and
// apart those of batches.
type hedgeCount struct{ sent, won, batchSent, batchWon atomic.Int64 }

type hedgeCountTrace struct {
	c     *hedgeCount
	batch bool
}

func (c *hedgeCount) Begin(ctx context.Context, x retry.Execution) (context.Context, retry.Trace) {
	return ctx, hedgeCountTrace{c, x.Batch}
}
func (hedgeCountTrace) Attempt(retry.Event) {}
func (tr hedgeCountTrace) Hedged(h retry.Hedges) {
	tr.c.sent.Add(int64(h.Sent))
	if tr.batch {
		tr.c.batchSent.Add(int64(h.Sent))
	}
	if h.Won {
		tr.c.won.Add(1)
		if tr.batch {
			tr.c.batchWon.Add(1)
		}
	}
}
func (hedgeCountTrace) End(error, int) {}

// TestV2RetryHedgeSingleNodeDroppedResponses: hedging on the v2 driver, on a single node,
// 10 % of write responses dropped. A hedge finds no other host; through HedgingHosts it
// goes to the same node again. Every write — inserts through Exec, two-row logged
// batches through ExecBatch — succeeds and lands exactly once with the pinned
// WRITETIME, and hedges were sent and won (the tracer hears them): the lost responses
// cost the hedge delay, not the client timeout.
func TestV2RetryHedgeSingleNodeDroppedResponses(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`,
		`CREATE TABLE pairs (id int PRIMARY KEY, a text)`)
	ctx := context.Background()
	const timeout = 2 * time.Second
	s, px := hedgedSession(t, ks, timeout)
	hc := &hedgeCount{}
	p := retry.NewPolicy(retry.WithHedging(retry.HedgeDelayBounds(2*time.Millisecond, 50*time.Millisecond), retry.HedgeMaxInFlight(3)),
		retry.WithMaxAttempts(5), retry.WithBackoff(2*time.Millisecond, 20*time.Millisecond), retry.WithTracer(hc))
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	counts := map[string]*atomic.Int64{"INSERT INTO": new(atomic.Int64)}
	px.SetRule(countWrites(counts, faultproxy.DropFraction(0.10, 7, faultproxy.Writes(""))))
	const n, batches, workers = 400, 100, 16
	ids := make([]gocql.UUID, n)
	ts := make([]int64, n)
	bts := make([]int64, batches)
	base := time.Now()
	for i := range ids {
		ids[i] = clientid.NewTimeUUID(base.Add(time.Duration(i) * time.Microsecond))
	}
	var next, slow atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n+batches {
					return
				}
				t0 := time.Now()
				var err error
				if i < n {
					ts[i] = p.Clock().Next()
					err = p.Exec(ctx, s.Query(`INSERT INTO ev (p, id, v) VALUES (?, ?, ?)`, 1, ids[i], i), retry.AtTimestamp(ts[i]))
				} else {
					k := i - n
					bts[k] = p.Clock().Next()
					b := s.Batch(gocql.LoggedBatch).
						Query(`INSERT INTO pairs (id, a) VALUES (?, ?)`, 2*k, fmt.Sprint("a", 2*k)).
						Query(`INSERT INTO pairs (id, a) VALUES (?, ?)`, 2*k+1, fmt.Sprint("a", 2*k+1))
					err = p.ExecBatch(ctx, s, b, retry.AtTimestamp(bts[k]))
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

	seen := map[v1.UUID]bool{}
	var wrong int
	iter := s0.Query(`SELECT id, v, WRITETIME(v) FROM ev WHERE p = 1`).PageSize(5000).Iter()
	var id v1.UUID
	var v int
	var wt int64
	for iter.Scan(&id, &v, &wt) {
		if seen[id] || v < 0 || v >= n || ids[v] != gocql.UUID(id) || wt != ts[v] {
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
	for r := 0; r < 2*batches; r++ {
		var a string
		var wta int64
		if err := s0.Query(`SELECT a, WRITETIME(a) FROM pairs WHERE id = ?`, r).Scan(&a, &wta); err != nil {
			t.Errorf("pairs %d: %v", r, err)
			continue
		}
		if a != fmt.Sprint("a", r) || wta != bts[r/2] {
			t.Errorf("pairs %d: a=%q WRITETIME %d, want %q at the batch's pinned %d", r, a, wta, fmt.Sprint("a", r), bts[r/2])
		}
	}
	dropped := px.Stats().Dropped.Load()
	sent := counts["INSERT INTO"].Load()
	if dropped == 0 {
		t.Fatal("no response was dropped: the fault was not injected")
	}
	// Every dropped response needs a second request: hedges (or retries) were sent.
	if sent < int64(n+batches)+dropped {
		t.Errorf("%d write requests for %d writes with %d responses dropped: hedges or retries missing", sent, n+batches, dropped)
	}
	if hc.sent.Load() == 0 || hc.won.Load() == 0 || hc.batchSent.Load() == 0 || hc.batchWon.Load() == 0 {
		t.Errorf("the tracer heard %d hedges sent, %d won (of batches %d, %d): the v2 session's hedging did not run",
			hc.sent.Load(), hc.won.Load(), hc.batchSent.Load(), hc.batchWon.Load())
	}
	t.Logf("v2, single node, 10%% of write responses dropped (%d): %d writes in %v, %d write requests; %d hedges sent, %d won (of batches: %d, %d); %d writes waited ≥ the %v client timeout",
		dropped, n+batches, elapsed.Round(time.Millisecond), sent, hc.sent.Load(), hc.won.Load(), hc.batchSent.Load(), hc.batchWon.Load(), slow.Load(), timeout)
}

// TestV2RetryHedgeNotRepeatableSentOnce: scenario.HedgeNotRepeatable on the v2 driver —
// a counter increment, a list append and an LWT whose response is dropped are sent once,
// unhedged, and hold once; an idempotent insert is rescued by a hedge.
func TestV2RetryHedgeNotRepeatableSentOnce(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := hedgedSession(t, ks, 1500*time.Millisecond)
	hc := &hedgeCount{}
	p := retry.NewPolicy(retry.WithHedging(retry.HedgeDelayBounds(time.Millisecond, 10*time.Millisecond), retry.HedgeMaxInFlight(3)),
		retry.WithMaxAttempts(4), retry.WithTracer(hc))
	scenario.HedgeNotRepeatable(t, s0, px, scenario.Hedged{
		Raw: func(stmt string) error { return s.Query(stmt).Exec() },
		Exec: func(ctx context.Context, stmt string, args ...any) error {
			return p.Exec(ctx, s.Query(stmt, args...))
		},
		Hedges:  hc.sent.Load,
		Unknown: func(err error) bool { return errors.Is(err, retry.ErrOutcomeUnknown) },
	})
}
