//go:build unix

package cqlsafeotel_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
	"github.com/cqlsafe/cqlsafe/retry"
)

// BenchmarkOtelOverhead measures what the instrumentation costs: the same idempotent
// INSERTs through retry.Policy.Exec, 16 goroutines, on sessions to the same node — one
// plain, two instrumented (observers plus a traced Policy, metrics to a manual reader,
// spans batched to a discarding exporter): one samples every span, one 1 in 10
// (ParentBased(TraceIDRatioBased(0.1)), a common production setting). Each round runs
// the three in rotated order in the same run; it prints every round and reports the
// median throughput ratios to plain and their spread. Run with -benchtime=1x;
// OTEL_OVERHEAD_ROUNDS and OTEL_OVERHEAD_OPS size it.
func BenchmarkOtelOverhead(b *testing.B) {
	s0, ks := node.Keyspace(b)
	harness.Exec(b, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rounds, ops := envInt("OTEL_OVERHEAD_ROUNDS", 12), envInt("OTEL_OVERHEAD_OPS", 5000)
	const workers = 16

	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	type arm struct {
		name   string
		s      *gocql.Session
		p      *retry.Policy
		ratios []float64
		cpu    []float64
		labels context.Context // the arm's profiler labels
	}
	newArm := func(name string, sampler sdktrace.Sampler) *arm {
		// Label what the arm starts (its session's connection goroutines, its span
		// processor) so that a CPU profile (-cpuprofile) tells the arms apart:
		// go tool pprof -tagfocus arm=plain, etc.
		armCtx := pprof.WithLabels(context.Background(), pprof.Labels("arm", name))
		pprof.SetGoroutineLabels(armCtx)
		defer pprof.SetGoroutineLabels(context.Background())
		cl := node.Cluster(ks)
		cl.NumConns = 2
		p := retry.NewPolicy()
		if sampler != nil {
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()), sdktrace.WithSampler(sampler))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			inst, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(tp), cqlsafeotel.WithMeterProvider(mp))
			if err != nil {
				b.Fatal(err)
			}
			cl.QueryObserver = inst.QueryObserver(cl.QueryObserver)
			cl.BatchObserver = inst.BatchObserver(cl.BatchObserver)
			p = retry.NewPolicy(retry.WithTracer(inst))
		}
		s, err := cl.CreateSession()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		return &arm{name: name, s: s, p: p, labels: armCtx}
	}
	arms := []*arm{newArm("plain", nil), newArm("all sampled", sdktrace.AlwaysSample()),
		newArm("1 in 10 sampled", sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1)))}

	type result struct {
		rate   float64 // writes per second
		allocs float64 // per write, client side
		cpu    float64 // µs of this process's CPU per write: unlike the rate, blind to other load on the machine
	}
	var base atomic.Int64
	run := func(a *arm) result {
		first := int(base.Add(int64(ops))) - ops
		var next, failed atomic.Int64
		var wg sync.WaitGroup
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		cpu0 := cpuTime()
		start := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pprof.SetGoroutineLabels(a.labels)
				for {
					i := int(next.Add(1) - 1)
					if i >= ops {
						return
					}
					if err := a.p.Exec(context.Background(), a.s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, first+i, "v")); err != nil {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		cpu := cpuTime() - cpu0
		runtime.ReadMemStats(&m1)
		if n := failed.Load(); n > 0 {
			b.Fatalf("%s: %d writes failed", a.name, n)
		}
		return result{rate: float64(ops) / elapsed.Seconds(), allocs: float64(m1.Mallocs-m0.Mallocs) / float64(ops),
			cpu: float64(cpu.Microseconds()) / float64(ops)}
	}

	for b.Loop() {
		for _, a := range arms {
			run(a) // warm-up: Cassandra's JIT, the sessions' connections
		}
		var table strings.Builder
		fmt.Fprintf(&table, "round  plain w/s  all-sampled w/s (ratio)  1-in-10 w/s (ratio)  client CPU µs/op plain/all/1-in-10  allocs/op\n")
		for r := range rounds {
			res := make([]result, len(arms))
			for k := range arms {
				i := (r + k) % len(arms) // rotate who goes first
				res[i] = run(arms[i])
			}
			for i := 1; i < len(arms); i++ {
				arms[i].ratios = append(arms[i].ratios, res[i].rate/res[0].rate)
			}
			fmt.Fprintf(&table, "%5d  %9.0f  %9.0f (%5.3f)        %9.0f (%5.3f)    %5.1f / %5.1f / %5.1f              %.0f / %.0f / %.0f\n", r+1,
				res[0].rate, res[1].rate, res[1].rate/res[0].rate, res[2].rate, res[2].rate/res[0].rate,
				res[0].cpu, res[1].cpu, res[2].cpu, res[0].allocs, res[1].allocs, res[2].allocs)
			for i := range arms {
				arms[i].cpu = append(arms[i].cpu, res[i].cpu)
			}
		}
		for _, a := range arms[1:] {
			r := slices.Sorted(slices.Values(a.ratios))
			median := (r[(len(r)-1)/2] + r[len(r)/2]) / 2
			q1, q3 := r[len(r)/4], r[(3*len(r))/4]
			fmt.Fprintf(&table, "%-16s median ratio %.3f (overhead %+.1f%%), interquartile %.3f–%.3f, range %.3f–%.3f\n",
				a.name+":", median, (1-median)*100, q1, q3, r[0], r[len(r)-1])
			b.ReportMetric(median, "ratio-"+strings.ReplaceAll(a.name, " ", "-"))
		}
		for _, a := range arms {
			fmt.Fprintf(&table, "%-16s median client CPU %.1f µs/write\n", a.name+":", medianOf(a.cpu))
		}
		fmt.Fprintf(&table, "%d rounds of %d writes per arm, %d goroutines\n", rounds, ops, workers)
		fmt.Print(table.String())
	}
}

func medianOf(v []float64) float64 {
	r := slices.Sorted(slices.Values(v))
	return (r[(len(r)-1)/2] + r[len(r)/2]) / 2
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
