package oracle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Defaults of the CI run: a fixed seed and enough statements to cover every kind.
const (
	defaultSeed    = 1
	defaultCases   = 6000
	defaultV2Cases = 2000
	defaultWorkers = 24
)

func envUint(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// stats counts outcomes per statement kind.
type stats struct {
	cases, rejected, errors, equal, repeatable, equalRepeatable, unsound, known int
	interleaveOnly                                                              int // differ only around the other writer
	emptyOnly                                                                   int // differ only on an empty partition
	clockOnly                                                                   int // differ only when server functions return other values
}

type failure struct {
	idx         int
	report, sig string
}

// TestOracleStatements generates statements over every column type, asks the library
// whether each may be repeated, and has Cassandra judge: executed once, twice, three
// times and around another writer's write, a repeatable statement must leave the same
// partition. CQLSAFE_ORACLE_SEED, CQLSAFE_ORACLE_CASES and CQLSAFE_ORACLE_WORKERS
// change the run; CQLSAFE_ORACLE_CASE=i runs and prints case i alone.
func TestOracleStatements(t *testing.T) {
	oracleStatements(t, "v1", int(envUint(t, "CQLSAFE_ORACLE_CASES", defaultCases)))
}

// TestOracleStatementsV2 is TestOracleStatements on the Apache Cassandra Go driver v2:
// the judgement of github.com/cqlsafe/cqlsafe/gocqlv2/retry and the executions sent by
// the v2 driver, with the same statements (same seed) and the same reads of what
// Cassandra holds. CQLSAFE_ORACLE_V2_CASES sets its size.
func TestOracleStatementsV2(t *testing.T) {
	oracleStatements(t, "v2", int(envUint(t, "CQLSAFE_ORACLE_V2_CASES", defaultV2Cases)))
}

func oracleStatements(t *testing.T, drv string, n int) {
	seed := envUint(t, "CQLSAFE_ORACLE_SEED", defaultSeed)
	workers := int(envUint(t, "CQLSAFE_ORACLE_WORKERS", defaultWorkers))
	only := -1
	if s := os.Getenv("CQLSAFE_ORACLE_CASE"); s != "" {
		only = int(envUint(t, "CQLSAFE_ORACLE_CASE", 0))
	}
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	tables := generateSchemas(rand.New(rand.NewPCG(seed, 1<<62)))
	created := map[string]bool{}
	for _, tb := range tables {
		for _, q := range tb.ddl(ks) {
			if created[q] {
				continue
			}
			created[q] = true
			if err := s.Query(q).WithContext(ctx).Exec(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if err := s.AwaitSchemaAgreement(ctx); err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s, ks: ks, d: newV1(s)}
	if drv == "v2" {
		r.d = newV2(t, ks)
	}
	base := time.Now().UnixMicro()
	start := time.Now()

	var mu sync.Mutex
	perKind := map[string]*stats{}
	total := &stats{}
	var failures []failure
	notRepeatableWhy := map[string]int{}
	whySamples := map[string][]string{}
	var errSamples, rejectSamples, knownSamples []string
	// CQLSAFE_ORACLE_LOST=file: every statement equal once and repeated yet judged not
	// repeatable, one line each (case, kind, reasons, text), to pick what to sharpen.
	var lost *os.File
	if path := os.Getenv("CQLSAFE_ORACLE_LOST"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lost = f
	}

	one := func(idx int) {
		c := genCase(seed, idx, tables, base)
		text, values := c.st.text()
		text, values = bindKey(text, values, partitionKey(c.tb, c.idx, 0, 0))
		rep, reasons := r.decide(text, values, c.ts)
		v := r.judge(ctx, c, c.st, true, 0)
		var report, sig string
		if rep && v.diff != "" && v.known == "" {
			report, sig = r.minimize(ctx, c, seed, v)
		}
		if rep && v.known != "" {
			mu.Lock()
			knownSamples = append(knownSamples, fmt.Sprintf("case %d: %s (%s)", idx, v.known, v.diff))
			mu.Unlock()
		}
		if only >= 0 {
			t.Logf("case %d [%s] repeatable=%v %v\n%s\nverdict: rejected=%v err=%v diff=%q", idx, c.st.kind, rep, reasons, r.repro(c, c.st, true, seed), v.rejected, v.err, v.diff)
		}
		mu.Lock()
		defer mu.Unlock()
		k := perKind[c.st.kind]
		if k == nil {
			k = &stats{}
			perKind[c.st.kind] = k
		}
		for _, st := range []*stats{k, total} {
			st.cases++
			switch {
			case v.rejected != nil:
				st.rejected++
			case v.err != nil:
				st.errors++
			default:
				if rep {
					st.repeatable++
				}
				if v.diff == "" {
					st.equal++
					if rep {
						st.equalRepeatable++
					}
				} else {
					if v.interleave || v.witness {
						st.interleaveOnly++
					}
					if v.empty {
						st.emptyOnly++
					}
					if v.clock {
						st.clockOnly++
					}
					if rep && v.known == "" {
						st.unsound++
					}
					if rep && v.known != "" {
						st.known++
					}
				}
			}
		}
		switch {
		case v.rejected != nil:
			if len(rejectSamples) < 10 {
				rejectSamples = append(rejectSamples, fmt.Sprintf("case %d: %s: %v", idx, text, v.rejected))
			}
		case v.err != nil:
			if len(errSamples) < 10 {
				errSamples = append(errSamples, fmt.Sprintf("case %d: %s: %v", idx, text, v.err))
			}
		case v.diff == "" && !rep && len(reasons) > 0:
			why := reasons[0]
			if i := strings.IndexAny(why, "\"("); i > 0 {
				why = why[:i]
			}
			notRepeatableWhy[why]++
			if lost != nil {
				fmt.Fprintf(lost, "%d\t%s\t%q\t%s%s\n", idx, c.st.kind, reasons, text, valuesNote(values))
			}
			if len(whySamples[why]) < 2 {
				whySamples[why] = append(whySamples[why], fmt.Sprintf("case %d: %s%s", idx, text, valuesNote(values)))
			}
		}
		if report != "" {
			failures = append(failures, failure{idx: idx, report: report, sig: sig})
		}
	}

	if only >= 0 {
		one(only)
	} else {
		next := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for idx := range next {
					one(idx)
				}
			}()
		}
		for i := 0; i < n; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	elapsed := time.Since(start)

	var kinds []string
	for k := range perKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "driver %s, seed %d, %d cases, %d workers, %v (%.0f cases/s)\n", drv, seed, total.cases, workers, elapsed.Round(time.Second), float64(total.cases)/elapsed.Seconds())
	fmt.Fprintf(&b, "%-26s %6s %8s %6s %6s %10s %6s %6s %10s %8s %6s %9s\n", "kind", "cases", "rejected", "errors", "equal", "interleave", "empty", "clock", "repeatable", "unsound", "known", "precision")
	for _, k := range append(kinds, "TOTAL") {
		st := perKind[k]
		if k == "TOTAL" {
			st = total
		}
		prec := "-"
		if st.equal > 0 {
			prec = fmt.Sprintf("%.1f%%", 100*float64(st.equalRepeatable)/float64(st.equal))
		}
		fmt.Fprintf(&b, "%-26s %6d %8d %6d %6d %10d %6d %6d %10d %8d %6d %9s\n", k, st.cases, st.rejected, st.errors, st.equal, st.interleaveOnly, st.emptyOnly, st.clockOnly, st.repeatable, st.unsound, st.known, prec)
	}
	if len(notRepeatableWhy) > 0 {
		b.WriteString("equal once and repeated, yet judged not repeatable (lost precision), by first reason:\n")
		var whys []string
		for w := range notRepeatableWhy {
			whys = append(whys, w)
		}
		sort.Slice(whys, func(i, j int) bool { return notRepeatableWhy[whys[i]] > notRepeatableWhy[whys[j]] })
		for _, w := range whys {
			fmt.Fprintf(&b, "  %5d  %s\n", notRepeatableWhy[w], w)
			for _, x := range whySamples[w] {
				fmt.Fprintf(&b, "           e.g. %s\n", shorten(x, 400))
			}
		}
	}
	for _, e := range rejectSamples {
		b.WriteString("rejected sample: " + e + "\n")
	}
	for _, e := range errSamples {
		b.WriteString("error sample: " + e + "\n")
	}
	var eq, eqRep int
	for k, st := range perKind {
		if !strings.HasPrefix(k, "lwt_") {
			eq, eqRep = eq+st.equal, eqRep+st.equalRepeatable
		}
	}
	if eq > 0 {
		fmt.Fprintf(&b, "precision without lightweight transactions (never retried by design): %.1f%% (%d of %d)\n", 100*float64(eqRep)/float64(eq), eqRep, eq)
	}
	t.Log("\n" + b.String())
	if total.errors*200 > total.cases {
		t.Errorf("%d of %d cases failed with errors other than Cassandra rejecting the statement", total.errors, total.cases)
	}
	if total.rejected*5 > total.cases {
		t.Errorf("%d of %d statements rejected by Cassandra: the generator should produce mostly valid statements", total.rejected, total.cases)
	}
	sort.Slice(failures, func(i, j int) bool { return failures[i].idx < failures[j].idx })
	bySig := map[string][]int{}
	var sigs []string
	for _, f := range failures {
		if bySig[f.sig] == nil {
			sigs = append(sigs, f.sig)
		}
		bySig[f.sig] = append(bySig[f.sig], f.idx)
	}
	sort.Slice(sigs, func(i, j int) bool { return len(bySig[sigs[i]]) > len(bySig[sigs[j]]) })
	if len(sigs) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%d soundness failures of %d kinds (comparison | column | operation | form: cases):\n", len(failures), len(sigs))
		for _, sg := range sigs {
			idx := bySig[sg]
			if len(idx) > 8 {
				idx = idx[:8]
			}
			fmt.Fprintf(&b, "  %4d  %s: cases %v\n", len(bySig[sg]), sg, idx)
		}
		t.Error(b.String())
	}
	for _, f := range failures {
		t.Errorf("soundness failure:\n%s", f.report)
	}
	for _, k := range knownSamples {
		t.Logf("known limit, not counted as a soundness failure: %s", k)
	}
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "…"
	}
	return s
}
