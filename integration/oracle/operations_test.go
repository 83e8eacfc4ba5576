package oracle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Defaults of the CI run of TestOracleOperations.
const (
	defaultOps       = 1000
	defaultOpWorkers = 10
	opRedos          = 3 // a case whose fault hid a server error, or whose A timed out, is redone at most this often
)

// opVerdict is the outcome of judging one operation case.
type opVerdict struct {
	errA, errB error
	class      string // how the case ended: "equal", a documented refusal, "failed in both: …"
	diff       string // how B (or C) differs from A; "" when equal
	fail       string // a failure: soundness (diff) or an undocumented error
	known      string // a known limit explains the difference
	infra      error  // setup or read-back failed: says nothing
	ttlTol     bool   // TTLs differ by more than a second, within the tolerance
	dropped    int64
	redos      int
	note       string
}

// judgeOnce runs the case in A (no fault) and B (a response dropped, retried by the
// library), and in C when B refused and the refusal has its own reference, then
// compares the places.
func (w *opWorker) judgeOnce(ctx context.Context, c *opCase, attempt int) (v opVerdict, inconclusive bool) {
	sp := c.spec
	if sp.lock != nil {
		sp.lock.Lock()
		defer sp.lock.Unlock()
	}
	mk := func(name string, slot int) *place {
		pl := &place{name: name, slot: slot, key: partitionKey(c.oc.tb, c.idx, attempt, slot), s: w.ps,
			ts: c.oc.ts, attempt: attempt, dir: w.dir, p: placePolicy(w.ps, c.oc.ts)}
		if w.ps2 != nil {
			pl.s2, pl.p2 = w.ps2, placePolicyV2(w.ps2, c.oc.ts)
		}
		return pl
	}
	A, B, C := mk("A", 0), mk("B", 1), mk("C", 2)
	for _, pl := range []*place{A, B, C}[:sp.setupPlaces] {
		if len(c.oc.setup) > 0 {
			if err := w.r.setup(ctx, c.oc, pl.key); err != nil {
				return opVerdict{infra: fmt.Errorf("setup: %w", err)}, false
			}
		}
	}
	start := time.Now()
	// A: once, no fault. It also prepares every statement B sends, so that a dropped
	// response never hides an UNPREPARED answer.
	if sp.pre != nil {
		if err := sp.pre(ctx, w, A); err != nil {
			if slowWithoutFault(err) {
				// A had no fault: a timeout while preparing it is the machine's slowness (seen
				// on a loaded 2-core CI machine: a read timing out before tombstone.Undelete),
				// as after the operation below. The case is redone.
				return opVerdict{errA: err}, true
			}
			// The operation cannot be prepared (tombstone.Delete before Undelete refused the
			// table): judged as failing in both places when B fails alike.
			errB := sp.pre(ctx, w, B)
			v := opVerdict{errA: err, errB: errB, class: "failed in both: " + errGroup(err)}
			if errB == nil {
				v.fail = fmt.Sprintf("before the operation, A failed (%v) and B did not", err)
			}
			return v, false
		}
	}
	v.errA = sp.run(ctx, w, A)
	var wErrA, wErrB error
	if sp.w != nil {
		wErrA = w.r.exec(ctx, *sp.w, A.key, c.oc.ts+sp.wOff)
	}
	if sp.after != nil {
		if err := sp.after(ctx, w, A); err != nil {
			v.fail = "A after the operation: " + err.Error()
		}
	}
	// B: the nth write's response dropped (the write applied, the client never hears),
	// the library retries as it does; the other writer lands between the two.
	if sp.pre != nil {
		if err := sp.pre(ctx, w, B); err != nil {
			return opVerdict{infra: fmt.Errorf("B before the operation: %w", err)}, false
		}
	}
	st := w.px.Stats()
	h0, d0 := st.Hidden.Load(), st.Dropped.Load()
	wDone := make(chan error, 1)
	var wStarted atomic.Bool
	startW := func(delay time.Duration) {
		if sp.w != nil && wStarted.CompareAndSwap(false, true) {
			go func() {
				time.Sleep(delay)
				wDone <- w.r.exec(ctx, *sp.w, B.key, c.oc.ts+sp.wOff)
			}()
		}
	}
	var match func(faultproxy.Request) bool
	if sp.matchFor != nil {
		match = sp.matchFor(B)
	}
	var seen atomic.Int64
	if sp.all {
		w.px.SetRule(dropAll(match))
	} else {
		// W after the dropped write has reached Cassandra, well before the client
		// timeout makes the library retry.
		w.px.SetRule(dropNth(sp.nth, &seen, match, func() { startW(opClientTimeout / 5) }))
	}
	v.errB = sp.run(ctx, w, B)
	w.px.SetRule(nil)
	if sp.w != nil {
		startW(0)
		wErrB = <-wDone
	}
	if sp.after != nil {
		if err := sp.after(ctx, w, B); err != nil && v.fail == "" {
			v.fail = "B after the operation: " + err.Error()
		}
	}
	v.note = B.note
	v.dropped = st.Dropped.Load() - d0
	hidden := st.Hidden.Load() > h0
	if hidden && v.errA == nil {
		return v, true // the dropped response was an error: nothing to conclude
	}
	if slowWithoutFault(v.errA) {
		// A had no fault: a timeout there is the machine's slowness (a node just started,
		// a first Paxos round), not the library's. A says nothing; the case is redone.
		return v, true
	}
	if (wErrA == nil) != (wErrB == nil) && v.fail == "" {
		v.fail = fmt.Sprintf("the other writer failed in one place only: A %v, B %v", wErrA, wErrB)
	}

	refused := false
	label := ""
	if v.errB != nil {
		label = sp.accept(v.errB)
	}
	switch {
	case label != "":
		// A documented refusal: B holds what one execution holds (for retry.Do: the steps
		// up to the refused one, which C runs; for a backfill: after the documented re-run).
		v.class, refused = label, true
	case v.errA != nil:
		// B's error says nothing when the fault swallowed the server's error answer.
		if !hidden && (v.errB == nil || errors.Is(v.errA, retry.ErrOutcomeUnknown) != errors.Is(v.errB, retry.ErrOutcomeUnknown)) {
			if v.fail == "" {
				v.fail = fmt.Sprintf("A failed without a fault (%v), B: %v", v.errA, v.errB)
			}
		}
		v.class = "failed in both: " + errGroup(v.errA)
	case v.errB == nil:
		v.class = "equal"
		if v.dropped == 0 {
			v.class = "equal, no write to drop"
		}
	default:
		if v.fail == "" {
			v.fail = fmt.Sprintf("B failed after %d dropped response(s): %v", v.dropped, v.errB)
		}
	}

	ref := A
	if refused && sp.recover != nil {
		if err := sp.recover(ctx, w, B); err != nil && v.fail == "" {
			v.fail = "B, the documented recovery after the refusal: " + err.Error()
		}
	}
	if refused && sp.ref != nil {
		C.refStep = B.step
		if sp.pre != nil {
			if err := sp.pre(ctx, w, C); err != nil {
				return opVerdict{infra: fmt.Errorf("C before the operation: %w", err)}, false
			}
		}
		if err := sp.ref(ctx, w, C); err != nil && v.errA == nil {
			return opVerdict{infra: fmt.Errorf("C, the reference run: %w", err)}, false
		}
		if sp.w != nil {
			if err := w.r.exec(ctx, *sp.w, C.key, c.oc.ts+sp.wOff); (err == nil) != (wErrB == nil) {
				return opVerdict{infra: fmt.Errorf("C, the other writer: %v", err)}, false
			}
		}
		ref = C
	}
	a, err := sp.read(ctx, w, ref)
	if err != nil {
		return opVerdict{infra: fmt.Errorf("read %s: %w", ref.name, err)}, false
	}
	b, err := sp.read(ctx, w, B)
	if err != nil {
		return opVerdict{infra: fmt.Errorf("read B: %w", err)}, false
	}
	tol := int64(time.Since(start).Seconds()) + 2
	v.diff = diff(a, b, tol)
	if v.diff != "" {
		v.diff = ref.name + " vs B: " + v.diff
		switch {
		case sp.w != nil && sp.expiring && (sp.wOff == sp.tieOff):
			v.known = "(1) equal-timestamp tie with another writer on expiring cells"
		case v.fail == "":
			v.fail = "state differs: " + v.diff
		}
	} else if diff(a, b, 1) != "" {
		v.ttlTol = true
	}
	return v, false
}

