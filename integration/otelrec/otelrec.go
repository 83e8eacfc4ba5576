// Package otelrec records what an OpenTelemetry instrumentation emits, for the tests of
// both drivers' cqlsafeotel packages: spans in the SDK's in-memory recorder, metrics
// through a manual reader, and helpers to read them back.
package otelrec

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Recorder is a tracer provider and a meter provider whose output a test reads.
type Recorder struct {
	TP     *sdktrace.TracerProvider
	MP     *sdkmetric.MeterProvider
	Spans  *tracetest.SpanRecorder
	Reader *sdkmetric.ManualReader
}

// New builds a Recorder, shut down when t ends.
func New(t testing.TB) *Recorder {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return &Recorder{TP: tp, MP: mp, Spans: spans, Reader: reader}
}

// Sum adds up counter name's points whose attributes include every one of want.
func (r *Recorder) Sum(t testing.TB, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	m := r.Metric(t, name)
	if m == nil {
		return 0
	}
	data, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, not an int64 sum", name, m.Data)
	}
	var n int64
	for _, dp := range data.DataPoints {
		if HasAll(dp.Attributes, want) {
			n += dp.Value
		}
	}
	return n
}

// HistogramCount is the number of values histogram name recorded with attributes
// including want.
func (r *Recorder) HistogramCount(t testing.TB, name string, want ...attribute.KeyValue) uint64 {
	t.Helper()
	m := r.Metric(t, name)
	if m == nil {
		return 0
	}
	data, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is %T, not a float64 histogram", name, m.Data)
	}
	var n uint64
	for _, dp := range data.DataPoints {
		if HasAll(dp.Attributes, want) {
			n += dp.Count
		}
	}
	return n
}

// Points lists counter name's data points' attribute sets, for failure messages.
func (r *Recorder) Points(t testing.TB, name string) []string {
	t.Helper()
	var out []string
	if m := r.Metric(t, name); m != nil {
		if data, ok := m.Data.(metricdata.Sum[int64]); ok {
			for _, dp := range data.DataPoints {
				out = append(out, dp.Attributes.Encoded(attribute.DefaultEncoder()))
			}
		}
	}
	return out
}

// Metric collects the metrics and returns name's, nil if it has none.
func (r *Recorder) Metric(t testing.TB, name string) *metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Reader.Collect(context.Background(), &rm); err != nil {
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

// HasAll says whether set holds every one of want.
func HasAll(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// Attrs maps key to value, for asserting on a span's or event's attributes.
func Attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// SpanNames lists the spans' names, for failure messages.
func SpanNames(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// AssertNoValue fails if any attribute of the span or its events, or its status, holds
// value (a bound value must never be recorded).
func AssertNoValue(t testing.TB, sp sdktrace.ReadOnlySpan, value string) {
	t.Helper()
	all := append([]attribute.KeyValue(nil), sp.Attributes()...)
	for _, e := range sp.Events() {
		all = append(all, e.Attributes...)
	}
	for _, kv := range all {
		if strings.Contains(kv.Value.String(), value) {
			t.Errorf("attribute %s holds a bound value: %s", kv.Key, kv.Value.String())
		}
	}
	if strings.Contains(sp.Status().Description, value) {
		t.Errorf("status holds a bound value: %s", sp.Status().Description)
	}
}
