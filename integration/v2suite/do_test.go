package v2suite

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	retryv1 "github.com/cqlsafe/cqlsafe/retry"
)

// TestV2DoReRunsOnlyTheFailedStep: Do's function writes two steps; the second step's
// responses are dropped on both attempts of its first run (WithMaxAttempts(2)), so Do
// runs the function again. The first step is not sent again, the second is re-sent at
// the timestamp of its first run: Cassandra holds both rows, each at its step's
// pinned timestamp.
func TestV2DoReRunsOnlyTheFailedStep(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE ev (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	var inserts, updates, dropped atomic.Int64
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if !r.IsWrite() || r.Opcode == faultproxy.OpPrepare {
			return faultproxy.Forward
		}
		switch {
		case strings.Contains(r.CQL, "INSERT INTO ev"):
			inserts.Add(1)
		case strings.Contains(r.CQL, "UPDATE ev"):
			if updates.Add(1) <= 2 { // both attempts of the step's first run
				dropped.Add(1)
				return faultproxy.DropResponse
			}
		}
		return faultproxy.Forward
	})
	var runs atomic.Int64
	var stamps []int64
	tr := &pinnedStamps{}
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		runs.Add(1)
		if err := retry.Exec(ctx, s.Query(`INSERT INTO ev (id, v) VALUES (?, ?)`, 1, "first")); err != nil {
			return err
		}
		return retry.Exec(ctx, s.Query(`UPDATE ev SET v = ? WHERE id = ?`, "second", 2))
	}, retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, 5*time.Millisecond),
		retry.WithTracer(tr), retry.WithObserver(func(e retry.Event) {
			if e.Statement == "Do" && e.Retrying {
				stamps = append(stamps, 0)
			}
		}))
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if dropped.Load() != 2 || runs.Load() != 2 {
		t.Fatalf("no fault injected: dropped %d, runs %d", dropped.Load(), runs.Load())
	}
	if n := inserts.Load(); n != 1 {
		t.Fatalf("the first step was sent %d times, want once (skipped on the re-run)", n)
	}
	if n := updates.Load(); n != 3 {
		t.Fatalf("the second step was sent %d times, want 3 (twice on the first run, once on the re-run)", n)
	}
	var v string
	var wt1, wt2 int64
	if err := s0.Query(`SELECT WRITETIME(v) FROM ev WHERE id = 1`).Scan(&wt1); err != nil {
		t.Fatal(err)
	}
	if err := s0.Query(`SELECT v, WRITETIME(v) FROM ev WHERE id = 2`).Scan(&v, &wt2); err != nil {
		t.Fatal(err)
	}
	if v != "second" || wt2 <= wt1 {
		t.Fatalf("row 2: v=%q writetime %d (row 1 at %d): want the second step, pinned after the first", v, wt2, wt1)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.updates) != 2 || tr.updates[0] != wt2 || tr.updates[1] != wt2 {
		t.Fatalf("the update's executions were pinned at %v, WRITETIME %d: want both runs at the one Cassandra holds", tr.updates, wt2)
	}
	t.Logf("%d runs, %d Do retries; the insert sent once, the update %d times", runs.Load(), len(stamps), updates.Load())
}

// TestV2DoOutsideDo: the package-level Exec outside Do sends nothing.
func TestV2DoOutsideDo(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE ev (id int PRIMARY KEY, v text)`)
	s, _ := proxied(t, ks, time.Second)
	if err := retry.Exec(context.Background(), s.Query(`INSERT INTO ev (id, v) VALUES (1, 'x')`)); !errors.Is(err, retry.ErrOutsideDo) {
		t.Fatalf("err = %v, want ErrOutsideDo", err)
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM ev`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows (%v), want none", n, err)
	}
}

// pinnedStamps is a Tracer that keeps the pinned timestamp of every UPDATE execution.
type pinnedStamps struct {
	mu      sync.Mutex
	updates []int64
}

func (p *pinnedStamps) Begin(ctx context.Context, x retry.Execution) (context.Context, retry.Trace) {
	if strings.HasPrefix(x.Statement, "UPDATE") {
		p.mu.Lock()
		p.updates = append(p.updates, x.Timestamp)
		p.mu.Unlock()
	}
	return ctx, nil
}

// TestV2StepsAreNotV1Steps: a process linking both drivers. Inside gocql v1.7's Do, the
// v2 package's Exec is not a step of that run (ErrOutsideDo, nothing sent), and a v2
// Policy.Exec runs as an execution of its own.
func TestV2StepsAreNotV1Steps(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE ev (id int PRIMARY KEY, v text)`)
	s, _ := proxied(t, ks, time.Second)
	err := retryv1.Do(context.Background(), func(ctx context.Context) error {
		return retry.Exec(ctx, s.Query(`INSERT INTO ev (id, v) VALUES (1, 'step')`))
	})
	if !errors.Is(err, retry.ErrOutsideDo) {
		t.Fatalf("v2 Exec inside v1 Do: %v, want ErrOutsideDo", err)
	}
	err = retryv1.Do(context.Background(), func(ctx context.Context) error {
		return retry.NewPolicy().Exec(ctx, s.Query(`INSERT INTO ev (id, v) VALUES (2, 'own')`))
	})
	if err != nil {
		t.Fatalf("v2 Policy.Exec inside v1 Do: %v", err)
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM ev`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows (%v), want the Policy.Exec's one", n, err)
	}
}
