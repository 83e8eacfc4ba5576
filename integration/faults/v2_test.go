package faults

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"

	eventlogv2 "github.com/cqlsafe/cqlsafe/gocqlv2/eventlog"
	overwritev2 "github.com/cqlsafe/cqlsafe/gocqlv2/overwrite"
	retryv2 "github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	settlev2 "github.com/cqlsafe/cqlsafe/gocqlv2/settle"
	tombstonev2 "github.com/cqlsafe/cqlsafe/gocqlv2/tombstone"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/schema"
)

// The fault scenarios the v2 driver's packages are in (retry with Do and hedging,
// eventlog's appends are retry's, overwrite, tombstone): the same three nodes, proxies
// and checks of what Cassandra holds as the gocql v1.7 scenarios; the session under test
// is the Apache driver v2's, the checks read through the v1.7 direct session.

// v2Session opens a v2 session on e's keyspace whose connection to node i goes through
// e.proxies[i] (token-aware, through HedgingHosts when hedged).
func v2Session(t *testing.T, e *env, timeout time.Duration, hedged bool) *v2.Session {
	t.Helper()
	cl := v2.NewCluster(e.proxies[0].Addr())
	cl.ProtoVersion = 4 // the proxy reads v4 frames
	cl.Keyspace = e.ks
	cl.Consistency = v2.Quorum
	cl.Timeout = timeout
	cl.ConnectTimeout = 5 * time.Second
	if hedged {
		// As the v1.7 scenarios' hedgeSession: HedgingHosts, no HedgeStreams (the
		// recommended setup; HedgeStreams is the option for an overloaded node).
		cl.PoolConfig.HostSelectionPolicy = retryv2.HedgingHosts(v2.TokenAwareHostPolicy(v2.RoundRobinHostPolicy()))
	}
	cl.AddressTranslator = v2.AddressTranslatorFunc(e.translate)
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func policyV2(extra ...retryv2.Option) *retryv2.Policy {
	return retryv2.NewPolicy(append([]retryv2.Option{retryv2.WithMaxAttempts(8),
		retryv2.WithBackoff(20*time.Millisecond, 500*time.Millisecond), retryv2.WithTimeoutsOnNextHost()}, extra...)...)
}

// TestV2FaultsCountersUnderUnavailable is TestFaultsCountersUnderUnavailable on the v2
// driver: one counter request in four answered Unavailable before it reaches
// Cassandra; the Policy retries the counter on the next coordinator and the count ends
// exact.
func TestV2FaultsCountersUnderUnavailable(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	e.exec(t, `CREATE TABLE hits (id int PRIMARY KEY, n counter)`)
	s := v2Session(t, e, 2*time.Second, false)
	e.setRule(everyNth(4, faultproxy.Writes("UPDATE hits"), faultproxy.Reply(faultproxy.Unavailable())))
	ctx := context.Background()
	p := policyV2()
	const n = 200
	var acked int64
	for i := 0; i < n; i++ {
		if err := p.Exec(ctx, s.Query(`UPDATE hits SET n = n + 1 WHERE id = 1`)); err != nil {
			t.Errorf("increment %d: %v", i, err)
			continue
		}
		acked++
	}
	e.setRule(nil)
	var replied int64
	for _, px := range e.proxies {
		replied += px.Stats().Replied.Load()
	}
	var got int64
	if err := e.direct.Query(`SELECT n FROM hits WHERE id = 1`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	result{Scenario: "6. (v2 driver) counter `+1` ×200 under injected Unavailable, cqlsafe policy", Attempted: n, Acked: acked,
		Lost: n - got, Dups: max(0, got-n), Faults: itoa(replied) + " Unavailable answered before Cassandra"}.log(t)
	if replied == 0 || got != n || acked != n {
		t.Fatalf("counter = %d after %d acked increments (%d Unavailable injected), want exactly %d", got, acked, replied, n)
	}
}

// naiveV2 retries any error on the same host, up to 3 times, after pause: what
// hand-written retry code does (harness.NaiveRetry, for the v2 driver, which retries
// only statements marked idempotent: the naive code marks them so).
type naiveV2 struct{ pause time.Duration }

func (n naiveV2) Attempt(q v2.RetryableQuery) bool {
	time.Sleep(n.pause)
	return q.Attempts() <= 3
}
func (naiveV2) GetRetryType(error) v2.RetryType { return v2.Retry }

// TestV2NegativeControlCounter is TestNegativeControlCounter on the v2 driver: the
// naive retry (the increment marked idempotent) over-counts; the Policy never re-sends.
func TestV2NegativeControlCounter(t *testing.T) {
	e := newEnv(t, 700*time.Millisecond)
	s := v2Session(t, e, 700*time.Millisecond, false)
	p := retryv2.NewPolicy()
	counterControl(t, e, "(v2 driver) ", func(stmt string) error {
		return s.Query(stmt).Idempotent(true).RetryPolicy(naiveV2{}).Exec()
	}, func(stmt string) error {
		return p.Exec(context.Background(), s.Query(stmt))
	})
}

// TestV2NegativeControlFreshTimestamp is TestNegativeControlFreshTimestamp on the v2
// driver: retried naively (a fresh client timestamp per attempt) the stale write
// overwrites the newer one; through the Policy (pinned) it loses to it.
func TestV2NegativeControlFreshTimestamp(t *testing.T) {
	e := newEnv(t, 500*time.Millisecond)
	s := v2Session(t, e, 500*time.Millisecond, false)
	freshTimestampControl(t, e, "(v2 driver) ", func(id int, pinned bool) error {
		q := s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, id, "stale")
		if pinned {
			return retryv2.NewPolicy(retryv2.WithBackoff(800*time.Millisecond, 800*time.Millisecond), retryv2.WithoutJitter()).Exec(context.Background(), q)
		}
		return q.Idempotent(true).RetryPolicy(naiveV2{pause: 800 * time.Millisecond}).Exec()
	})
}

// TestV2FaultsLoggedBatchInBatchLog is TestFaultsLoggedBatchInBatchLog on the v2
// driver: a logged batch's write times out after it reached the batch log (write type
// BATCH); the Policy does not re-send it (ErrBatchLogged), the naive retry does and its
// list append applies twice.
func TestV2FaultsLoggedBatchInBatchLog(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	s := v2Session(t, e, 2*time.Second, false)
	batch := func(id int) *v2.Batch {
		return s.Batch(v2.LoggedBatch).
			Query(`UPDATE l SET items = items + [1] WHERE id = ?`, id).
			Query(`INSERT INTO kv (id, v) VALUES (?, 'x')`, id)
	}
	p := policyV2()
	loggedBatchInBatchLog(t, e, "(v2 driver) ", loggedBatchRuns{
		raw: func(id int) error { return batch(id).Exec() },
		safe: func(ctx context.Context, id int) error {
			if err := p.ExecBatch(ctx, s, batch(id)); !errors.Is(err, retryv2.ErrBatchLogged) {
				return fmt.Errorf("%v, want ErrBatchLogged", err)
			}
			return nil
		},
		naive: func(id int) error {
			nb := batch(id).RetryPolicy(naiveV2{})
			for k := range nb.Entries {
				nb.Entries[k].Idempotent = true // the v2 driver retries only batches so marked
			}
			return nb.Exec()
		},
	})
}

// TestV2DoUnderConnectionResets is TestDoUnderConnectionResets on the v2 driver:
// two-statement workflows through retry.Do while every client connection is reset
// every 100 ms; each acknowledged workflow's two rows exist exactly once.
func TestV2DoUnderConnectionResets(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	e.exec(t, `CREATE TABLE events (id uuid PRIMARY KEY, user_id int)`,
		`CREATE TABLE user_events (user_id int, event_id uuid, PRIMARY KEY (user_id, event_id))`)
	s := v2Session(t, e, 2*time.Second, false)
	doUnderResets(t, e, "3. (v2 driver) retry.Do two-statement workflows", func(ctx context.Context, id gocql.UUID, user int) error {
		return retryv2.Do(ctx, func(ctx context.Context) error {
			if err := retryv2.Exec(ctx, s.Query(`INSERT INTO events (id, user_id) VALUES (?, ?)`, v2.UUID(id), user)); err != nil {
				return err
			}
			return retryv2.Exec(ctx, s.Query(`INSERT INTO user_events (user_id, event_id) VALUES (?, ?)`, user, v2.UUID(id)))
		}, retryv2.WithMaxAttempts(10), retryv2.WithBackoff(20*time.Millisecond, 300*time.Millisecond), retryv2.WithTimeoutsOnNextHost())
	})
}

// v2Writer writes through the v2 driver's session s and Policy p.
func v2Writer(s *v2.Session, p *retryv2.Policy) rowWriter {
	return rowWriter{next: p.Clock().Next, insert: func(ctx context.Context, part int, id gocql.UUID, v int, ts int64) error {
		return p.Exec(ctx, s.Query(`INSERT INTO ev (p, id, v) VALUES (?, ?, ?)`, part, v2.UUID(id), v), retryv2.AtTimestamp(ts))
	}}
}

// hedgePolicyV2 is hedgePolicy on the v2 driver (CQLSAFE_HEDGE_DELAY_MS included).
func hedgePolicyV2(extra ...retryv2.Option) *retryv2.Policy {
	var ho []retryv2.HedgeOption
	if d := hedgeDelayEnv(); d > 0 {
		ho = append(ho, retryv2.HedgeDelayBounds(d, d))
	}
	return retryv2.NewPolicy(append([]retryv2.Option{retryv2.WithMaxAttempts(8), retryv2.WithBackoff(5*time.Millisecond, 100*time.Millisecond),
		retryv2.WithTimeoutsOnNextHost(), retryv2.WithHedging(ho...)}, extra...)...)
}

// TestV2HedgeDroppedResponsesThroughput is TestHedgeDroppedResponsesThroughput on the
// v2 driver: 10 % of write responses dropped on every node, hedged writes vs the
// fault-free run in alternating rounds; every write lands exactly once at its pinned
// WRITETIME, hedges won, and the median throughput ratio is held to the same target
// (≥ 0.6×, enforced with CQLSAFE_HEDGE_TARGETS=1).
func TestV2HedgeDroppedResponsesThroughput(t *testing.T) {
	e := newEnv(t, time.Second)
	e.exec(t, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`)
	s := v2Session(t, e, time.Second, true)
	hc := &hedgeCounter{}
	hedgeDroppedThroughput(t, e, hc, v2Writer(s, hedgePolicyV2(retryv2.WithTracer(hc))), "v2 driver, hedged writes")
}

// TestV2HedgeFaultFreeCost is TestHedgeFaultFreeCost on the v2 driver: hedged vs not
// hedged on one session with no fault, alternating rounds (target ≥ 0.95×).
func TestV2HedgeFaultFreeCost(t *testing.T) {
	e := newEnv(t, time.Second)
	e.exec(t, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`)
	s := v2Session(t, e, time.Second, true)
	hc := &hedgeCounter{}
	plain := func(extra ...retryv2.Option) *retryv2.Policy {
		return retryv2.NewPolicy(append([]retryv2.Option{retryv2.WithMaxAttempts(8),
			retryv2.WithBackoff(5*time.Millisecond, 100*time.Millisecond), retryv2.WithTimeoutsOnNextHost()}, extra...)...)
	}
	hedgeFaultFreeCost(t, e, hc, v2Writer(s, plain()), v2Writer(s, hedgePolicyV2(retryv2.WithTracer(hc))),
		v2Writer(s, plain(retryv2.WithTracer(hc))), "v2 driver, hedging")
}

// TestV2EventlogWritersWithDropsAndPause is TestEventlogWritersWithDropsAndPause on the
// v2 driver: 4 writers append to one stream with 10% of write responses dropped and one
// node paused for 5 s. Every event exactly once, in order per writer.
func TestV2EventlogWritersWithDropsAndPause(t *testing.T) {
	e := newEnv(t, 1*time.Second)
	ctx := context.Background()
	if err := schema.ApplyTemplate(ctx, e.direct, "eventlog", schema.Params{Keyspace: e.ks, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	s := v2Session(t, e, time.Second, false)
	l, err := eventlogv2.New(s, e.ks, "events", eventlogv2.WithBucketWidth(time.Hour), eventlogv2.WithRetryPolicy(policyV2()))
	if err != nil {
		t.Fatal(err)
	}
	eventlogUnderDropsAndPause(t, e, "2. (v2 driver) eventlog.Append, 4 writers",
		func(ctx context.Context, evs []appended) error {
			out := make([]eventlogv2.Event, len(evs))
			for i, ev := range evs {
				out[i] = eventlogv2.Event{Time: ev.at, Key: []byte(ev.key), Type: "e", Payload: []byte(ev.payload), Writer: ev.writer}
			}
			_, err := l.Append(ctx, "stream", out...)
			return err
		},
		func(ctx context.Context, yield func(writer, payload string) bool) error {
			for ev, err := range l.Read(ctx, "stream") {
				if err != nil {
					return err
				}
				if !yield(ev.Writer, string(ev.Payload)) {
					break
				}
			}
			return nil
		})
}

// TestV2FaultsLWTSettledUnderDroppedResponses is TestFaultsLWTSettledUnderDroppedResponses
// on the v2 driver: lease claims whose responses are dropped after Paxos committed them
// are settled as applied by gocqlv2/settle.LWT (a SERIAL read through a v2 session), and
// the naive re-send — the negative control — answers applied=false for the caller's own
// claim.
func TestV2FaultsLWTSettledUnderDroppedResponses(t *testing.T) {
	e := newEnv(t, 700*time.Millisecond)
	e.exec(t, `CREATE TABLE leases (name text PRIMARY KEY, owner text)`)
	s := v2Session(t, e, 700*time.Millisecond, false)
	ctx := context.Background()
	claim := `INSERT INTO leases (name, owner) VALUES (?, ?) IF NOT EXISTS`
	once := retryv2.NewPolicy(retryv2.WithMaxAttempts(1))
	const n = 6 // each claim takes about 2 s (the client timeout, settle.After)
	var applied, wrongNaive, unknown int64
	for i := 0; i < n; i++ {
		_, _ = s.Query(claim, "warm", "w").ScanCAS() // prepared, fault-free
		name := "job-" + itoa(int64(i))
		e.setRule(faultproxy.Next(1, faultproxy.Writes("INSERT INTO leases"), faultproxy.DropResponse))
		err := once.Exec(ctx, s.Query(claim, name, "worker-1"))
		if !errors.Is(err, retryv2.ErrOutcomeUnknown) {
			t.Errorf("claim %d: %v, want an unknown outcome", i, err)
			continue
		}
		unknown++
		e.setRule(nil)
		st, err := settlev2.LWT(ctx, s, retryv2.Statement{CQL: claim, Values: []any{name, "worker-1"}}, settlev2.After(time.Second))
		if err == nil && st.Outcome == settlev2.LWTApplied {
			applied++
		}
		var owner string
		if err := e.s.Query(`SELECT owner FROM leases WHERE name = ?`, name).Consistency(gocql.Consistency(gocql.Serial)).Scan(&owner); err != nil || owner != "worker-1" {
			t.Errorf("claim %d: Cassandra holds owner %q (%v), want worker-1", i, owner, err)
		}
		ok, err := s.Query(claim, name, "worker-1").MapScanCAS(map[string]any{})
		if err == nil && !ok {
			wrongNaive++
		}
	}
	result{Scenario: "8. (v2 driver) LWT lease claims ×6, settled with gocqlv2/settle.LWT", Attempted: n, Acked: applied,
		Faults: itoa(unknown) + " responses dropped after Paxos committed"}.log(t)
	if applied != unknown || unknown != n {
		t.Fatalf("settled applied %d of %d unknown claims (of %d)", applied, unknown, n)
	}
	if wrongNaive != n {
		t.Fatalf("negative control: naive re-send reported applied=false %d times of %d", wrongNaive, n)
	}
}

// TestV2OverwriteWhileNodeKilled is TestOverwriteWhileNodeKilled on the v2 driver:
// gocqlv2/overwrite.Row at QUORUM through the v2 Policy while node 2 is killed (SIGKILL)
// and restarted. Every row ends at its last acknowledged overwrite or a later one whose
// outcome was unknown, with no mix of two overwrites' columns.
func TestV2OverwriteWhileNodeKilled(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	ctx := context.Background()
	e.exec(t, `CREATE TABLE shapes (id int PRIMARY KEY, a text, b text, c text, gen int)`)
	s := v2Session(t, e, 2*time.Second, false)
	tbl, err := overwritev2.Describe(ctx, s, e.ks, "shapes")
	if err != nil {
		t.Fatal(err)
	}
	p := policyV2()
	overwriteWhileNodeKilled(t, e, "1. (v2 driver) overwrite.Row stream at QUORUM", func(ctx context.Context, row map[string]any) error {
		_, err := overwritev2.Row(ctx, s, tbl, row, overwritev2.WithRetryPolicy(p))
		return err
	})
}

// TestV2TombstoneRacingWritesUnderLatency is TestTombstoneRacingWritesUnderLatency on
// the v2 driver: gocqlv2/tombstone deletes race writes pinned through the v2 Policy under
// 20 ms of added latency. Every row holds the newest write newer than the newest delete.
func TestV2TombstoneRacingWritesUnderLatency(t *testing.T) {
	e := newEnv(t, 3*time.Second)
	ctx := context.Background()
	e.exec(t, `CREATE TABLE items (id int PRIMARY KEY, v int)`)
	if err := schema.ApplyTemplate(ctx, e.direct, "tombstones", schema.Params{Keyspace: e.ks, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	s := v2Session(t, e, 3*time.Second, false)
	tbl, err := overwritev2.Describe(ctx, s, e.ks, "items")
	if err != nil {
		t.Fatal(err)
	}
	store, err := tombstonev2.New(ctx, s, e.ks, "tombstones", tombstonev2.WithRetryPolicy(policyV2()))
	if err != nil {
		t.Fatal(err)
	}
	tombstoneRacingWrites(t, e, "4. (v2 driver) tombstone.Delete racing writes", racingOps{
		seed: func(id, v int, ts int64) error {
			return s.Query(`INSERT INTO items (id, v) VALUES (?, ?)`, id, v).WithTimestamp(ts).Exec()
		},
		write: func(ctx context.Context, id, v int) (int64, error) {
			pol := policyV2()
			ts := pol.Clock().Next()
			return ts, pol.Exec(ctx, s.Query(`UPDATE items SET v = ? WHERE id = ?`, v, id), retryv2.AtTimestamp(ts))
		},
		delete: func(ctx context.Context, id int, commandID string) (int64, error) {
			rec, err := store.Delete(ctx, tbl, map[string]any{"id": id}, commandID)
			return rec.Timestamp, err
		},
	})
}

// TestV2HedgePausedNode is TestHedgePausedNode on the v2 driver: hedged
// gocqlv2/overwrite.Row and gocqlv2/eventlog.Append streams while node 2 is paused
// (SIGSTOP) for 5 s. Target (reported, enforced with CQLSAFE_HEDGE_TARGETS=1): p99 of
// each ≤ 100 ms. Every row ends at its last acknowledged overwrite with WRITETIME N+1;
// or a later one whose outcome is unknown; every acknowledged event exactly once.
func TestV2HedgePausedNode(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	ctx := context.Background()
	e.exec(t, `CREATE TABLE shapes (id int PRIMARY KEY, a text, gen int)`)
	if err := schema.ApplyTemplate(ctx, e.direct, "eventlog", schema.Params{Keyspace: e.ks, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	s := v2Session(t, e, 2*time.Second, true)
	p := hedgePolicyV2()
	tbl, err := overwritev2.Describe(ctx, s, e.ks, "shapes")
	if err != nil {
		t.Fatal(err)
	}
	l, err := eventlogv2.New(s, e.ks, "events", eventlogv2.WithBucketWidth(time.Hour), eventlogv2.WithRetryPolicy(p))
	if err != nil {
		t.Fatal(err)
	}
	hedgePausedNode(t, e, "(v2 driver) hedged, node 2 paused (SIGSTOP) 5 s", pausedNodeOps{
		overwrite: func(ctx context.Context, row map[string]any) (int64, error) {
			res, err := overwritev2.Row(ctx, s, tbl, row, overwritev2.WithRetryPolicy(p))
			return res.Timestamp, err
		},
		append: func(ctx context.Context, ev appended) error {
			_, err := l.Append(ctx, "stream", eventlogv2.Event{Time: ev.at, Key: []byte(ev.key), Type: "e", Payload: []byte(ev.payload), Writer: ev.writer})
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
