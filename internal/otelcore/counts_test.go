package otelcore

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestOtelAttemptCountsOverflow: past maxMeasureSets attribute sets, attempts are
// counted under the set the SDK reports its own overflow under, none is lost, and a
// set is reported only once counted.
func TestOtelAttemptCountsOverflow(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	in, err := New(testDriver, WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	const extra = 10
	for i := range maxMeasureSets + extra {
		in.attempts.get(measureKey{operation: fmt.Sprint("op", i), class: "none"}).Add(2)
	}
	in.attempts.get(measureKey{operation: "never", class: "none"}) // created, not counted
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var points, total, overflow int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "cqlsafe.attempts" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				points++
				total += dp.Value
				if v, ok := dp.Attributes.Value("otel.metric.overflow"); ok && v == attribute.BoolValue(true) {
					overflow = dp.Value
				}
			}
		}
	}
	if points != maxMeasureSets+1 || total != 2*(maxMeasureSets+extra) || overflow != 2*extra {
		t.Errorf("%d points, %d attempts, %d in overflow; want %d, %d, %d", points, total, overflow,
			maxMeasureSets+1, 2*(maxMeasureSets+extra), 2*extra)
	}
}
