package cqlsafeotel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
)

// recorded is an Instrumentation wired to the SDK's in-memory span recorder and a
// manual metric reader.
type recorded struct {
	inst   *cqlsafeotel.Instrumentation
	tp     *sdktrace.TracerProvider // where inst's spans go (unless an option said otherwise)
	mp     *sdkmetric.MeterProvider
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newRecorded(t testing.TB, opts ...cqlsafeotel.Option) recorded {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	inst, err := cqlsafeotel.New(append([]cqlsafeotel.Option{cqlsafeotel.WithTracerProvider(tp),
		cqlsafeotel.WithMeterProvider(mp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return recorded{inst: inst, tp: tp, mp: mp, spans: spans, reader: reader}
}

// sum adds up counter name's points whose attributes include every one of want.
func (r recorded) sum(t testing.TB, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	m := r.metric(t, name)
	if m == nil {
		return 0
	}
	data, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, not an int64 sum", name, m.Data)
	}
	var n int64
	for _, dp := range data.DataPoints {
		if hasAll(dp.Attributes, want) {
			n += dp.Value
		}
	}
	return n
}

// histogramCount is the number of values histogram name recorded with attributes
// including want.
func (r recorded) histogramCount(t testing.TB, name string, want ...attribute.KeyValue) uint64 {
	t.Helper()
	m := r.metric(t, name)
	if m == nil {
		return 0
	}
	data, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is %T, not a float64 histogram", name, m.Data)
	}
	var n uint64
	for _, dp := range data.DataPoints {
		if hasAll(dp.Attributes, want) {
			n += dp.Count
		}
	}
	return n
}

// points lists counter name's data points' attribute sets, for failure messages.
func (r recorded) points(t testing.TB, name string) []string {
	t.Helper()
	var out []string
	if m := r.metric(t, name); m != nil {
		if data, ok := m.Data.(metricdata.Sum[int64]); ok {
			for _, dp := range data.DataPoints {
				out = append(out, dp.Attributes.Encoded(attribute.DefaultEncoder()))
			}
		}
	}
	return out
}

func (r recorded) metric(t testing.TB, name string) *metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for i := range sm.Metrics {
			if sm.Metrics[i].Name == name {
				return &sm.Metrics[i]
			}
		}
	}
	return nil
}

func hasAll(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// attrs maps key to value, for asserting on a span's or event's attributes.
func attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
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
