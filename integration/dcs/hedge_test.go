package dcs

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"

	retryv2 "github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/retry"
)

// A coordinator counts LOCAL_QUORUM among the replicas of its own data centre. The
// session is DC-aware (dc1 local): its plan gives dc1's node, then dc2's. With dc1's
// node paused, the first request stalls, and a hedge sent to the next host in the plan
// — dc2's node — would be acknowledged by dc2's replica alone: the caller, who asked for
// a quorum in dc1, would be told the write is there while dc1 holds nothing. Hedges
// under LOCAL_* stay in the first host's data centre: the write must not succeed, it
// is an outcome unknown, and dc2's replica must not hold it while dc1 is paused.

// dcKeyspace creates a keyspace with one replica in each data centre and its table kv,
// and returns it with a session reading dc2's node alone at LOCAL_ONE.
func dcKeyspace(t *testing.T) (ks string, dc2 *gocql.Session) {
	t.Helper()
	requireCluster(t)
	ks = harness.KeyspaceName(t.Name())
	cl := gocql.NewCluster(cluster.Hosts()...)
	cl.Timeout = 20 * time.Second
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		fmt.Sprintf(`CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 1}`, ks),
		fmt.Sprintf(`CREATE TABLE %s.kv (id int PRIMARY KEY, v text)`, ks),
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
		if err := s.AwaitSchemaAgreement(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	r := gocql.NewCluster(cluster.Addr(1))
	r.Keyspace = ks
	r.Consistency = gocql.LocalOne
	r.Timeout = 10 * time.Second
	r.HostFilter = gocql.WhiteListHostFilter(cluster.Addr(1))
	r.PoolConfig.HostSelectionPolicy = gocql.DCAwareRoundRobinPolicy("dc2")
	dc2, err = r.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dc2.Close)
	return ks, dc2
}

// inDC2 says whether dc2's replica holds row id.
func inDC2(t *testing.T, dc2 *gocql.Session, id int) bool {
	t.Helper()
	var v string
	err := dc2.Query(`SELECT v FROM kv WHERE id = ?`, id).Scan(&v)
	if err != nil && !errors.Is(err, gocql.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// pauseDC1 pauses dc1's node until the test ends (or resume is called).
func pauseDC1(t *testing.T) (resume func()) {
	t.Helper()
	ctx := context.Background()
	if err := cluster.Pause(ctx, 0); err != nil {
		t.Fatal(err)
	}
	done := false
	resume = func() {
		if !done {
			done = true
			if err := cluster.Resume(ctx, 0); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(resume)
	return resume
}

// stayInDC is the scenario on one driver: write runs INSERT INTO kv (id, v) VALUES
// (id, v) through a hedging Policy on a LOCAL_QUORUM session that prefers dc1; unknown
// says whether an error is its outcome-unknown error.
func stayInDC(t *testing.T, dc2 *gocql.Session, write func(ctx context.Context, id int, v string) error, unknown func(error) bool) {
	t.Helper()
	ctx := context.Background()
	if err := write(ctx, 0, "warm"); err != nil {
		t.Fatal(err)
	}
	resume := pauseDC1(t)
	err := write(ctx, 1, "x")
	held := inDC2(t, dc2, 1)
	resume()
	if !unknown(err) || held {
		t.Errorf("LOCAL_QUORUM write with dc1's node paused: err %v, dc2's replica holds it: %v; want an outcome unknown and nothing in dc2 (a hedge to dc2 counts its quorum there)", err, held)
	}
}

const insertKV = `INSERT INTO kv (id, v) VALUES (?, ?)`

// TestHedgeStaysInLocalDC: gocql v1.7.
func TestHedgeStaysInLocalDC(t *testing.T) {
	ks, dc2 := dcKeyspace(t)
	cl := gocql.NewCluster(cluster.Addr(0))
	cl.Keyspace = ks
	cl.Consistency = gocql.LocalQuorum
	cl.Timeout = 1500 * time.Millisecond
	cl.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.DCAwareRoundRobinPolicy("dc1"))
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := retry.NewPolicy(retry.WithHedging(retry.HedgeDelayBounds(50*time.Millisecond, 50*time.Millisecond)),
		retry.WithMaxAttempts(1), retry.WithSchema(retry.SessionSchema(s)))
	stayInDC(t, dc2, func(ctx context.Context, id int, v string) error { return p.Exec(ctx, s.Query(insertKV, id, v)) },
		func(err error) bool { var u *retry.OutcomeUnknownError; return errors.As(err, &u) })
}

// TestV2HedgeStaysInLocalDC: the v2 driver.
func TestV2HedgeStaysInLocalDC(t *testing.T) {
	ks, dc2 := dcKeyspace(t)
	cl := v2.NewCluster(cluster.Addr(0))
	cl.Keyspace = ks
	cl.Consistency = v2.LocalQuorum
	cl.Timeout = 1500 * time.Millisecond
	cl.PoolConfig.HostSelectionPolicy = retryv2.HedgingHosts(v2.DCAwareRoundRobinPolicy("dc1"))
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := retryv2.NewPolicy(retryv2.WithHedging(retryv2.HedgeDelayBounds(50*time.Millisecond, 50*time.Millisecond)),
		retryv2.WithMaxAttempts(1), retryv2.WithSchema(retryv2.SessionSchema(s)))
	stayInDC(t, dc2, func(ctx context.Context, id int, v string) error { return p.Exec(ctx, s.Query(insertKV, id, v)) },
		func(err error) bool { var u *retryv2.OutcomeUnknownError; return errors.As(err, &u) })
}
