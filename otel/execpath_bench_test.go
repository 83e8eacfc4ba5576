//go:build unix

package cqlsafeotel

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cqlsafe/cqlsafe/internal/core/fakecql"
	"github.com/cqlsafe/cqlsafe/retry"
)

// BenchmarkOtelExecPath is the whole client path of one write, as BenchmarkOtelOverhead
// runs it but without Cassandra: retry.Policy.Exec with 16 goroutines on a gocql
// session (2 connections) to fakecql.Server, which answers every write at once. "plain" has
// neither tracer nor observers; the others are instrumented as the overhead benchmark
// is (observers, traced Policy, spans batched to a discarding exporter), sampling
// every span, 1 in 10 (ParentBased(TraceIDRatioBased(0.1))) or none. Their difference
// to plain is the instrumentation's cost, the driver's share of it (an observer makes
// gocql copy per-host metrics and build an ObservedQuery per attempt) included; the
// fake server's cost is the same in every arm.
func BenchmarkOtelExecPath(b *testing.B) {
	f := fakecql.Start(b, nil)
	b.Run("plain", func(b *testing.B) { benchExecPath(b, f, nil) })
	b.Run("unsampled", func(b *testing.B) { benchExecPath(b, f, sdktrace.NeverSample()) })
	b.Run("1-in-10", func(b *testing.B) {
		benchExecPath(b, f, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1)))
	})
	b.Run("sampled", func(b *testing.B) { benchExecPath(b, f, sdktrace.AlwaysSample()) })
}

func benchExecPath(b *testing.B, f *fakecql.Server, sampler sdktrace.Sampler) {
	cl := gocql.NewCluster(f.Addr())
	cl.ProtoVersion = 4
	cl.Keyspace = "ks"
	cl.NumConns = 2
	cl.DisableInitialHostLookup = true
	cl.Events.DisableSchemaEvents, cl.Events.DisableTopologyEvents, cl.Events.DisableNodeStatusEvents = true, true, true
	p := retry.NewPolicy()
	if sampler != nil {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()), sdktrace.WithSampler(sampler))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer tp.Shutdown(context.Background())
		defer mp.Shutdown(context.Background())
		in, err := New(WithTracerProvider(tp), WithMeterProvider(mp))
		if err != nil {
			b.Fatal(err)
		}
		cl.QueryObserver = in.QueryObserver(cl.QueryObserver)
		cl.BatchObserver = in.BatchObserver(cl.BatchObserver)
		p = retry.NewPolicy(retry.WithTracer(in))
	}
	s, err := cl.CreateSession()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const stmt = "INSERT INTO kv (id, v) VALUES (?, ?)"
	if err := p.Exec(context.Background(), s.Query(stmt, 0, "v")); err != nil { // prepare it
		b.Fatal(err)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8) // 16 goroutines on 2 cores, as BenchmarkOtelOverhead
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := p.Exec(context.Background(), s.Query(stmt, int(next.Add(1)), "v")); err != nil {
				b.Error(err)
				return
			}
		}
	})
	// This process's CPU per write (the fake server's included): unlike ns/op, blind to
	// other load on the machine.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
