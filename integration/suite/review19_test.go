package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Review of issues 15 and 19 (API consolidation, decision table): each test states a
// finding and fails on the current code for the stated reason.

// review19Keyspace creates an extra SimpleStrategy keyspace with replication factor rf on
// the single node (rf > 1: consistency ALL or QUORUM is then Unavailable there).
func review19Keyspace(t *testing.T, s *gocql.Session, rf int) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("r19rf%d_%s", rf, hex.EncodeToString(b[:]))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := node.CreateKeyspace(ctx, s, name, rf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Query("DROP KEYSPACE IF EXISTS " + name).Exec() })
	return name
}

// TestReview19UnavailableAfterPartialCounterBatch: Cassandra's StorageProxy.mutate sends
// a batch's mutations one at a time (mutateCounter / performWrite each check their own
// replicas, then send); an Unavailable for a later mutation arrives after the earlier
// ones were applied. The Policy treats Unavailable as "nothing applied" and re-sends
// even a counter batch: the counters of the first keyspace are incremented once per
// attempt. (Two keyspaces on one node: RF 1 and RF 2 at consistency ALL. On a real
// cluster the same happens within one keyspace when two partitions have different
// replicas, e.g. UPDATE … WHERE pk IN (…).)
func TestReview19UnavailableAfterPartialCounterBatch(t *testing.T) {
	s, ks := node.Keyspace(t)
	harness.Exec(t, s, `CREATE TABLE c (id int PRIMARY KEY, n counter)`)
	counter := func(id int) int64 {
		var n int64
		if err := s.Query(`SELECT n FROM c WHERE id = ?`, id).Consistency(gocql.One).Scan(&n); err != nil && !errors.Is(err, gocql.ErrNotFound) {
			t.Fatal(err)
		}
		return n
	}
	var ks2 string
	batch := func(id int) *gocql.Batch {
		b := s.NewBatch(gocql.CounterBatch)
		b.Query(`UPDATE `+ks+`.c SET n = n + 1 WHERE id = ?`, id)
		b.Query(`UPDATE `+ks2+`.c SET n = n + 1 WHERE id = ?`, id)
		b.SetConsistency(gocql.All)
		return b
	}
	// Precondition, no retries: Cassandra answers Unavailable and has applied the first
	// keyspace's mutation. Cassandra orders a batch's mutations by keyspace (a hash map):
	// try second keyspaces until ours comes first.
	for try := 1; ; try++ {
		ks2 = review19Keyspace(t, s, 2)
		harness.Exec(t, s, `CREATE TABLE `+ks2+`.c (id int PRIMARY KEY, n counter)`)
		raw := batch(100 + try)
		raw.RetryPolicy(nil)
		err := s.ExecuteBatch(raw)
		var un *gocql.RequestErrUnavailable
		if !errors.As(err, &un) {
			t.Fatalf("precondition: err = %v, want Unavailable", err)
		}
		if counter(100+try) == 1 {
			t.Logf("precondition (try %d): Unavailable, and %s.c was incremented", try, ks)
			break
		}
		if try == 8 {
			t.Fatal("precondition: Cassandra never applied the first keyspace's mutation before the Unavailable")
		}
	}

	p := retry.NewPolicy(retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	err := p.ExecBatch(context.Background(), s, batch(1))
	n := counter(1)
	t.Logf("Policy.ExecBatch: err = %v; %s.c n = %d", err, ks, n)
	if n > 1 {
		t.Errorf("counter batch re-sent after an Unavailable that followed an applied mutation: n = %d, want at most 1", n)
	}
	if n > 0 && !errors.Is(err, retry.ErrOutcomeUnknown) {
		t.Errorf("err = %v: the caller is told nothing was applied, yet n = %d", err, n)
	}
}

// TestReview19EarlierAttemptMayHaveApplied: the outcome is judged by the last attempt's
// error only. An idempotent write whose first attempt timed out after Cassandra applied
// it, and whose retry got Unavailable, returns the bare Unavailable error ("nothing was
// written", documented as proof) — not an *OutcomeUnknownError — and never reaches the
// outbox. Cassandra holds the row.
func TestReview19EarlierAttemptMayHaveApplied(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, time.Second)
	const ins = `INSERT INTO kv (id, v) VALUES (?, ?)`
	if err := s.Query(ins, 0, "warm").Exec(); err != nil { // prepared before the fault
		t.Fatal(err)
	}
	var n atomic.Int64
	isKV := faultproxy.Writes("INSERT INTO kv")
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if !isKV(r) {
			return faultproxy.Forward
		}
		if n.Add(1) == 1 {
			return faultproxy.ForwardThenReply(faultproxy.WriteTimeout("SIMPLE")) // applied
		}
		return faultproxy.Reply(faultproxy.Unavailable()) // not applied
	})
	var appended atomic.Int64
	p := retry.NewPolicy(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, 5*time.Millisecond),
		retry.WithOutbox(recorderFunc(func(*retry.OutcomeUnknownError) error { appended.Add(1); return nil })))
	err := p.Exec(context.Background(), s.Query(ins, 1, "x"))
	px.SetRule(nil)
	if px.Stats().Hidden.Load() != 0 {
		t.Fatal("Cassandra failed the request itself; nothing to conclude")
	}
	var v string
	if qerr := s0.Query(`SELECT v FROM kv WHERE id = 1`).Scan(&v); qerr != nil || v != "x" {
		t.Fatalf("precondition: the first attempt should have applied: %q, %v", v, qerr)
	}
	if !errors.Is(err, retry.ErrOutcomeUnknown) {
		t.Errorf("err = %v (class %v), want an unknown outcome: Cassandra holds the row from attempt 1", err, retry.ClassifyError(err))
	}
	if appended.Load() != 1 {
		t.Errorf("outbox appends = %d, want 1", appended.Load())
	}
}

