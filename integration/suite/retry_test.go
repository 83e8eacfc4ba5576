package suite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestRetryIdempotentWritesUnderDroppedResponses: responses to 10% of the writes are
// dropped after the server applied them. Every write goes through the policy: each row
// ends up present exactly once with WRITETIME equal to the timestamp pinned before its
// first attempt, and retries really happened.
func TestRetryIdempotentWritesUnderDroppedResponses(t *testing.T) {
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
	const n = 300
	ts := make([]int64, n)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			ts[i] = p.Clock().Next()
			if err := p.Exec(ctx, s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)), retry.AtTimestamp(ts[i])); err != nil {
				errs <- fmt.Errorf("row %d: %w", i, err)
			}
		}(i)
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

// naivePolicy retries anything, on the same host: what gocql v1.7.0 does with any retry
// policy set, whatever the query's idempotence.
type naivePolicy struct{ n int }

func (p naivePolicy) Attempt(q gocql.RetryableQuery) bool { return q.Attempts() <= p.n }
func (naivePolicy) GetRetryType(error) gocql.RetryType    { return gocql.Retry }

// TestCounterIncrementNotRetried: under the same fault a counter increment is not
// retried by the policy (applied once, the caller is told the outcome is unknown),
// while naive retrying over-counts — the negative control.
func TestCounterIncrementNotRetried(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE hits (id int PRIMARY KEY, n counter)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	ctx := context.Background()
	read := func(id int) int64 {
		var n int64
		if err := s0.Query(`SELECT n FROM hits WHERE id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE hits")))
	err := retry.NewPolicy().Exec(ctx, s.Query(`UPDATE hits SET n = n + 1 WHERE id = ?`, 1))
	if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("policy: err = %v, want outcome unknown, not retried", err)
	}
	if got := read(1); got != 1 {
		t.Fatalf("policy: counter = %d, want 1 (applied once, not retried)", got)
	}

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE hits")))
	err = s.Query(`UPDATE hits SET n = n + 1 WHERE id = ?`, 2).RetryPolicy(naivePolicy{n: 3}).Exec()
	if err != nil {
		t.Fatalf("naive: %v", err)
	}
	if got := read(2); got != 2 {
		t.Fatalf("naive retry: counter = %d; the negative control expects 2 (one increment applied twice)", got)
	}
	t.Logf("one increment under one dropped response: policy counter=1, naive retry counter=2")
}

// TestReusedQueryAttemptsDoNotLeak: one *gocql.Query executed many times, each
// execution losing its first response. gocql's own attempt count grows across
// executions; the policy counts per execution, so every execution is retried.
func TestReusedQueryAttemptsDoNotLeak(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v int)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond))
	q := s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, 1)
	for exec := 1; exec <= 6; exec++ {
		px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
		if err := p.Exec(context.Background(), q); err != nil {
			t.Fatalf("execution %d (gocql's count now %d): %v", exec, q.Attempts(), err)
		}
	}
	if q.Attempts() < 12 {
		t.Fatalf("gocql's count is %d; expected it to accumulate across executions", q.Attempts())
	}
	if d := px.Stats().Dropped.Load(); d != 6 {
		t.Fatalf("%d responses dropped, want one per execution (6)", d)
	}
	var v int
	if err := s0.Query(`SELECT v FROM kv WHERE id = 1`).Scan(&v); err != nil || v != 1 {
		t.Fatalf("row in Cassandra: v=%d, %v", v, err)
	}
}

// TestDoFieldReport is the field report's example: insert into events, then into
// user_events; the second fails transiently past the per-statement retries. Do re-runs
// the function: the first insert is not sent again, the second is re-sent with the same
// timestamp, and both rows exist once.
func TestDoFieldReport(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0,
		`CREATE TABLE events (id uuid PRIMARY KEY, user_id int, body text)`,
		`CREATE TABLE user_events (user_id int, event_id uuid, kind text, PRIMARY KEY (user_id, event_id))`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	var eventsSent, userEventsSent atomic.Int64
	var bodies sync.Map
	drops := faultproxy.DropNext(3, faultproxy.Writes("INSERT INTO user_events"))
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() && r.Opcode != faultproxy.OpPrepare {
			switch {
			case strings.Contains(r.CQL, "INSERT INTO events"):
				eventsSent.Add(1)
			case strings.Contains(r.CQL, "INSERT INTO user_events"):
				userEventsSent.Add(1)
				bodies.Store(string(r.Body[len(r.Body)-8:]), true) // the timestamp is the body's last 8 bytes
			}
		}
		return drops(r)
	})
	eventID := gocql.MustRandomUUID()
	runs := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		runs++
		if err := retry.Exec(ctx, s.Query(`INSERT INTO events (id, user_id, body) VALUES (?, ?, ?)`, eventID, 7, "signed up")); err != nil {
			return err
		}
		return retry.Exec(ctx, s.Query(`INSERT INTO user_events (user_id, event_id, kind) VALUES (?, ?, 'signup')`, 7, eventID))
	}, retry.WithMaxAttempts(2), retry.WithBackoff(10*time.Millisecond, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || eventsSent.Load() != 1 || userEventsSent.Load() != 4 {
		t.Fatalf("runs=%d events sent=%d user_events sent=%d; want 2, 1, 4", runs, eventsSent.Load(), userEventsSent.Load())
	}
	var sent int64
	distinct := 0
	bodies.Range(func(k, _ any) bool {
		distinct++
		sent = int64(binary.BigEndian.Uint64([]byte(k.(string))))
		return true
	})
	if distinct != 1 {
		t.Fatalf("user_events was sent with %d different timestamps, want 1", distinct)
	}
	// What Cassandra holds carries the one timestamp every attempt sent.
	var wt int64
	if err := s0.Query(`SELECT WRITETIME(kind) FROM user_events WHERE user_id = 7 AND event_id = ?`, eventID).Scan(&wt); err != nil {
		t.Fatal(err)
	}
	if wt != sent {
		t.Fatalf("user_events WRITETIME %d, but every attempt sent %d", wt, sent)
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM events`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("events rows = %d, %v", n, err)
	}
	if err := s0.Query(`SELECT COUNT(*) FROM user_events WHERE user_id = 7`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("user_events rows = %d, %v", n, err)
	}
}

// TestOutboxReplay: a write whose outcome stays unknown goes to the outbox; replaying it
// twice writes the row once, at its original timestamp.
func TestOutboxReplay(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 200*time.Millisecond)
	ob, err := outbox.Open(t.TempDir() + "/outbox")
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	p := retry.NewPolicy(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithOutbox(ob))
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() && strings.Contains(r.CQL, "INSERT INTO kv") {
			return faultproxy.Reset // the request reaches the server, the connection dies
		}
		return faultproxy.Forward
	})
	err = p.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "first"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) {
		t.Fatalf("err = %v, want outcome unknown", err)
	}
	px.SetRule(nil)
	// A newer write lands before the replay: the replay must not overwrite it.
	if err := s0.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "newer").WithTimestamp(ou.Timestamp + 10).Exec(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		n, err := ob.Replay(context.Background(), s0, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 - i; n != want {
			t.Fatalf("replay %d applied %d, want %d", i+1, n, want)
		}
	}
	var v string
	var wt int64
	if err := s0.Query(`SELECT v, WRITETIME(v) FROM kv WHERE id = 1`).Scan(&v, &wt); err != nil {
		t.Fatal(err)
	}
	if v != "newer" || wt != ou.Timestamp+10 {
		t.Fatalf("after replay v=%q writetime=%d; the newer write must survive", v, wt)
	}
}

