package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

func gocqlVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/gocql/gocql" {
				return "gocql " + d.Version
			}
		}
	}
	return "gocql (version unknown)"
}

// report is the generated section of BENCHMARKS.md.
func report(f flags, m machine, results []result, traces []traceSummary, read []readPoint, micro string) string {
	var b strings.Builder
	cmd := "go run ./integration/cmd/bench"
	if f.quick {
		cmd += " -quick"
	}
	cmd += fmt.Sprintf(" -rounds %d", f.rounds)
	if f.only != "" {
		cmd += fmt.Sprintf(" -only '%s'", f.only)
	}
	if f.kmRows != 100_000 && !f.quick {
		cmd += fmt.Sprintf(" -keymigrate-rows %d", f.kmRows)
	}
	if f.out != "" {
		if f.section != "" {
			cmd += " -section " + f.section
		}
		cmd += " -o " + f.out
	}
	fmt.Fprintf(&b, "**Generated** %s by `%s`.\n\n", m.date.Format("2006-01-02 15:04 MST"), cmd)
	fmt.Fprintf(&b, "**Machine**: %d cores (%s), %s, %s; Go %s; %s; Apache Cassandra %s; load average at start %s.\n\n",
		m.cores, m.cpu, m.mem, m.os, strings.TrimPrefix(m.goVersion, "go"), m.gocql, m.cassandra, m.load)
	if f.quick {
		b.WriteString("**This is a -quick smoke run: counts too small for the ratios to mean anything.**\n\n")
	}
	b.WriteString("Each pair ran in alternating rounds (A B, B A, …; fresh partitions each round; the keyspace flushed before each round of the write pairs). " +
		"ratio = A's throughput ÷ B's (B's time per op ÷ A's) per round; the table gives the median over rounds, the min–max and the interquartile range, " +
		"and the medians of the rounds where A ran first and where B did. Allocations are the client's, per op (runtime.MemStats), median over rounds.\n\n")
	b.WriteString("| pair | A | B | ops/side/round × rounds | A µs/op | B µs/op | ratio (median) | min–max | IQR | A first / B first | A allocs (B/op) | B allocs (B/op) | target |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		sp := spreadOf(r.ratios())
		af, bf := spreadOf(r.ratiosWhen(true)), spreadOf(r.ratiosWhen(false))
		aNs := r.medianOf(func(x round) float64 { return x.a.nsPerOp() })
		bNs := r.medianOf(func(x round) float64 { return x.b.nsPerOp() })
		aAl := r.medianOf(func(x round) float64 { return x.a.allocsPerOp() })
		bAl := r.medianOf(func(x round) float64 { return x.b.allocsPerOp() })
		aBy := r.medianOf(func(x round) float64 { return x.a.bytesPerOp() })
		bBy := r.medianOf(func(x round) float64 { return x.b.bytesPerOp() })
		var tg []string
		for _, t := range r.p.targets {
			mark := "✗"
			if t.ok(r) {
				mark = "✓"
			}
			tg = append(tg, t.what+" "+mark)
		}
		if r.p.note != "" {
			tg = append(tg, r.p.note)
		}
		n := r.p.n
		if n == 0 && len(r.rounds) > 0 {
			n = r.rounds[0].a.ops
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d × %d | %.1f | %.1f | **%.2f** | %.2f–%.2f | %.2f–%.2f | %.2f / %.2f | %.0f (%.0f) | %.0f (%.0f) | %s |\n",
			r.p.title, r.p.a.name, r.p.b.name, n, len(r.rounds), aNs/1e3, bNs/1e3, sp.median, sp.min, sp.max, sp.q1, sp.q3, af.median, bf.median,
			aAl, aBy, bAl, bBy, strings.Join(tg, "; "))
	}
	for _, r := range results {
		if r.p.key == "overwrite_vs_insert" {
			fmt.Fprintf(&b, "\nClient allocations per op, `overwrite.Row` ÷ raw INSERT: **%.2f×**.\n", r.allocRatio())
		}
	}
	var notes []string
	for _, r := range results {
		for i, rd := range r.rounds {
			if rd.a.note != "" || rd.b.note != "" {
				notes = append(notes, fmt.Sprintf("- %s round %d: %s %s", r.p.key, i+1, rd.a.note, rd.b.note))
			}
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nRead-back checks (every row read back with WRITETIME):\n\n" + strings.Join(notes, "\n") + "\n")
	}
	if len(traces) > 0 {
		b.WriteString("\nServer time (Cassandra tracing, coordinator `duration`, median of the traced executions):\n\n| side | traced | median µs | p90 µs |\n|---|---|---|---|\n")
		for _, t := range traces {
			fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f |\n", t.side, t.n, t.median, t.p90)
		}
	}
	if len(read) > 0 {
		b.WriteString("\nReads of a partition of N rows each written once with 20 of 40 columns NULL, flushed (tombstone cells from Cassandra's trace; latency of whole-partition reads):\n\n| rows | variant | tombstone cells per read | p50 ms | p99 ms |\n|---|---|---|---|---|\n")
		for _, p := range read {
			fmt.Fprintf(&b, "| %d | %s | %d | %.2f | %.2f |\n", p.rows, p.variant, p.tombstones, p.p50, p.p99)
		}
	}
	if micro != "" {
		b.WriteString("\n`clientid` micro-benchmarks (`go test -bench . -benchmem ./clientid/`, no Cassandra):\n\n```\n" + micro + "\n```\n")
	}
	return b.String()
}

// traceSummary is the server time of one side's traced executions.
type traceSummary struct {
	side        string
	n           int
	median, p90 float64
}

// idTracer collects trace ids.
type idTracer struct {
	mu  sync.Mutex
	ids [][]byte
}

func (t *idTracer) Trace(id []byte) {
	t.mu.Lock()
	t.ids = append(t.ids, append([]byte(nil), id...))
	t.mu.Unlock()
}

// traceOverwrite traces n executions of overwrite.Row and of the raw INSERT on a
// session with tracing on, and reads each coordinator's duration from system_traces.
func traceOverwrite(ctx context.Context, e *env, n int) ([]traceSummary, error) {
	tbl, err := overwrite.Describe(ctx, e.s, e.ks, "t40")
	if err != nil {
		return nil, err
	}
	given := wideCols()
	rawCQL := fmt.Sprintf(`INSERT INTO t40 (%s) VALUES (%s)`, strings.Join(given, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(given)), ", "))
	var out []traceSummary
	for _, sd := range []string{"overwrite.Row", "raw INSERT"} {
		tr := &idTracer{}
		cl := e.node.Cluster(e.ks)
		s, err := cl.CreateSession()
		if err != nil {
			return nil, err
		}
		s.SetTrace(tr)
		for i := 0; i < n; i++ {
			row := wideRow(-1_000_000 - i) // clear of the pairs' partitions and the read points' ids
			if sd == "overwrite.Row" {
				_, err = overwrite.Row(ctx, s, tbl, row, overwrite.WithRetryPolicy(retry.NewPolicy()))
			} else {
				vals := make([]any, len(given))
				for k, c := range given {
					vals[k] = row[c]
				}
				err = s.Query(rawCQL, vals...).WithContext(ctx).Exec()
			}
			if err != nil {
				s.Close()
				return nil, err
			}
		}
		s.Close()
		time.Sleep(2 * time.Second) // traces are written asynchronously
		var ds []float64
		for _, id := range tr.ids {
			var d int
			if err := e.s.Query(`SELECT duration FROM system_traces.sessions WHERE session_id = ?`, gocql.UUID(id)).Consistency(gocql.One).WithContext(ctx).Scan(&d); err == nil {
				ds = append(ds, float64(d))
			}
		}
		slices.Sort(ds)
		if len(ds) == 0 {
			return nil, fmt.Errorf("%s: no trace sessions found", sd)
		}
		out = append(out, traceSummary{side: sd, n: len(ds), median: quantile(ds, 0.5), p90: quantile(ds, 0.9)})
	}
	return out, nil
}

