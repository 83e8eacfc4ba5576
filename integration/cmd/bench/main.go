// Command bench runs every side-by-side benchmark of cqlsafe against its raw gocql
// baseline in alternating rounds (A B, B A, A B …; fresh partitions each round; the
// keyspace flushed before each round where the server's state matters), reports per
// pair the median throughput ratio with its spread and the client's allocations, and
// regenerates BENCHMARKS.md's generated section and docs/overwrite-chart.svg.
//
//	export CQLSAFE_CASSANDRA_HOSTS=127.0.0.1:9042 CQLSAFE_NODETOOL="$PWD/scripts/native-node.sh nodetool"
//	go run ./integration/cmd/bench -rounds 6 -o BENCHMARKS.md
//
// -quick runs small counts (a smoke run); -only selects pairs by a regular expression;
// -cpuprofile and -memprofile write pprof profiles of the client; -trace N traces N
// executions of each overwrite side on the server and reports where their time went.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

type flags struct {
	rounds     int
	quick      bool
	out        string
	chart      string
	section    string
	only       string
	cpuprofile string
	memprofile string
	trace      int
	kmRows     int
	micro      bool
}

func main() {
	var f flags
	flag.IntVar(&f.rounds, "rounds", 6, "rounds per pair (each side runs once per round; which runs first alternates)")
	flag.BoolVar(&f.quick, "quick", false, "small counts: a smoke run, not numbers to publish")
	flag.StringVar(&f.out, "o", "", "regenerate this BENCHMARKS.md's generated section (and the chart beside it); empty: print only")
	flag.StringVar(&f.section, "section", "", "with -o: regenerate the generated section of this name (<!-- bench:NAME:begin … --> … <!-- bench:NAME:end -->) instead of the main one")
	flag.StringVar(&f.chart, "chart", "docs/overwrite-chart.svg", "the chart, relative to -o's directory")
	flag.StringVar(&f.only, "only", "", "run only pairs whose key matches this regular expression (e.g. overwrite)")
	flag.StringVar(&f.cpuprofile, "cpuprofile", "", "write a client CPU profile of the pairs run here")
	flag.StringVar(&f.memprofile, "memprofile", "", "write a client allocation profile (pprof -sample_index=alloc_space)")
	flag.IntVar(&f.trace, "trace", 0, "trace this many executions of each overwrite side on the server and summarise where the time went")
	flag.IntVar(&f.kmRows, "keymigrate-rows", 0, "rows for the Backfill vs naive copy and 3 vs 1 workers pairs (default 100,000; -quick 5,000; the 1M figure: 1000000)")
	flag.BoolVar(&f.micro, "micro", true, "also run the clientid micro-benchmarks (go test -bench ./clientid)")
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	if f.rounds < 2 {
		return fmt.Errorf("-rounds %d: need at least 2 so both orders run", f.rounds)
	}
	only, err := regexp.Compile(f.only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	if f.kmRows == 0 {
		f.kmRows = 100_000
		if f.quick {
			f.kmRows = 5_000
		}
	}
	ctx := context.Background()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	}
	mach := describeMachine()
	node, err := harness.Start(ctx, harness.WithStartTimeout(5*time.Minute))
	if err != nil {
		return fmt.Errorf("cassandra: %w (set %s)", err, harness.EnvHosts)
	}
	defer node.Close(context.Background())
	s, err := node.Session(ctx, "")
	if err != nil {
		return err
	}
	defer s.Close()
	ks := fmt.Sprintf("bench_%d", time.Now().Unix())
	if err := node.CreateKeyspace(ctx, s, ks, 1); err != nil {
		return err
	}
	defer s.Query("DROP KEYSPACE IF EXISTS " + ks).Exec()
	s.Close()
	if s, err = node.Session(ctx, ks); err != nil {
		return err
	}
	defer s.Close()
	mach.cassandra = node.Version()
	e := &env{node: node, s: s, ks: ks, quick: f.quick, kmRows: f.kmRows, workers: 16}
	if _, err := node.Nodetool(ctx, "version"); err != nil {
		return fmt.Errorf("nodetool is needed to flush between rounds: %w", err)
	}

	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	var pairs []*pair
	add := func(ps ...*pair) {
		for _, p := range ps {
			if only.MatchString(p.key) {
				pairs = append(pairs, p)
			}
		}
	}
	if only.MatchString("overwrite_vs_insert") || only.MatchString("overwrite_vs_floor") {
		ps, err := overwritePairs(ctx, e)
		if err != nil {
			return fmt.Errorf("overwrite: %w", err)
		}
		add(ps...)
	}
	if only.MatchString("overwrite_vs_floor_v2") {
		if !only.MatchString("overwrite_vs_insert") && !only.MatchString("overwrite_vs_floor") {
			if _, err := overwritePairs(ctx, e); err != nil { // creates t40
				return fmt.Errorf("overwrite: %w", err)
			}
		}
		p, err := overwritePairV2(ctx, e, &closers)
		if err != nil {
			return fmt.Errorf("overwrite v2: %w", err)
		}
		add(p)
	}
	if only.MatchString("exec_vs_raw") {
		p, err := execPair(ctx, e)
		if err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		add(p)
	}
	if only.MatchString("exec_vs_raw_v2") {
		p, err := execPairV2(ctx, e, &closers)
		if err != nil {
			return fmt.Errorf("exec v2: %w", err)
		}
		add(p)
	}
	if only.MatchString("append_vs_insert") {
		p, err := appendPair(ctx, e)
		if err != nil {
			return fmt.Errorf("eventlog: %w", err)
		}
		add(p)
	}
	if only.MatchString("tombstone_vs_delete") {
		p, err := tombstonePair(ctx, e)
		if err != nil {
			return fmt.Errorf("tombstone: %w", err)
		}
		add(p)
	}
	if only.MatchString("dropped_vs_clean") || only.MatchString("dropped_hedged_vs_clean") || only.MatchString("hedging_cost") {
		ps, err := droppedPairs(ctx, e, &closers)
		if err != nil {
			return fmt.Errorf("dropped responses: %w", err)
		}
		add(ps...)
	}
	if only.MatchString("backfill_vs_naive") || only.MatchString("workers_3_vs_1") {
		ps, err := backfillPairs(ctx, e)
		if err != nil {
			return fmt.Errorf("keymigrate: %w", err)
		}
		add(ps...)
	}

	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); pf.Close() }()
	}
	var results []result
	for _, p := range pairs {
		logf("%s: %d rounds of %d ops per side", p.key, f.rounds, p.n)
		res := runPair(ctx, p, f.rounds, logf)
		if res.err != nil {
			return fmt.Errorf("%s: %w", p.key, res.err)
		}
		results = append(results, res)
	}
	if f.memprofile != "" {
		if err := writeAllocs(f.memprofile); err != nil {
			return err
		}
	}
	var traces []traceSummary
	if f.trace > 0 && only.MatchString("overwrite_vs_insert") {
		if traces, err = traceOverwrite(ctx, e, f.trace); err != nil {
			return fmt.Errorf("trace: %w", err)
		}
	}
	var read []readPoint
	if only.MatchString("read_after_overwrites") {
		if read, err = readAfterOverwrites(ctx, e, logf); err != nil {
			return fmt.Errorf("read after overwrites: %w", err)
		}
	}
	var micro string
	if f.micro && only.MatchString("clientid") {
		if micro, err = microBenchmarks(ctx, f.quick); err != nil {
			logf("clientid micro-benchmarks: %v (left out)", err)
		}
	}

	md := report(f, mach, results, traces, read, micro)
	fmt.Print(md)
	if f.out == "" {
		return nil
	}
	if err := regenerate(f.out, f.section, md); err != nil {
		return err
	}
	if len(read) > 0 {
		return drawChart(filepath.Dir(f.out), f.chart, read)
	}
	return nil
}

