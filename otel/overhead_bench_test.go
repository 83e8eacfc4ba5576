//go:build unix

package cqlsafeotel_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
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
// (ParentBased(TraceIDRatioBased(0.1)), a common production setting).
//
// Throughput on a small shared machine drifts by more than the few percent measured
// here, from second to second, so the benchmark runs many short rounds: in each the
// three arms run back to back, in rotated order (plain first, then second, then
// third), and an arm's ratio is its throughput over plain's in the same round. It
// reports the median ratio over rounds, the interquartile range, and a bootstrap 90%
// interval of the median (rounds resampled with replacement); and the client CPU per
// write of each arm (this process's CPU, blind to other load on the machine), with the
// median per-round ratio to plain's. Every round is printed too.
//
// OTEL_OVERHEAD_ROUNDS (default 60) and OTEL_OVERHEAD_OPS (writes per arm and round,
// default 4000) size it; OTEL_OVERHEAD_OUT=path writes the summary into that markdown
// file (relative to this package's directory: ../BENCHMARKS.md), between the
// bench:otel markers, replacing what was there or appending it. From the repository
// root, on a quiet machine:
//
//	OTEL_OVERHEAD_OUT=../BENCHMARKS.md CQLSAFE_CASSANDRA_HOSTS=127.0.0.1:9042 \
//	    go test -run '^$' -bench OtelOverhead -benchtime 1x -timeout 30m ./otel
func BenchmarkOtelOverhead(b *testing.B) {
	s0, ks := node.Keyspace(b)
	harness.Exec(b, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rounds, ops := envInt("OTEL_OVERHEAD_ROUNDS", 60), envInt("OTEL_OVERHEAD_OPS", 4000)
	out := os.Getenv("OTEL_OVERHEAD_OUT")
	const workers = 16

	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	type arm struct {
		name   string
		s      *gocql.Session
		p      *retry.Policy
		ratios []float64 // throughput ÷ plain's, per round
		cpu    []float64 // client CPU µs per write, per round
		cpuRel []float64 // cpu ÷ plain's, per round
		rates  []float64
		allocs []float64
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
	run := func(a *arm, n int) result {
		first := int(base.Add(int64(n))) - n
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
					if i >= n {
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
		if k := failed.Load(); k > 0 {
			b.Fatalf("%s: %d writes failed", a.name, k)
		}
		return result{rate: float64(n) / elapsed.Seconds(), allocs: float64(m1.Mallocs-m0.Mallocs) / float64(n),
			cpu: float64(cpu.Microseconds()) / float64(n)}
	}

	for b.Loop() {
		env := describeBenchMachine()
		for _, a := range arms {
			run(a, max(ops, 2000)) // warm-up: Cassandra's JIT, the sessions' connections
		}
		began := time.Now()
		fmt.Printf("round  plain w/s  all-sampled w/s (ratio)  1-in-10 w/s (ratio)  client CPU µs/write plain/all/1-in-10  allocs/write\n")
		for r := range rounds {
			res := make([]result, len(arms))
			for k := range arms {
				i := (r + k) % len(arms) // rotate who goes first
				res[i] = run(arms[i], ops)
			}
			for i, a := range arms {
				a.rates = append(a.rates, res[i].rate)
				a.cpu = append(a.cpu, res[i].cpu)
				a.allocs = append(a.allocs, res[i].allocs)
				a.ratios = append(a.ratios, res[i].rate/res[0].rate)
				a.cpuRel = append(a.cpuRel, res[i].cpu/res[0].cpu)
			}
			fmt.Printf("%5d  %9.0f  %9.0f (%5.3f)        %9.0f (%5.3f)    %5.1f / %5.1f / %5.1f                %.0f / %.0f / %.0f\n", r+1,
				res[0].rate, res[1].rate, res[1].rate/res[0].rate, res[2].rate, res[2].rate/res[0].rate,
				res[0].cpu, res[1].cpu, res[2].cpu, res[0].allocs, res[1].allocs, res[2].allocs)
		}
		env.took = time.Since(began)
		env.loadAfter = loadAverage()

		rows := make([]overheadRow, len(arms))
		for i, a := range arms {
			rows[i] = overheadRow{name: a.name, rate: stats(a.rates), ratio: stats(a.ratios), cpu: stats(a.cpu),
				cpuRel: stats(a.cpuRel), allocs: stats(a.allocs)}
			if i > 0 {
				b.ReportMetric(rows[i].ratio.median, "ratio-"+strings.ReplaceAll(a.name, " ", "-"))
				b.ReportMetric(rows[i].cpu.median, "cpu-µs/write-"+strings.ReplaceAll(a.name, " ", "-"))
			}
		}
		b.ReportMetric(rows[0].cpu.median, "cpu-µs/write-plain")
		md := overheadMarkdown(env, rounds, ops, workers, rows)
		fmt.Print("\n" + md)
		if out != "" {
			if err := replaceSection(out, otelBegin, otelEnd, md); err != nil {
				b.Fatal(err)
			}
			fmt.Printf("wrote the summary into %s\n", out)
		}
	}
}

// summary is a sample's median, interquartile range, and bootstrap 90% interval of
// the median.
type summary struct {
	median, q1, q3, lo, hi, min, max float64
}

// stats summarises v (one value per round). The bootstrap resamples the rounds with
// replacement 10,000 times, from a fixed seed (the same data give the same interval).
func stats(v []float64) summary {
	s := slices.Sorted(slices.Values(v))
	out := summary{median: medianSorted(s), q1: quantile(s, 0.25), q3: quantile(s, 0.75), min: s[0], max: s[len(s)-1]}
	const resamples = 10000
	rng := rand.New(rand.NewPCG(1, 2))
	medians := make([]float64, resamples)
	sample := make([]float64, len(v))
	for i := range medians {
		for j := range sample {
			sample[j] = v[rng.IntN(len(v))]
		}
		slices.Sort(sample)
		medians[i] = medianSorted(sample)
	}
	slices.Sort(medians)
	out.lo, out.hi = quantile(medians, 0.05), quantile(medians, 0.95)
	return out
}

func medianSorted(s []float64) float64 { return (s[(len(s)-1)/2] + s[len(s)/2]) / 2 }

// quantile of sorted s, linear between order statistics.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// overheadRow is one arm's summary.
type overheadRow struct {
	name                             string
	rate, ratio, cpu, cpuRel, allocs summary
}

// benchMachine is what the summary says about where and how it ran.
type benchMachine struct {
	date                        time.Time
	cpu, os, mem                string
	cores, procs                int
	goVersion, cassandra, hosts string
	loadBefore, loadAfter       string
	command                     string
	took                        time.Duration
}

func describeBenchMachine() benchMachine {
	m := benchMachine{date: time.Now().UTC(), cores: runtime.NumCPU(), procs: runtime.GOMAXPROCS(0), goVersion: runtime.Version(),
		cpu: "unknown CPU", os: runtime.GOOS + "/" + runtime.GOARCH, cassandra: node.Version(), hosts: strings.Join(node.Hosts(), ","),
		loadBefore: loadAverage(), command: benchCommand()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if r := regexp.MustCompile(`(?m)^model name\s*:\s*(.+)$`).FindSubmatch(b); r != nil {
			m.cpu = strings.TrimSpace(string(r[1]))
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if r := regexp.MustCompile(`MemTotal:\s*(\d+) kB`).FindSubmatch(b); r != nil {
			kb, _ := strconv.ParseInt(string(r[1]), 10, 64)
			m.mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if r := regexp.MustCompile(`(?m)^PRETTY_NAME="?([^"\n]+)"?$`).FindSubmatch(b); r != nil {
			m.os = string(r[1])
		}
	}
	return m
}

// loadAverage is the 1, 5 and 15 minute load averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// benchCommand is the go test command line this run was started with, as far as the
// test binary's flags and the environment tell, to be run from the repository root.
func benchCommand() string {
	var env []string
	for _, k := range []string{"OTEL_OVERHEAD_ROUNDS", "OTEL_OVERHEAD_OPS", "OTEL_OVERHEAD_OUT", "CQLSAFE_CASSANDRA_HOSTS"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+shellQuote(v))
		}
	}
	args := []string{"go", "test"}
	for _, a := range os.Args[1:] {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		switch name {
		case "run", "bench", "benchtime", "count", "cpu", "timeout", "cpuprofile", "memprofile", "benchmem":
		default:
			continue // the go command's own (testlogfile, paniconexit0, gocoverdir, …)
		}
		if name == "timeout" && value == "10m0s" {
			continue // the default
		}
		if !hasValue {
			args = append(args, "-"+name)
			continue
		}
		args = append(args, "-"+name, shellQuote(value))
	}
	args = append(args, "./otel")
	return strings.Join(append(env, args...), " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const (
	otelBegin = "<!-- bench:otel:begin (generated by go test -bench OtelOverhead ./otel; do not edit by hand) -->"
	otelEnd   = "<!-- bench:otel:end -->"
)

// overheadMarkdown is the summary, markers included.
func overheadMarkdown(m benchMachine, rounds, ops, workers int, rows []overheadRow) string {
	var b strings.Builder
	fmt.Fprintln(&b, otelBegin)
	fmt.Fprintf(&b, "## OpenTelemetry overhead\n\n")
	fmt.Fprintf(&b, "**Generated** %s by `%s` (from the repository root).\n\n", m.date.Format("2006-01-02 15:04 MST"), m.command)
	fmt.Fprintf(&b, "**Machine**: %d cores (%s), GOMAXPROCS %d, %s, %s; %s; Apache Cassandra %s at %s, on the same machine; "+
		"load average %s before, %s after (%s of rounds).\n\n",
		m.cores, m.cpu, m.procs, m.mem, m.os, m.goVersion, m.cassandra, m.hosts, m.loadBefore, m.loadAfter, m.took.Round(time.Second))
	fmt.Fprintf(&b, "The same idempotent INSERTs through `retry.Policy.Exec`, %d goroutines, on three sessions to the node: "+
		"plain, and instrumented (observers and a traced Policy; metrics to a manual reader; spans batched to a discarding "+
		"exporter) sampling every span or 1 in 10. %d rounds of %d writes per arm, the arms back to back in rotated order; "+
		"ratio = the arm's throughput ÷ plain's in the same round. Median over rounds, interquartile range, and a bootstrap "+
		"90%% interval of the median (10,000 resamples of the rounds). Client CPU is this process's, per write "+
		"(user + system, blind to other load); its ratio is the arm's ÷ plain's per round.\n\n", workers, rounds, ops)
	fmt.Fprintln(&b, "| arm | writes/s (median) | throughput ÷ plain: median | interquartile | 90% interval of the median | overhead | client CPU µs/write (median) | CPU ÷ plain: median (90% interval) | allocs/write |")
	fmt.Fprintln(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, r := range rows {
		if i == 0 {
			fmt.Fprintf(&b, "| %s | %.0f | 1 | | | | %.1f | 1 | %.0f |\n", r.name, r.rate.median, r.cpu.median, r.allocs.median)
			continue
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.3f | %.3f–%.3f | %.3f–%.3f | %+.1f%% | %.1f | %.3f (%.3f–%.3f) | %.0f |\n",
			r.name, r.rate.median, r.ratio.median, r.ratio.q1, r.ratio.q3, r.ratio.lo, r.ratio.hi, (1-r.ratio.median)*100,
			r.cpu.median, r.cpuRel.median, r.cpuRel.lo, r.cpuRel.hi, r.allocs.median)
	}
	fmt.Fprintf(&b, "\nOverhead = 1 − the median ratio: what instrumenting costs in throughput; the target is ≤ 3%%. "+
		"An interval that contains 1 says the difference was not told apart from the noise.\n")
	fmt.Fprintln(&b, otelEnd)
	return b.String()
}

// replaceSection replaces what lies between begin and end (markers included) in the
// file at path with md, or appends md when the markers are not there (or the file
// does not exist). The file is replaced whole, through a temporary file beside it.
func replaceSection(path, begin, end, md string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	text := string(old)
	beginKey := begin[:strings.Index(begin, " (")] // the marker's text may change; its name does not
	var next string
	if i := strings.Index(text, beginKey); i >= 0 {
		j := strings.Index(text[i:], end)
		if j < 0 {
			return fmt.Errorf("%s: %q without %q", path, beginKey, end)
		}
		next = text[:i] + md + strings.TrimPrefix(text[i+j+len(end):], "\n")
	} else {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if text != "" {
			text += "\n"
		}
		next = text + md
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(next), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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

// TestOtelOverheadSummary: the summary's section replaces its previous version and
// nothing else in the file, or is appended when the file has none; the statistics are
// the median, quartiles and an interval around the median.
func TestOtelOverheadSummary(t *testing.T) {
	path := t.TempDir() + "/BENCHMARKS.md"
	md := func(n int) string { return otelBegin + "\nrun " + strconv.Itoa(n) + "\n" + otelEnd + "\n" }
	if err := replaceSection(path, otelBegin, otelEnd, md(1)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("# B\n\nbefore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2} {
		if err := replaceSection(path, otelBegin, otelEnd, md(n)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	if want := "# B\n\nbefore\n\n" + md(2); string(got) != want {
		t.Errorf("appended then replaced:\n%s\nwant\n%s", got, want)
	}
	old := strings.Replace(md(3), "do not edit by hand", "older wording", 1)
	if err := os.WriteFile(path, []byte("a\n"+old+"b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replaceSection(path, otelBegin, otelEnd, md(4)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "a\n"+md(4)+"b\n" {
		t.Errorf("replaced in the middle:\n%s", got)
	}

	s := stats([]float64{5, 1, 4, 2, 3})
	if s.median != 3 || s.q1 != 2 || s.q3 != 4 || s.min != 1 || s.max != 5 || s.lo < 1 || s.lo > 3 || s.hi < 3 || s.hi > 5 {
		t.Errorf("stats %+v", s)
	}
	if one := stats([]float64{0.97}); one.median != 0.97 || one.lo != 0.97 || one.hi != 0.97 {
		t.Errorf("one round: %+v", one)
	}
}