// readPoint is one point of the chart.
type readPoint struct {
	rows       int
	variant    string
	tombstones int
	p50, p99   float64
}

// readAfterOverwrites writes a partition of K rows with 20 of 40 columns NULL —
// naively (NULL bound) or with overwrite.Row —, flushes, and reads it whole: tombstone
// cells per read (trace) and read latency.
func readAfterOverwrites(ctx context.Context, e *env, logf func(string, ...any)) ([]readPoint, error) {
	tbl, err := overwrite.Describe(ctx, e.s, e.ks, "t40")
	if err != nil {
		return nil, fmt.Errorf("needs the overwrite pairs' table: %w", err)
	}
	sizes, reads := []int{10, 100, 1000, 4000}, 50
	if e.quick {
		sizes, reads = []int{10, 100}, 10
	}
	var out []readPoint
	for _, k := range sizes {
		for v, variant := range []string{"naive", "overwrite"} {
			id := -(k*10 + v + 1)
			_, err := parallel(ctx, k, 32, func(ctx context.Context, i int) error {
				row := map[string]any{"id": id, "seq": i}
				for c := 1; c <= 40; c++ {
					name := fmt.Sprintf("c%02d", c)
					if c <= 20 {
						row[name] = fmt.Sprintf("value %d", c)
					} else {
						row[name] = nil
					}
				}
				if variant == "overwrite" {
					_, err := overwrite.Row(ctx, e.s, tbl, row)
					return err
				}
				cols := []string{"id", "seq"}
				vals := []any{id, i}
				for c := 1; c <= 40; c++ {
					name := fmt.Sprintf("c%02d", c)
					cols = append(cols, name)
					vals = append(vals, row[name])
				}
				return e.s.Query(fmt.Sprintf(`INSERT INTO t40 (%s) VALUES (%s)`, strings.Join(cols, ", "),
					strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")), vals...).WithContext(ctx).Exec()
			})
			if err != nil {
				return nil, err
			}
			if err := e.node.Flush(ctx, e.ks, "t40"); err != nil {
				return nil, err
			}
			tr, err := harness.TraceRead(ctx, e.s, `SELECT * FROM t40 WHERE id = ?`, id)
			if err != nil {
				return nil, err
			}
			var lat []float64
			for r := 0; r < reads; r++ {
				start := time.Now()
				iter := e.s.Query(`SELECT * FROM t40 WHERE id = ?`, id).WithContext(ctx).PageSize(5000).Iter()
				for iter.Scanner().Next() {
				}
				if err := iter.Close(); err != nil {
					return nil, err
				}
				lat = append(lat, float64(time.Since(start).Microseconds())/1000)
			}
			slices.Sort(lat)
			p := readPoint{rows: k, variant: variant, tombstones: tr.TombstoneCells, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99)}
			logf("read_after_overwrites rows=%d %s: %d tombstones/read, p50 %.2f ms, p99 %.2f ms", k, variant, p.tombstones, p.p50, p.p99)
			out = append(out, p)
		}
	}
	return out, nil
}

// drawChart feeds the read points to benchchart (in its input format) and writes the
// SVG to chart, relative to dir.
func drawChart(dir, chart string, read []readPoint) error {
	var in bytes.Buffer
	for _, p := range read {
		fmt.Fprintf(&in, "BenchmarkReadAfterOverwrites/rows=%d/%s-1 1 1 ns/op %.3f p50-ms %.3f p99-ms %d tombstones/read\n", p.rows, p.variant, p.p50, p.p99, p.tombstones)
	}
	root, err := moduleRoot(context.Background())
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "run", "./integration/cmd/benchchart")
	cmd.Dir = root
	cmd.Stdin = &in
	var svg, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &svg, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("benchchart: %w: %s", err, errb.String())
	}
	path := chart
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, chart)
	}
	return os.WriteFile(path, svg.Bytes(), 0o644)
}