// errGroup names an error for grouping: its message up to the first detail.
func errGroup(err error) string {
	s := err.Error()
	for _, sep := range []string{": ", " ("} {
		if i := strings.Index(s, sep); i > 0 && i < 80 {
			rest := s[i+len(sep):]
			if j := strings.Index(rest, ": "); j > 0 && j < 60 {
				return s[:i+len(sep)+j]
			}
			return s[:i]
		}
	}
	return shorten(s, 100)
}

func (w *opWorker) judgeOp(ctx context.Context, c *opCase) opVerdict {
	var v opVerdict
	for attempt := 0; attempt <= opRedos; attempt++ {
		var inconclusive bool
		v, inconclusive = w.judgeOnce(ctx, c, attempt)
		if !inconclusive {
			v.redos = attempt
			return v
		}
	}
	v.infra = fmt.Errorf("every attempt was inconclusive: a server error hidden behind the dropped response, or a timeout in A without a fault (last: %v)", v.errA)
	v.redos = opRedos + 1
	return v
}

// slowWithoutFault reports whether err is a timeout: the client's (no response within
// opClientTimeout) or the server's (a write or read timeout, a Paxos round not done in
// time). In A, which runs without a fault, such an error says nothing about the library.
func slowWithoutFault(err error) bool {
	if err == nil {
		return false
	}
	var wt *gocql.RequestErrWriteTimeout
	var rt *gocql.RequestErrReadTimeout
	if errors.Is(err, gocql.ErrTimeoutNoResponse) || errors.As(err, &wt) || errors.As(err, &rt) {
		return true
	}
	// Some operations report the driver's error by its text only.
	msg := err.Error()
	return strings.Contains(msg, gocql.ErrTimeoutNoResponse.Error()) || strings.Contains(msg, "Operation timed out")
}

