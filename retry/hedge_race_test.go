package retry

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// keyspaceReader is a host selection policy that, like gocql's token-aware policy, reads
// the query's Keyspace and Table when it picks (gocql v1.7.0 reads them without the lock
// its executor holds when it writes them after a prepare).
type keyspaceReader struct {
	gocql.HostSelectionPolicy
	reads atomic.Int64
}

func (k *keyspaceReader) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	if q != nil && q.Keyspace()+q.Table() != "" {
		k.reads.Add(1)
	}
	return k.HostSelectionPolicy.Pick(q)
}

// TestHedgeOwnRoutingInfo: a hedge runs while the first execution is in flight. gocql's
// executor writes the query's routing info (keyspace, table) on every execution of a
// prepared statement, and a token-aware policy reads it without a lock, so a hedge that
// shares the first execution's routing info is a data race (CI's -race run found it with
// TokenAwareHostPolicy on three nodes). Run with -race: it fails if the hedge shares it.
func TestHedgeOwnRoutingInfo(t *testing.T) {
	var prepared atomic.Bool
	srv := startRV(t, func(n int64) (time.Duration, bool) {
		if prepared.Load() && n%2 == 1 {
			return 20 * time.Millisecond, false // the first request answers late: the hedge goes
		}
		return 0, false
	})
	picker := &keyspaceReader{HostSelectionPolicy: gocql.RoundRobinHostPolicy()}
	sess := fakeSession(t, srv, 2*time.Second, func(cl *gocql.ClusterConfig) {
		cl.PoolConfig.HostSelectionPolicy = HedgingHosts(picker)
	})
	tracer := &rvTracer{}
	p := NewPolicy(WithHedging(HedgeDelayBounds(time.Millisecond, time.Millisecond), HedgeMaxInFlight(2)),
		WithTracer(tracer), WithSchema(mapSchema{}))
	exec := func(i int) {
		t.Helper()
		if err := p.Exec(context.Background(), sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, i, "v")); err != nil {
			t.Fatalf("execution %d: %v", i, err)
		}
	}
	exec(0) // prepare
	srv.n.Store(0)
	prepared.Store(true)
	for i := 1; i <= 8; i++ {
		exec(i)
	}
	tracer.mu.Lock()
	sent := 0
	for _, s := range tracer.sent {
		sent += s
	}
	tracer.mu.Unlock()
	if sent == 0 {
		t.Fatal("no hedge was sent: the test did not run the first execution and a hedge at once")
	}
	if picker.reads.Load() == 0 {
		t.Fatal("the policy never saw the keyspace: the test did not read the routing info")
	}
}

// TestOwnRoutingDetaches: ownRouting finds gocql's field (a gocql other than v1.7.0
// could move it) and gives a WithContext copy a record of its own, where WithContext
// alone shares the original's.
func TestOwnRoutingDetaches(t *testing.T) {
	record := func(q *gocql.Query) uintptr {
		return reflect.ValueOf(q).Elem().FieldByIndex(routingInfo.Index).Pointer()
	}
	q := &gocql.Query{}
	if !ownRouting(q) {
		t.Fatal("gocql.Query has no routingInfo pointer field: hedges would share it (see ownRouting)")
	}
	shared := q.WithContext(context.Background())
	if record(shared) != record(q) {
		t.Fatal("WithContext no longer shares the routing record: ownRouting may be unneeded")
	}
	own := q.WithContext(context.Background())
	ownRouting(own)
	if record(own) == record(q) || record(own) == 0 {
		t.Fatal("after ownRouting the copy still shares the original's routing record")
	}
	if ks := own.Keyspace(); ks != "" {
		t.Fatalf("a fresh routing record reads keyspace %q, want none", ks)
	}
}
