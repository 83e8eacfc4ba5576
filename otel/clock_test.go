package cqlsafeotel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/otelrec"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestClockOffsetGauge: a Policy whose clock runs 2 s behind the node's is reported at
// +2 s by cqlsafe.clock.offset, with the node's address and the caller's attributes,
// once it has been measured against Cassandra; nothing is reported before.
func TestClockOffsetGauge(t *testing.T) {
	s, _ := node.Keyspace(t)
	r := newRecorded(t)
	lag := 2 * time.Second
	p := retry.NewPolicy(retry.WithClock(clientid.NewClockFunc(func() time.Time { return time.Now().Add(-lag) })))
	reg, err := r.inst.ObserveClockOffset(p, attribute.String("service.instance.id", "orders-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	gauge := func(name string) []metricdata.DataPoint[float64] {
		m := r.Metric(t, name)
		if m == nil {
			return nil
		}
		g, ok := m.Data.(metricdata.Gauge[float64])
		if !ok {
			t.Fatalf("%s is %T, not a float64 gauge", name, m.Data)
		}
		return g.DataPoints
	}
	if pts := gauge("cqlsafe.clock.offset"); len(pts) != 0 {
		t.Fatalf("reported before any measurement: %v", pts)
	}
	o, err := p.MeasureClock(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	pts := gauge("cqlsafe.clock.offset")
	if len(pts) != 1 {
		t.Fatalf("%d points of cqlsafe.clock.offset, want 1", len(pts))
	}
	if got := pts[0].Value; got < 1.95 || got > 2.05 || got != o.Offset.Seconds() {
		t.Errorf("cqlsafe.clock.offset = %v s, MeasureClock said %v; want about 2 s", got, o)
	}
	if !otelrec.HasAll(pts[0].Attributes, []attribute.KeyValue{attribute.String("service.instance.id", "orders-1"), attribute.String("server.address", o.Host)}) {
		t.Errorf("attributes %v", pts[0].Attributes.Encoded(attribute.DefaultEncoder()))
	}
	u := gauge("cqlsafe.clock.offset.uncertainty")
	if len(u) != 1 || u[0].Value <= 0 || u[0].Value != o.Uncertainty.Seconds() {
		t.Errorf("cqlsafe.clock.offset.uncertainty %v, MeasureClock said %v", u, o)
	}
	if _, err := r.inst.ObserveClockOffset(nil); err == nil {
		t.Error("a nil Policy accepted")
	}
}