type recorderFunc func(*retry.OutcomeUnknownError) error

func (f recorderFunc) Append(e *retry.OutcomeUnknownError) error { return f(e) }

// TestReview19DoJoinedErrorsResendsCounter: Do decides from the error fn returns but the
// idempotence of the LAST step that failed (run.failed). A function that runs every step
// and returns errors.Join of their errors — a natural shape — gets the counter step (not
// idempotent, outcome unknown) re-sent because a later idempotent step failed too: the
// counter ends at 2 and Do returns nil.
func TestReview19DoJoinedErrorsResendsCounter(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0,
		`CREATE TABLE c (id int PRIMARY KEY, n counter)`,
		`CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	const incr = `UPDATE c SET n = n + 1 WHERE id = ?`
	const ins = `INSERT INTO kv (id, v) VALUES (?, ?)`
	_ = s.Query(incr, 0).Exec() // prepared before the faults
	_ = s.Query(ins, 0, "warm").Exec()

	var counterDrops, kvDrops atomic.Int64
	isCounter, isKV := faultproxy.Writes("UPDATE c SET"), faultproxy.Writes("INSERT INTO kv")
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		switch {
		case isCounter(r) && counterDrops.Add(1) == 1:
			return faultproxy.DropResponse // applied; the client times out
		case isKV(r) && kvDrops.Add(1) <= 2:
			return faultproxy.DropResponse // both attempts of the step
		}
		return faultproxy.Forward
	})
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		e1 := retry.Exec(ctx, s.Query(incr, 1))
		e2 := retry.Exec(ctx, s.Query(ins, 1, "x"))
		return errors.Join(e1, e2)
	}, retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	px.SetRule(nil)
	var n int64
	if qerr := s0.Query(`SELECT n FROM c WHERE id = 1`).Scan(&n); qerr != nil {
		t.Fatal(qerr)
	}
	t.Logf("Do: err = %v; counter = %d; counter requests %d, kv requests %d", err, n, counterDrops.Load(), kvDrops.Load())
	if n != 1 {
		t.Errorf("counter = %d after Do, want 1: Do re-sent the non-idempotent step because another step was idempotent", n)
	}
}

// TestReview19OverwriteConsistencyAny: overwrite.WithConsistency(gocql.Any) is silently
// ignored (the batch is sent at the session's consistency: `if o.consistency != 0`, and
// ANY is 0) — an accepted option value that does nothing. At ANY the write below
// succeeds; at the session's QUORUM it is Unavailable (RF 3 on one node).
func TestReview19OverwriteConsistencyAny(t *testing.T) {
	s, _ := node.Keyspace(t)
	ks3 := review19Keyspace(t, s, 3)
	harness.Exec(t, s, `CREATE TABLE `+ks3+`.t (id int PRIMARY KEY, v text)`)
	tbl := describe(t, s, ks3, "t")
	// Control: ANY accepts this write on this node.
	if err := s.Query(`INSERT INTO ` + ks3 + `.t (id, v) VALUES (0, 'any')`).Consistency(gocql.Any).Exec(); err != nil {
		t.Fatalf("control: INSERT at ANY: %v", err)
	}
	_, err := overwrite.Row(context.Background(), s, tbl, map[string]any{"id": 1, "v": "x"}, overwrite.WithConsistency(gocql.Any))
	if err != nil {
		t.Errorf("overwrite.Row with WithConsistency(ANY): %v (sent at the session's consistency instead)", err)
	}
}

// TestReview19SpeculativeExecutionRace: a pinned, idempotent write under gocql's
// speculative execution runs several attempts at once through one execPolicy; run with
// -race. It also checks the Tracer contract (Attempt never after End).
func TestReview19SpeculativeExecutionRace(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 200*time.Millisecond)
	const ins = `INSERT INTO kv (id, v) VALUES (?, ?)`
	_ = s.Query(ins, 0, "warm").Exec()
	px.SetRule(faultproxy.DropFraction(0.3, 19, faultproxy.Writes("INSERT INTO kv")))
	px.SetLatency(20 * time.Millisecond)
	tr := &review19Tracer{}
	var events atomic.Int64
	p := retry.NewPolicy(retry.WithBackoff(time.Millisecond, 20*time.Millisecond), retry.WithTracer(tr),
		retry.WithObserver(func(retry.Event) { events.Add(1) }))
	sp := &gocql.SimpleSpeculativeExecution{NumAttempts: 2, TimeoutDelay: 30 * time.Millisecond}
	var wg sync.WaitGroup
	var unknown atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				id := 1 + g*100 + i
				err := p.Exec(context.Background(), s.Query(ins, id, "x").SetSpeculativeExecutionPolicy(sp))
				if err != nil {
					unknown.Add(1) // see TestReview19SpeculativeNoHostIsNotProof
				}
			}
		}(g)
	}
	wg.Wait()
	time.Sleep(time.Second) // let losing speculative attempts finish
	px.SetRule(nil)
	t.Logf("failed attempts seen %d, errors %d, dropped %d", events.Load(), unknown.Load(), px.Stats().Dropped.Load())
	if n := tr.late.Load(); n > 0 {
		t.Errorf("Tracer: %d Attempt calls after End", n)
	}
}

type review19Tracer struct{ late atomic.Int64 }

type review19Trace struct {
	t     *review19Tracer
	mu    sync.Mutex
	ended bool
}

func (r *review19Tracer) Begin(ctx context.Context, _ retry.Execution) (context.Context, retry.Trace) {
	return ctx, &review19Trace{t: r}
}

func (x *review19Trace) Attempt(retry.Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended {
		x.t.late.Add(1)
	}
}

func (x *review19Trace) End(error, int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ended = true
}

// TestReview19SpeculativeNoHostIsNotProof: under speculative execution gocql's speculative
// goroutine finds the shared host iterator exhausted (one node, or as many attempts as
// hosts) and returns ErrNoConnections at once, while the first attempt is still in
// flight; executeQuery returns the first result. The Policy classes ErrNoConnections as
// "nothing applied" and returns it bare — but Cassandra applies the in-flight write.
func TestReview19SpeculativeNoHostIsNotProof(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 2*time.Second)
	const ins = `INSERT INTO kv (id, v) VALUES (?, ?)`
	if err := s.Query(ins, 0, "warm").Exec(); err != nil {
		t.Fatal(err)
	}
	px.SetLatency(50 * time.Millisecond)
	p := retry.NewPolicy(retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	sp := &gocql.SimpleSpeculativeExecution{NumAttempts: 1, TimeoutDelay: 10 * time.Millisecond}
	err := p.Exec(context.Background(), s.Query(ins, 1, "x").SetSpeculativeExecutionPolicy(sp))
	time.Sleep(500 * time.Millisecond) // the first attempt lands
	px.SetLatency(0)
	var v string
	qerr := s0.Query(`SELECT v FROM kv WHERE id = 1`).Scan(&v)
	t.Logf("Exec: err = %v (class %v); row: %q, %v", err, retry.ClassifyError(err), v, qerr)
	if err != nil && qerr == nil && !errors.Is(err, retry.ErrOutcomeUnknown) {
		t.Errorf("err = %v (class %v: nothing applied), yet Cassandra holds the row", err, retry.ClassifyError(err))
	}
}

// TestReview19PolicyExecInsideDoIsNotAStep: package Exec outside Do fails loudly
// (ErrOutsideDo), but the mirror mistake does not: Policy.Exec — the "one way to run a
// query", and what overwrite, tombstone, keymigrate and eventlog use underneath — called
// inside Do's function with Do's ctx is not a step. When a later step makes Do re-run
// the function, it is sent again with a fresh timestamp: a counter ends at 2.
func TestReview19PolicyExecInsideDoIsNotAStep(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0,
		`CREATE TABLE c (id int PRIMARY KEY, n counter)`,
		`CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	const incr = `UPDATE c SET n = n + 1 WHERE id = ?`
	const ins = `INSERT INTO kv (id, v) VALUES (?, ?)`
	_ = s.Query(incr, 0).Exec()
	_ = s.Query(ins, 0, "warm").Exec()
	var kvDrops atomic.Int64
	isKV := faultproxy.Writes("INSERT INTO kv")
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if isKV(r) && kvDrops.Add(1) <= 2 {
			return faultproxy.DropResponse // both attempts of the step: Do re-runs fn
		}
		return faultproxy.Forward
	})
	p := retry.NewPolicy(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	var stray error
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		if e := p.Exec(ctx, s.Query(incr, 1)); e != nil {
			stray = e
			return e
		}
		return retry.Exec(ctx, s.Query(ins, 1, "x"))
	}, retry.WithPolicy(p))
	px.SetRule(nil)
	var n int64
	if qerr := s0.Query(`SELECT n FROM c WHERE id = 1`).Scan(&n); qerr != nil {
		t.Fatal(qerr)
	}
	t.Logf("Do: err = %v; Policy.Exec inside Do: %v; counter = %d", err, stray, n)
	if n != 1 {
		t.Errorf("counter = %d, want 1: Policy.Exec inside Do was re-sent on the re-run (want ErrInsideDo-like refusal, or a step)", n)
	}
}
