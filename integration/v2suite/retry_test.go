package v2suite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/clientid"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// proxied opens a v2 session on keyspace ks whose every connection goes through a fault
// proxy in front of the node (protocol v4, as the v1 suites: the proxy reads v4 frames).
func proxied(t testing.TB, ks string, timeout time.Duration) (*gocql.Session, *faultproxy.Proxy) {
	t.Helper()
	return proxiedWith(t, ks, timeout, nil)
}

// proxiedWith is proxied with edit applied to the cluster configuration (nil: none).
func proxiedWith(t testing.TB, ks string, timeout time.Duration, edit func(*gocql.ClusterConfig)) (*gocql.Session, *faultproxy.Proxy) {
	t.Helper()
	px, err := faultproxy.Start(node.Hosts()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	host, portStr, _ := net.SplitHostPort(px.Addr())
	port, _ := strconv.Atoi(portStr)
	ip := net.ParseIP(host)
	cl := gocql.NewCluster(px.Addr())
	cl.Keyspace = ks
	cl.ProtoVersion = 4
	cl.Timeout = timeout
	cl.ConnectTimeout = 15 * time.Second
	cl.Consistency = gocql.Quorum
	cl.NumConns = 2
	cl.DisableInitialHostLookup = true
	cl.AddressTranslator = gocql.AddressTranslatorFunc(func(net.IP, int) (net.IP, int) { return ip, port })
	if edit != nil {
		edit(cl)
	}
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, px
}

// naiveRetry retries any error on the same host, up to retries times: what hand-written
// retry code does (harness.NaiveRetry for v2).
type naiveRetry struct{ retries int }

func (r naiveRetry) Attempt(q gocql.RetryableQuery) bool { return q.Attempts() <= r.retries }
func (naiveRetry) GetRetryType(error) gocql.RetryType    { return gocql.Retry }

// TestV2RetryIdempotentWritesUnderDroppedResponses: responses to 10 % of the inserts are
// dropped after Cassandra applied them; every row ends up present once with WRITETIME
// equal to the timestamp pinned before its first attempt, and retries really happened.
func TestV2RetryIdempotentWritesUnderDroppedResponses(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	px.SetRule(faultproxy.DropFraction(0.10, 7, faultproxy.Writes("INSERT INTO kv")))

	var retries atomic.Int64
	p := retry.NewPolicy(retry.WithMaxAttempts(8), retry.WithBackoff(5*time.Millisecond, 50*time.Millisecond),
		retry.WithObserver(func(e retry.Event) {
			if e.Retrying {
				retries.Add(1)
			}
		}))
	const n = 200
	ts := make([]int64, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ts[i] = p.Clock().Next()
			if err := p.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)), retry.AtTimestamp(ts[i])); err != nil {
				errs <- fmt.Errorf("row %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if px.Stats().Dropped.Load() == 0 || retries.Load() == 0 {
		t.Fatalf("no fault injected (dropped %d, retries %d)", px.Stats().Dropped.Load(), retries.Load())
	}
	t.Logf("dropped %d responses, %d retries", px.Stats().Dropped.Load(), retries.Load())
	seen := 0
	iter := s0.Query(`SELECT id, v, WRITETIME(v) FROM kv`).Iter()
	var id int
	var v string
	var wt int64
	for iter.Scan(&id, &v, &wt) {
		seen++
		if v != fmt.Sprint("v", id) || wt != ts[id] {
			t.Errorf("row %d: v=%q writetime=%d, want %q and pinned %d", id, v, wt, fmt.Sprint("v", id), ts[id])
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if seen != n {
		t.Fatalf("%d rows, want %d", seen, n)
	}
}

// TestV2RetryNotRepeatableWrites: a counter increment and a non-frozen list assignment
// whose response is dropped are not re-sent (applied once; the caller gets an unknown
// outcome), while the v2 driver's own retry of the same increment over-counts — the
// negative control. A counter increment refused with Unavailable (nothing applied) is
// retried to exactly one: the v2 driver asks a retry policy only about statements
// marked idempotent, so this fails if the Policy marks the wire statement by its verdict.
func TestV2RetryNotRepeatableWrites(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE hits (id int PRIMARY KEY, n counter)`,
		`CREATE TABLE l (id int PRIMARY KEY, items list<int>)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithBackoff(time.Millisecond, 5*time.Millisecond), retry.WithSchema(retry.SessionSchema(s)))
	ctx := context.Background()
	counter := func(id int) int64 {
		var n int64
		if err := s0.Query(`SELECT n FROM hits WHERE id = ?`, id).Scan(&n); err != nil {
			t.Fatalf("counter %d: %v", id, err)
		}
		return n
	}
	incr := func(id int) *gocql.Query { return s.Query(`UPDATE hits SET n = n + 1 WHERE id = ?`, id) }

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE hits")))
	err := p.Exec(ctx, incr(1))
	if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("counter, dropped response: err = %v, want outcome unknown, not retried", err)
	}
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) || ou.Attempts != 1 || ou.Timestamp == 0 {
		t.Errorf("counter: %#v, want one attempt and the pinned timestamp", ou)
	}
	if got := counter(1); got != 1 {
		t.Fatalf("counter, dropped response: n = %d, want 1 (applied once, not re-sent)", got)
	}

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE hits")))
	if err := incr(2).Idempotent(true).RetryPolicy(naiveRetry{retries: 3}).Exec(); err != nil {
		t.Fatalf("driver's own retry: %v", err)
	}
	if got := counter(2); got != 2 {
		t.Fatalf("driver's own retry: n = %d; the negative control expects 2 (one increment applied twice)", got)
	}

	px.SetRule(faultproxy.Next(2, faultproxy.Writes("UPDATE hits"), faultproxy.Reply(faultproxy.Unavailable())))
	if err := p.Exec(ctx, incr(3)); err != nil {
		t.Fatalf("counter, Unavailable twice: %v (want retried to success)", err)
	}
	if got := counter(3); got != 1 {
		t.Fatalf("counter, Unavailable twice: n = %d, want exactly 1", got)
	}

	// A non-frozen list assigned whole from a bound value: Cassandra writes the elements
	// with fresh cell names each time, so a repeat appends a second copy.
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE l")))
	err = p.Exec(ctx, s.Query(`UPDATE l SET items = ? WHERE id = ?`, []int{1, 2}, 1))
	if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("list assignment, dropped response: err = %v, want outcome unknown, not retried", err)
	}
	var items []int
	if err := s0.Query(`SELECT items FROM l WHERE id = 1`).Scan(&items); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(items) != "[1 2]" {
		t.Fatalf("list assignment: items = %v, want [1 2] (not duplicated)", items)
	}
	if requests := px.Stats().Requests.Load(); requests == 0 {
		t.Fatal("no request went through the proxy")
	}
}

