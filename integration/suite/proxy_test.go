package suite

import (
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// proxied opens a session on keyspace ks whose every connection goes through a fault
// proxy in front of the node. The client-side timeout is short so dropped responses
// turn into timeouts quickly.
func proxied(t testing.TB, ks string, timeout time.Duration) (*gocql.Session, *faultproxy.Proxy) {
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
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, px
}