// TestRetryDeadlineAfterSendIsOutcomeUnknown: the context's deadline passes after the
// request was written and applied (its response is dropped). That is the same situation
// as a client timeout: the caller gets an *OutcomeUnknownError with the pinned
// timestamp, it still matches context.DeadlineExceeded, and it reaches the outbox. A
// context already done sends nothing.
func TestRetryDeadlineAfterSendIsOutcomeUnknown(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 5*time.Second) // the client timeout is far away: the deadline decides
	ob, err := outbox.Open(t.TempDir() + "/outbox")
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	p := retry.NewPolicy(retry.WithOutbox(ob))
	// Prepare first, so the dropped frame is the EXECUTE.
	if err := s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 0, "warm").Exec(); err != nil {
		t.Fatal(err)
	}
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = p.Exec(ctx, s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "x"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) || !errors.Is(err, context.DeadlineExceeded) || ou.Timestamp == 0 || !ou.Idempotent {
		t.Fatalf("err = %v, want an idempotent *OutcomeUnknownError wrapping context.DeadlineExceeded", err)
	}
	var wt int64
	if err := s0.Query(`SELECT WRITETIME(v) FROM kv WHERE id = 1`).Scan(&wt); err != nil || wt != ou.Timestamp {
		t.Fatalf("row: writetime %d (%v), want the pinned %d: the write applied", wt, err, ou.Timestamp)
	}
	if recs, err := ob.Pending(); err != nil || len(recs) != 1 {
		t.Fatalf("outbox holds %d records (%v), want 1", len(recs), err)
	}
	// Already done before the call: nothing is sent, a plain context error.
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if err := p.Exec(done, s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, "y")); !errors.Is(err, context.Canceled) || errors.Is(err, retry.ErrOutcomeUnknown) {
		t.Fatalf("done context: err = %v, want context.Canceled, not unknown", err)
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM kv WHERE id = 2`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("row 2: %d rows (%v): a done context sent the write", n, err)
	}
}

// TestRetryDoRefusesValuesChangedOnRerun: fn mints an id inside itself, so the re-run
// binds another value to the step that failed. Re-sending it under the first attempt's
// timestamp would write a second row: it is ErrNondeterministic with nothing sent.
func TestRetryDoRefusesValuesChangedOnRerun(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE ev (id timeuuid PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 200*time.Millisecond)
	px.SetRule(faultproxy.DropNext(2, faultproxy.Writes("INSERT INTO ev")))
	runs := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		runs++
		id := gocql.TimeUUID() // minted inside fn: a new value on every run
		return retry.Exec(ctx, s.Query(`INSERT INTO ev (id, v) VALUES (?, ?)`, id, "x"))
	}, retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond))
	if !errors.Is(err, retry.ErrNondeterministic) || runs != 2 {
		t.Fatalf("err = %v after %d runs, want ErrNondeterministic on the second run", err, runs)
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM ev`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("ev holds %d rows (%v), want the 1 the first run wrote", n, err)
	}
}

