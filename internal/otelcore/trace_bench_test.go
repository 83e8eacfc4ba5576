//go:build unix

package otelcore

import (
	"context"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// BenchmarkOtelExecution is the instrumentation's own cost for one logical write that
// succeeds at the first attempt, as Policy.Exec and a gocql observer drive it, with
// spans batched to a discarding exporter; sampled, and not (metrics only). The
// driver's own cost (its observer) is in each adapter's BenchmarkOtelExecPath.
func BenchmarkOtelExecution(b *testing.B) {
	b.Run("sampled", func(b *testing.B) { benchExecution(b, sdktrace.AlwaysSample()) })
	b.Run("unsampled", func(b *testing.B) { benchExecution(b, sdktrace.NeverSample()) })
}

func benchExecution(b *testing.B, sampler sdktrace.Sampler) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()), sdktrace.WithSampler(sampler))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	in, err := New(testDriver, WithTracerProvider(tp), WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	host := &testHost{addr: "127.0.0.1:9042"}
	const stmt = "INSERT INTO kv (id, v) VALUES (?, ?)"
	x := engine.Execution{Operation: "retry.Exec", Keyspace: "ks", Statement: stmt, Timestamp: 1, Idempotent: true}
	start := time.Now()
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		ctx, tr := in.Begin(context.Background(), x)
		in.ObserveQuery(ctx, stmt, host, start, start.Add(time.Millisecond), nil)
		tr.End(nil, 1)
	}
	// This process's CPU per execution, the span processor's and the GC's included:
	// unlike ns/op, blind to other load on the machine.
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