// opReport describes a failed case so that it can be reproduced.
func opReport(c *opCase, v opVerdict, ks string) string {
	var b strings.Builder
	sp := c.spec
	fmt.Fprintf(&b, "case %d, seed %d: %s\n", c.idx, c.seed, sp.op)
	for _, d := range sp.detail {
		fmt.Fprintf(&b, "  %s\n", shorten(d, 1500))
	}
	if sp.w != nil {
		fmt.Fprintf(&b, "  other writer at T%+d (A: operation, W; B: dropped attempt, W, retry): %s\n", sp.wOff, stmtNote(*sp.w))
	}
	if c.oc.tb != nil && sp.op != opAppend {
		for _, q := range c.oc.tb.ddl("ks") {
			fmt.Fprintf(&b, "  %s;\n", q)
		}
		for _, p := range c.oc.setup {
			q, vs := p.render()
			fmt.Fprintf(&b, "  setup at T-50: %s%s\n", shorten(q, 600), valuesNote(vs))
		}
	}
	fmt.Fprintf(&b, "  A: %v\n  B: %v (%d response(s) dropped) %s\n", v.errA, v.errB, v.dropped, v.note)
	if v.fail != "" {
		fmt.Fprintf(&b, "  failure: %s\n", v.fail)
	}
	if v.diff != "" {
		fmt.Fprintf(&b, "  diff: %s\n", v.diff)
	}
	fmt.Fprintf(&b, "  reproduce: CQLSAFE_ORACLE_SEED=%d CQLSAFE_ORACLE_OP=%d go test -run TestOracleOperations ./integration/oracle", c.seed, c.idx)
	return b.String()
}

type opStats struct {
	cases, equal, refused, failedBoth, noDrop, redone, fails, known, infra, ttlTol int
}

// TestOracleOperations runs the library's own entry points over rows generated for the
// oracle's schemas, once in partition A and once in partition B with a response dropped
// by the fault proxy after Cassandra applied the write, retried as the library retries.
// A and B must end equal cell by cell, or B must have failed with the operation's
// documented error — and then hold what one execution holds. CQLSAFE_ORACLE_SEED,
// CQLSAFE_ORACLE_OPS and CQLSAFE_ORACLE_OP_WORKERS change the run;
// CQLSAFE_ORACLE_OP=i runs and prints case i alone.
func TestOracleOperations(t *testing.T) {
	oracleOperations(t, false, int(envUint(t, "CQLSAFE_ORACLE_OPS", defaultOps)))
}

// TestOracleOperationsV2 is TestOracleOperations with overwrite.Row and
// overwrite.Partition run through the Apache Cassandra Go driver v2 (gocqlv2/overwrite
// and gocqlv2/retry, through the same fault proxy), the same A/B comparison of what
// Cassandra holds. The other operations run on v2 in the suites (integration/v2suite) as
// their packages come to it. CQLSAFE_ORACLE_OPS_V2 sets the number of cases (default
// 150).
func TestOracleOperationsV2(t *testing.T) {
	oracleOperations(t, true, int(envUint(t, "CQLSAFE_ORACLE_OPS_V2", 150)))
}

