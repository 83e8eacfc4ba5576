package suite

import (
	"context"
	"errors"
	"fmt"
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
	for i, f := range []faultproxy.ErrorFrame{faultproxy.Unavailable()} {
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
	// A logged batch whose batch-log write timed out (BATCH_LOG) may still be replayed
	// by a batchlog replica that stored it: not re-sent when not repeatable (its list
	// append), and reported as an unknown outcome. (Here the proxy answered for
	// Cassandra, so nothing reached it: the list stays empty.)
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.Reply(faultproxy.WriteTimeout("BATCH_LOG"))))
	if err := p.ExecBatch(ctx, s, appendBatch(30)); !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) || items(30) != 0 {
		t.Errorf("logged batch, BATCH_LOG: %v, %d items; want a non-idempotent unknown outcome, nothing re-sent", err, items(30))
	}
	// The rows below let the request reach Cassandra and assume it applied it. Cassandra
	// can fail it itself (an evicted prepared statement answers UNPREPARED, which the
	// fault then hides from gocql, so it never re-prepares): such a try proves nothing
	// and is made again with a fresh key, after the statements ran once fault-free.
	warm := func() {
		px.SetRule(nil)
		_ = incr(9999).Exec()
		_ = s.ExecuteBatch(appendBatch(9999))
		_ = s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 9999, "warm").Exec()
	}
	row := func(name string, id int, fn func(id int) string) {
		t.Helper()
		for try := 0; ; try++ {
			warm()
			hidden := px.Stats().Hidden.Load()
			msg := fn(id + 100*try)
			if px.Stats().Hidden.Load() == hidden {
				if msg != "" {
					t.Errorf("%s: %s", name, msg)
				}
				return
			}
			if try == 2 {
				t.Fatalf("%s: Cassandra failed the request itself on 3 tries", name)
			}
			t.Logf("%s: Cassandra failed the request itself; trying again", name)
		}
	}
	// In the batch log (BATCH): Cassandra will apply it; never re-sent.
	row("logged batch, BATCH", 31, func(id int) string {
		px.SetRule(faultproxy.Next(1, isBatch, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("BATCH"))))
		if err := p.ExecBatch(ctx, s, appendBatch(id)); !errors.Is(err, retry.ErrBatchLogged) {
			return fmt.Sprintf("err = %v, want ErrBatchLogged", err)
		}
		if n := items(id); n != 1 {
			return fmt.Sprintf("%d items, want 1 (applied once, not re-sent)", n)
		}
		return ""
	})
	// May have applied (SIMPLE, COUNTER, a dropped response, a reset): an idempotent
	// write is retried with its pinned timestamp; a counter is not, and is unknown.
	row("idempotent insert, SIMPLE", 40, func(id int) string {
		px.SetRule(faultproxy.Next(1, isKV, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("SIMPLE"))))
		if err := p.Exec(ctx, s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, id, "x")); err != nil {
			return err.Error()
		}
		var v string
		if err := s0.Query(`SELECT v FROM kv WHERE id = ?`, id).Scan(&v); err != nil || v != "x" {
			return fmt.Sprintf("row: %q, %v", v, err)
		}
		return ""
	})
	for i, a := range []faultproxy.Action{faultproxy.ForwardThenReply(faultproxy.WriteTimeout("COUNTER")), faultproxy.DropResponse, faultproxy.Reset} {
		row(fmt.Sprintf("counter, may have applied (%d)", i), 50+i, func(id int) string {
			px.SetRule(faultproxy.Next(1, isCounter, a))
			err := p.Exec(ctx, incr(id))
			if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) {
				return fmt.Sprintf("err = %v, want a non-idempotent unknown outcome", err)
			}
			if n := counter(id); n != 1 {
				return fmt.Sprintf("n = %d, want 1 (applied once, not re-sent)", n)
			}
			return ""
		})
	}

	// Negative controls: gocql's default policy re-sends the counter after a write
	// timeout it cannot see through, and over-counts; and re-sends a logged batch that
	// is already in the batch log.
	row("negative control, counter", 60, func(id int) string {
		px.SetRule(faultproxy.Next(1, isCounter, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("COUNTER"))))
		if err := incr(id).RetryPolicy(naive).Exec(); err != nil {
			return err.Error()
		}
		if n := counter(id); n != 2 {
			return fmt.Sprintf("gocql's default policy left n = %d; expected the over-count 2 this test guards against", n)
		}
		return ""
	})
	row("negative control, batch", 61, func(id int) string {
		px.SetRule(faultproxy.Next(1, isBatch, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("BATCH"))))
		nb := appendBatch(id)
		nb.RetryPolicy(naive)
		if err := s.ExecuteBatch(nb); err != nil {
			return err.Error()
		}
		if n := items(id); n != 2 {
			return fmt.Sprintf("gocql's default policy left %d items; expected the duplicate 2", n)
		}
		return ""
	})
	t.Logf("proxy replied %d times in Cassandra's place", px.Stats().Replied.Load())
}
