package v2suite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/outbox"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/integration/internal/scenario"
)

// TestV2OutboxReplay: with one attempt and a dropped response, an idempotent insert
// goes to the outbox with its pinned timestamp and a list append does not (not
// repeatable); the table is truncated behind the Policy's back, then Replay through
// the v2 driver writes it again at the pinned timestamp and empties the outbox.
func TestV2OutboxReplay(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`, `CREATE TABLE l (id int PRIMARY KEY, items list<int>)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	o, err := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	p := retry.NewPolicy(retry.WithMaxAttempts(1), retry.WithOutbox(o), retry.WithSchema(retry.SessionSchema(s)))
	ctx := context.Background()
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	err = p.Exec(ctx, s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "one"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) || !ou.Idempotent {
		t.Fatalf("insert with a dropped response: %v, want a repeatable unknown outcome", err)
	}
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE l")))
	if err := p.Exec(ctx, s.Query(`UPDATE l SET items = items + ? WHERE id = ?`, []int{7}, 1)); !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("list append with a dropped response: %v, want not idempotent", err)
	}
	pending, err := o.Pending()
	if err != nil || len(pending) != 1 || pending[0].Timestamp != ou.Timestamp {
		t.Fatalf("pending %d records (%v), want the insert at %d", len(pending), err, ou.Timestamp)
	}
	harness.Exec(t, s0, `TRUNCATE kv`)
	var rep outbox.ReplayReport
	n, err := o.Replay(ctx, s, nil, outbox.ReportTo(&rep))
	if err != nil || n != 1 || rep.Applied != 1 || rep.Kept != 0 {
		t.Fatalf("replay: %d applied, %+v, %v", n, rep, err)
	}
	var v string
	var wt int64
	if err := s0.Query(`SELECT v, WRITETIME(v) FROM kv WHERE id = 1`).Scan(&v, &wt); err != nil {
		t.Fatal(err)
	}
	if v != "one" || wt != ou.Timestamp {
		t.Fatalf("after replay: v=%q writetime %d, want %q at the pinned %d", v, wt, "one", ou.Timestamp)
	}
	if left, _ := o.Pending(); len(left) != 0 {
		t.Fatalf("%d records left after replay", len(left))
	}
	var items []int
	if err := s0.Query(`SELECT items FROM l WHERE id = 1`).Scan(&items); err != nil || len(items) != 1 {
		t.Fatalf("list: %v (%v), want the one append", items, err)
	}
}

// TestV2OutboxPoisonRecord: scenario.PoisonRecord on the v2 driver.
func TestV2OutboxPoisonRecord(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, _ := proxied(t, ks, 5*time.Second)
	scenario.PoisonRecord(t, s0, scenarioOutbox(t, s))
}

// TestV2OutboxExpiredWriteStillHides: scenario.ExpiredWriteStillHides on the v2 driver.
func TestV2OutboxExpiredWriteStillHides(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, _ := proxied(t, ks, 5*time.Second)
	scenario.ExpiredWriteStillHides(t, s0, scenarioOutbox(t, s))
}

// TestV2OutboxReplayConsistency: scenario.ReplayConsistency on the v2 driver — a write recorded at ALL is replayed
// at ALL, not at the session's ONE.
func TestV2OutboxReplayConsistency(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rf2 := ks + "_rf2"
	if err := node.CreateKeyspace(ctx, s0, rf2, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s0.Query("DROP KEYSPACE IF EXISTS " + rf2).Exec() })
	s, _ := proxiedWith(t, ks, 5*time.Second, func(cl *gocql.ClusterConfig) { cl.Consistency = gocql.One })
	scenario.ReplayConsistency(t, s0, rf2, scenarioOutbox(t, s))
}

// scenarioOutbox is a new outbox, replayed on s, as the scenarios use it.
func scenarioOutbox(t *testing.T, s *gocql.Session) scenario.Outbox {
	t.Helper()
	o, err := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return scenario.Outbox{
		Record: func(cql string, args []any, ts int64, cl string) error {
			return o.Append(&retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: cql, Values: args}}, Timestamp: ts, Idempotent: true, Consistency: cl})
		},
		Replay: func(ctx context.Context) (int, int, int, error) {
			var rep outbox.ReplayReport
			n, err := o.Replay(ctx, s, nil, outbox.ReportTo(&rep))
			return n, rep.Rejected, rep.Kept, err
		},
		IDs: func() ([]string, error) {
			list, err := o.List()
			var ids []string
			for _, e := range list {
				ids = append(ids, e.ID)
			}
			return ids, err
		},
		Drop: o.Drop,
	}
}
