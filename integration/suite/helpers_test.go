package suite

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/overwrite"
)

// Helpers shared by the suites: every test file of this package uses them.

// proxied opens a session on keyspace ks whose every connection goes through a fault
// proxy in front of the node. The client-side timeout is short so dropped responses
// turn into timeouts quickly.
func proxied(t testing.TB, ks string, timeout time.Duration) (*gocql.Session, *faultproxy.Proxy) {
	t.Helper()
	return proxiedWith(t, ks, timeout, nil)
}

// proxiedWith is proxied with a last say on the cluster configuration (nil: none).
func proxiedWith(t testing.TB, ks string, timeout time.Duration, tweak func(*gocql.ClusterConfig)) (*gocql.Session, *faultproxy.Proxy) {
	t.Helper()
	px, err := faultproxy.Start(node.Hosts()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	cl, err := node.ClusterVia(px.Addr(), ks)
	if err != nil {
		t.Fatal(err)
	}
	cl.Timeout = timeout
	cl.NumConns = 2
	if tweak != nil {
		tweak(cl)
	}
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, px
}

// describe reads a table's metadata for overwrite, failing the test if it cannot.
func describe(t testing.TB, s *gocql.Session, ks, table string) *overwrite.Table {
	t.Helper()
	tbl, err := overwrite.Describe(context.Background(), s, ks, table)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// countingObserver counts the attempts gocql reports to a session's observers.
type countingObserver struct{ queries, batches atomic.Int64 }

func (o *countingObserver) ObserveQuery(context.Context, gocql.ObservedQuery) { o.queries.Add(1) }
func (o *countingObserver) ObserveBatch(context.Context, gocql.ObservedBatch) { o.batches.Add(1) }

// listOf reads list l of row id.
func listOf(t *testing.T, s *gocql.Session, table string, id int) string {
	t.Helper()
	var l []int
	if err := s.Query(fmt.Sprintf(`SELECT l FROM %s WHERE id = ?`, table), id).Scan(&l); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(l)
}