func writeAllocs(path string) error {
	pf, err := os.Create(path)
	if err != nil {
		return err
	}
	defer pf.Close()
	runtime.GC()
	return pprof.Lookup("allocs").WriteTo(pf, 0)
}

// machine is what the report's header says about where it ran.
type machine struct {
	cpu, mem, os, goVersion, gocql, cassandra, load string
	cores                                           int
	date                                            time.Time
}

func describeMachine() machine {
	m := machine{cores: runtime.NumCPU(), goVersion: runtime.Version(), date: time.Now().UTC(), cpu: "unknown CPU", os: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if r := regexp.MustCompile(`(?m)^model name\s*:\s*(.+)$`).FindSubmatch(b); r != nil {
			m.cpu = strings.TrimSpace(string(r[1]))
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if r := regexp.MustCompile(`MemTotal:\s*(\d+) kB`).FindSubmatch(b); r != nil {
			fmt.Sscan(string(r[1]), &kb)
			m.mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if r := regexp.MustCompile(`(?m)^PRETTY_NAME="?([^"\n]+)"?$`).FindSubmatch(b); r != nil {
			m.os = string(r[1])
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	m.gocql = gocqlVersion()
	return m
}

const (
	beginMarker = "<!-- bench:begin (generated by go run ./integration/cmd/bench; do not edit by hand) -->"
	endMarker   = "<!-- bench:end -->"
)

// regenerate replaces the generated section of path (between the markers; of the
// section called name, when not empty) with md; without markers the section is
// appended.
func regenerate(path, name, md string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	begin, end := beginMarker, endMarker
	if name != "" {
		begin = strings.Replace(beginMarker, "bench:begin", "bench:"+name+":begin", 1)
		end = strings.Replace(endMarker, "bench:end", "bench:"+name+":end", 1)
	}
	section := begin + "\n" + md + end
	s := string(old)
	i, j := strings.Index(s, begin[:strings.Index(begin, " (")]), strings.Index(s, end)
	switch {
	case i >= 0 && j > i:
		s = s[:i] + section + s[j+len(end):]
	default:
		s = strings.TrimRight(s, "\n") + "\n\n" + section + "\n"
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// microBenchmarks runs the clientid micro-benchmarks (no Cassandra involved) and
// returns their output lines.
func microBenchmarks(ctx context.Context, quick bool) (string, error) {
	benchtime, count := "2000000x", "6"
	if quick {
		benchtime, count = "20000x", "1"
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "XXX", "-bench", ".", "-benchmem", "-benchtime", benchtime, "-count", count, "./clientid/")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, out.String())
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(lines, "\n"), nil
}

// moduleRoot is the root module's directory (the one with go.work).
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	if err != nil {
		return "", err
	}
	w := strings.TrimSpace(string(out))
	if w == "" || w == "off" {
		return "", errors.New("no go.work: run from inside the repository")
	}
	return filepath.Dir(w), nil
}
