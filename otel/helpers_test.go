package cqlsafeotel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/otelrec"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
)

// recorded is an Instrumentation wired to the SDK's in-memory span recorder and a
// manual metric reader.
type recorded struct {
	*otelrec.Recorder
	inst *cqlsafeotel.Instrumentation
}

func newRecorded(t testing.TB, opts ...cqlsafeotel.Option) recorded {
	t.Helper()
	r := otelrec.New(t)
	inst, err := cqlsafeotel.New(append([]cqlsafeotel.Option{cqlsafeotel.WithTracerProvider(r.TP),
		cqlsafeotel.WithMeterProvider(r.MP)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return recorded{Recorder: r, inst: inst}
}

// instrumentedVia opens a session on ks through a fault proxy in front of the node,
// with the Instrumentation's observers chained in front of a counting one, as an
// application that already had observers would wire them; configure has the last say
// on the cluster configuration.
func instrumentedVia(t testing.TB, ks string, inst *cqlsafeotel.Instrumentation, timeout time.Duration,
	configure ...func(*gocql.ClusterConfig)) (*gocql.Session, *faultproxy.Proxy, *countingObserver) {
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
	counting := &countingObserver{}
	cl.QueryObserver = counting
	cl.BatchObserver = counting
	cl.QueryObserver = inst.QueryObserver(cl.QueryObserver)
	cl.BatchObserver = inst.BatchObserver(cl.BatchObserver)
	for _, c := range configure {
		c(cl)
	}
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, px, counting
}

// countingObserver counts the attempts gocql reports to it: the observer the
// application had before instrumenting.
type countingObserver struct{ queries, batches atomic.Int64 }

func (o *countingObserver) ObserveQuery(context.Context, gocql.ObservedQuery) { o.queries.Add(1) }
func (o *countingObserver) ObserveBatch(context.Context, gocql.ObservedBatch) { o.batches.Add(1) }