// TestV2RetryLoggedBatchInBatchLog: a logged batch answered WRITE_TIMEOUT with write type
// BATCH is in the batch log — Cassandra will apply it — and is never re-sent: the
// caller gets ErrBatchLogged, and one batch reached Cassandra.
func TestV2RetryLoggedBatchInBatchLog(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, time.Second)
	p := retry.NewPolicy(retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	var batches atomic.Int64
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.Opcode == faultproxy.OpBatch {
			if batches.Add(1) == 1 {
				return faultproxy.ForwardThenReply(faultproxy.WriteTimeout("BATCH"))
			}
		}
		return faultproxy.Action{}
	})
	b := s.Batch(gocql.LoggedBatch)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "a")
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, "b")
	err := p.ExecBatch(context.Background(), s, b)
	if !errors.Is(err, retry.ErrBatchLogged) {
		t.Fatalf("err = %v, want ErrBatchLogged", err)
	}
	if n := batches.Load(); n != 1 {
		t.Fatalf("%d batches sent, want 1 (never re-sent)", n)
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM kv`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d rows, want 2 (the batch applied once)", n)
	}
}

// TestV2MeasureClock: the Policy's clock measured against the node through the v2
// driver: same machine, so within a second, with the node's address; with a bound of
// 1 µs beyond any real uncertainty a write is refused unsent.
func TestV2MeasureClock(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, _ := proxied(t, ks, time.Second)
	p := retry.NewPolicy()
	o, err := p.MeasureClock(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if o.Host == "" || o.Offset > time.Second || o.Offset < -time.Second || o.Uncertainty <= 0 {
		t.Fatalf("offset %+v: want a host and |offset| under 1 s", o)
	}
	if got, ok := p.ClockOffset(); !ok || got != o {
		t.Fatalf("ClockOffset() = %+v, %v; want the measurement", got, ok)
	}
	skewed := retry.NewPolicy(retry.WithMaxClockOffset(time.Nanosecond), retry.WithClock(clientid.NewClockFunc(func() time.Time { return time.Now().Add(-time.Hour) })))
	if _, err := skewed.MeasureClock(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := skewed.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (1, 'x')`)); !errors.Is(err, retry.ErrClockSkew) {
		t.Fatalf("a clock an hour behind: %v, want ErrClockSkew", err)
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM kv`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows (%v): the refused write was sent", n, err)
	}
}