type countingObserver struct{ queries, batches atomic.Int64 }

func (o *countingObserver) ObserveQuery(context.Context, gocql.ObservedQuery) { o.queries.Add(1) }
func (o *countingObserver) ObserveBatch(context.Context, gocql.ObservedBatch) { o.batches.Add(1) }

// TestRetryClusterPolicyAndObservers: set as the cluster's RetryPolicy, the Policy never
// re-sends an unpinned write (gocql would stamp the retry with a fresh timestamp), still
// retries reads, and Policy.Exec leaves the session's own observers in place.
func TestRetryClusterPolicyAndObservers(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	px, err := faultproxy.Start(node.Hosts()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	cl, err := node.ClusterVia(px.Addr(), ks)
	if err != nil {
		t.Fatal(err)
	}
	obs := &countingObserver{}
	p := retry.NewPolicy(retry.WithBackoff(time.Millisecond, time.Millisecond))
	cl.Timeout, cl.RetryPolicy, cl.QueryObserver, cl.BatchObserver = 200*time.Millisecond, p, obs, obs
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var sent atomic.Int64
	drop := faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv"))
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() && r.Opcode != faultproxy.OpPrepare && strings.Contains(r.CQL, "INSERT INTO kv") {
			sent.Add(1)
		}
		return drop(r)
	})
	err = s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "x").Idempotent(true).Exec()
	if err == nil || sent.Load() != 1 {
		t.Fatalf("unpinned write: err %v, sent %d times; want an error after 1", err, sent.Load())
	}
	before := obs.queries.Load()
	if err := p.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, "y")); err != nil {
		t.Fatal(err)
	}
	if obs.queries.Load() <= before {
		t.Fatal("Policy.Exec replaced the session's query observer")
	}
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 3, "z")
	if err := p.ExecBatch(context.Background(), s, b); err != nil || obs.batches.Load() == 0 {
		t.Fatalf("ExecBatch: %v, batch observer saw %d", err, obs.batches.Load())
	}
}