func oracleOperations(t *testing.T, onV2 bool, n int) {
	seed := envUint(t, "CQLSAFE_ORACLE_SEED", defaultSeed)
	workers := int(envUint(t, "CQLSAFE_ORACLE_OP_WORKERS", defaultOpWorkers))
	only := -1
	if os.Getenv("CQLSAFE_ORACLE_OP") != "" {
		only = int(envUint(t, "CQLSAFE_ORACLE_OP", 0))
		workers = 1
	}
	ctx := context.Background()
	env := newOpsEnv(t, ctx, seed)
	if onV2 {
		env.useV2(t, ctx)
	}
	ws := make([]*opWorker, workers)
	for i := range ws {
		ws[i] = newOpWorker(t, env)
	}
	// Case timestamps lie in the past: a write stamped after the server's clock would
	// shadow an LWT's (the restore of tombstone.Undelete), as documented.
	base := time.Now().Add(-time.Hour).UnixMicro()
	start := time.Now()

	var mu sync.Mutex
	perOp := map[string]*opStats{}
	total := &opStats{}
	classes := map[string]map[string]int{}
	classSample := map[string]string{}
	var failures, knowns []string
	var infraSamples []string
	var judgeCase func(w *opWorker, c *opCase)
	one := func(w *opWorker, idx int) { judgeCase(w, genOpCase(seed, idx, env, base)) }
	judgeCase = func(w *opWorker, c *opCase) {
		idx := c.idx
		v := w.judgeOp(ctx, c)
		if only >= 0 {
			t.Logf("%s\nclass: %s, known: %q, infra: %v", opReport(c, v, env.ks), v.class, v.known, v.infra)
		}
		mu.Lock()
		defer mu.Unlock()
		op := c.spec.op
		st := perOp[op]
		if st == nil {
			st = &opStats{}
			perOp[op] = st
			classes[op] = map[string]int{}
		}
		for _, s := range []*opStats{st, total} {
			s.cases++
			if v.redos > 0 {
				s.redone++
			}
			switch {
			case v.infra != nil:
				s.infra++
			case v.fail != "":
				s.fails++
			case v.known != "":
				s.known++
			case v.errA != nil:
				s.failedBoth++
			case v.errB != nil:
				s.refused++
			default:
				s.equal++
				if v.dropped == 0 {
					s.noDrop++
				}
			}
			if v.ttlTol {
				s.ttlTol++
			}
		}
		switch {
		case v.infra != nil:
			if len(infraSamples) < 10 {
				infraSamples = append(infraSamples, fmt.Sprintf("case %d (%s): %v", idx, op, v.infra))
			}
		case v.fail != "":
			failures = append(failures, opReport(c, v, env.ks))
		case v.known != "":
			knowns = append(knowns, v.known+"\n"+opReport(c, v, env.ks))
		default:
			cl := v.class
			if v.note != "" {
				cl += " [" + v.note + "]"
			}
			classes[op][cl]++
			if v.errA != nil && classSample[op+cl] == "" {
				classSample[op+cl] = fmt.Sprintf("case %d: %v", idx, v.errA)
			}
		}
	}
	if only >= 0 {
		one(ws[0], only)
	} else {
		for _, c := range regressionCases(seed, env, base) {
			judgeCase(ws[0], c)
		}
		next := make(chan int)
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func(w *opWorker) {
				defer wg.Done()
				for idx := range next {
					one(w, idx)
				}
			}(w)
		}
		for i := 0; i < n; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	elapsed := time.Since(start)

	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %d operations, %d workers, %v (%.1f ops/s)\n", seed, total.cases, workers, elapsed.Round(time.Second), float64(total.cases)/elapsed.Seconds())
	fmt.Fprintf(&b, "%-22s %6s %6s %8s %7s %7s %6s %6s %6s %6s %7s\n", "operation", "cases", "equal", "refused", "both", "nodrop", "redone", "known", "infra", "FAIL", "ttl±")
	var ops []string
	for op := range perOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range append(ops, "TOTAL") {
		s := perOp[op]
		if op == "TOTAL" {
			s = total
		}
		fmt.Fprintf(&b, "%-22s %6d %6d %8d %7d %7d %6d %6d %6d %6d %7d\n", op, s.cases, s.equal, s.refused, s.failedBoth, s.noDrop, s.redone, s.known, s.infra, s.fails, s.ttlTol)
	}
	b.WriteString("outcomes (equal or documented), by operation:\n")
	for _, op := range ops {
		var cls []string
		for cl := range classes[op] {
			cls = append(cls, cl)
		}
		sort.Slice(cls, func(i, j int) bool { return classes[op][cls[i]] > classes[op][cls[j]] })
		for _, cl := range cls {
			fmt.Fprintf(&b, "  %-22s %5d  %s\n", op, classes[op][cl], shorten(cl, 160))
			if e := classSample[op+cl]; e != "" {
				fmt.Fprintf(&b, "  %-22s        e.g. %s\n", "", shorten(e, 300))
			}
		}
	}
	b.WriteString("ttl± counts cases whose TTLs differ by more than a second but within the elapsed-time tolerance: known limit (2), a TTL re-armed by the retry (or read later).\n")
	for _, e := range infraSamples {
		b.WriteString("infrastructure sample: " + e + "\n")
	}
	t.Log("\n" + b.String())
	for _, k := range knowns {
		t.Logf("known limit, not counted as a failure: %s", k)
	}
	if total.infra*100 > total.cases {
		t.Errorf("%d of %d cases failed in setup or read-back", total.infra, total.cases)
	}
	if len(failures) > 0 {
		t.Errorf("%d operation failures", len(failures))
	}
	for _, f := range failures {
		t.Errorf("operation failure:\n%s", f)
	}
}
