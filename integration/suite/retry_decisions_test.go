package suite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestRetryDecisionTable drives every row of the retry decision table through the fault
// proxy, which answers for Cassandra with the error frame of the row — before the
// request reaches Cassandra (nothing applied) or after it applied it — and checks what
// Cassandra holds afterwards: counter values, list lengths, WRITETIME. Each row also runs
// with gocql's default retry policy as a negative control where it gets the row wrong.
func TestRetryDecisionTable(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0,
		`CREATE TABLE c (id int PRIMARY KEY, n counter)`,
		`CREATE TABLE l (id int PRIMARY KEY, items list<int>)`,
		`CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, time.Second)
	p := retry.NewPolicy(retry.WithBackoff(time.Millisecond, 5*time.Millisecond), retry.WithSchema(retry.SessionSchema(s)))
	ctx := context.Background()
	isCounter := faultproxy.Writes("UPDATE c SET")
	isBatch := func(r faultproxy.Request) bool { return r.Opcode == faultproxy.OpBatch }
	isKV := faultproxy.Writes("INSERT INTO kv")

	counter := func(id int) int64 {
		var n int64
		if err := s0.Query(`SELECT n FROM c WHERE id = ?`, id).Scan(&n); err != nil && !errors.Is(err, gocql.ErrNotFound) {
			t.Fatal(err)
		}
		return n
	}
	items := func(id int) int {
		var l []int
		if err := s0.Query(`SELECT items FROM l WHERE id = ?`, id).Scan(&l); err != nil && !errors.Is(err, gocql.ErrNotFound) {
			t.Fatal(err)
		}
		return len(l)
	}
	incr := func(id int) *gocql.Query { return s.Query(`UPDATE c SET n = n + 1 WHERE id = ?`, id) }
	appendBatch := func(id int) *gocql.Batch {
		b := s.NewBatch(gocql.LoggedBatch)
		b.Query(`UPDATE l SET items = items + [1] WHERE id = ?`, id)
		b.Query(`INSERT INTO kv (id, v) VALUES (?, 'batch')`, id)
		return b
	}
	naive := naivePolicy{n: 3} // retries any error on the same host, as gocql's SimpleRetryPolicy does on the next

	// Nothing applied: a counter increment is retried and ends exact.
	for i, f := range []faultproxy.ErrorFrame{faultproxy.Unavailable(), faultproxy.WriteTimeout("BATCH_LOG")} {
		id := 10 + i
		px.SetRule(faultproxy.Next(2, isCounter, faultproxy.Reply(f)))
		if err := p.Exec(ctx, incr(id)); err != nil {
			t.Errorf("counter, %s %s: %v (want retried to success)", f.Message, f.WriteType, err)
		}
		if n := counter(id); n != 1 {
			t.Errorf("counter, %s %s: n = %d, want exactly 1", f.Message, f.WriteType, n)
		}
	}
	// Overloaded and bootstrapping: retried on the next host; a single node has none, so
	// the error comes back — and nothing was applied, so it is not an unknown outcome.
	for i, f := range []faultproxy.ErrorFrame{faultproxy.Overloaded(), faultproxy.IsBootstrapping()} {
		id := 20 + i
		px.SetRule(faultproxy.Next(1, isCounter, faultproxy.Reply(f)))
		err := p.Exec(ctx, incr(id))
		if err == nil || errors.Is(err, retry.ErrOutcomeUnknown) {
			t.Errorf("counter, %s: err = %v, want the error, not an unknown outcome", f.Message, err)
		}
		if n := counter(id); n != 0 {
			t.Errorf("counter, %s: n = %d, want 0 (not applied)", f.Message, n)
		}
	}
	// A logged batch whose batch-log write timed out (BATCH_LOG) was not applied: re-sent
	// even though its list append is not idempotent.
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.Reply(faultproxy.WriteTimeout("BATCH_LOG"))))
	if err := p.ExecBatch(ctx, s, appendBatch(30)); err != nil || items(30) != 1 {
		t.Errorf("logged batch, BATCH_LOG: %v, %d items; want success with 1", err, items(30))
	}
	// In the batch log (BATCH): Cassandra will apply it; never re-sent.
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("BATCH"))))
	if err := p.ExecBatch(ctx, s, appendBatch(31)); !errors.Is(err, retry.ErrBatchLogged) {
		t.Errorf("logged batch, BATCH: err = %v, want ErrBatchLogged", err)
	}
	if n := items(31); n != 1 {
		t.Errorf("logged batch, BATCH: %d items, want 1 (applied once, not re-sent)", n)
	}
	// May have applied (SIMPLE, COUNTER, a dropped response, a reset): an idempotent
	// write is retried with its pinned timestamp; a counter is not, and is unknown.
	px.SetRule(faultproxy.Next(1, isKV, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("SIMPLE"))))
	pq := s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 40, "x")
	if err := p.Exec(ctx, pq); err != nil {
		t.Errorf("idempotent insert, SIMPLE: %v", err)
	}
	var wt1 int64
	if err := s0.Query(`SELECT WRITETIME(v) FROM kv WHERE id = 40`).Scan(&wt1); err != nil || wt1 == 0 {
		t.Fatalf("row 40: %v", err)
	}
	for i, a := range []faultproxy.Action{faultproxy.ForwardThenReply(faultproxy.WriteTimeout("COUNTER")), faultproxy.DropResponse, faultproxy.Reset} {
		id := 50 + i
		px.SetRule(faultproxy.Next(1, isCounter, a))
		err := p.Exec(ctx, incr(id))
		if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) {
			t.Errorf("counter, may have applied (%d): err = %v, want a non-idempotent unknown outcome", i, err)
		}
		if n := counter(id); n != 1 {
			t.Errorf("counter, may have applied (%d): n = %d, want 1 (applied once, not re-sent)", i, n)
		}
	}

	// Negative control: gocql's default policy re-sends the counter after a write
	// timeout it cannot see through, and over-counts.
	px.SetRule(faultproxy.Next(1, isCounter, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("COUNTER"))))
	if err := incr(60).RetryPolicy(naive).Exec(); err != nil {
		t.Fatalf("negative control: %v", err)
	}
	if n := counter(60); n != 2 {
		t.Fatalf("negative control: gocql's default policy left n = %d; expected the over-count 2 this test guards against", n)
	}
	// … and re-sends a logged batch that is already in the batch log.
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("BATCH"))))
	nb := appendBatch(61)
	nb.RetryPolicy(naive)
	if err := s.ExecuteBatch(nb); err != nil {
		t.Fatalf("negative control batch: %v", err)
	}
	if n := items(61); n != 2 {
		t.Fatalf("negative control: gocql's default policy left %d items; expected the duplicate 2", n)
	}
	t.Logf("proxy replied %d times in Cassandra's place", px.Stats().Replied.Load())
}
