package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gocql/gocql"
)

// oracleCase is one generated statement with everything needed to judge it.
type oracleCase struct {
	idx   int
	tb    *table
	ts    int64  // pinned write timestamp of the statement
	setup []part // rows every partition holds before the statement (at ts-50)
	st    stmt
	w     stmt  // the interleaved writer's statement
	wOff  int64 // its timestamp relative to ts
	fn    bool  // the statement calls a server function
	// clockAlts: the statement's calls of clock- or randomness-dependent server
	// functions, each with another value it may return (stmtGen.clockAlt)
	clockAlts [][3]string
	setupTTL  bool
}

// expiring reports whether the case's cells can carry a TTL: the table's default, or a
// USING TTL in the statement, the other writer or the setup.
func (c *oracleCase) expiring() bool {
	if c.tb.defaultTTL > 0 || c.setupTTL {
		return true
	}
	for _, s := range []stmt{c.st, c.w} {
		text, _ := s.text()
		if strings.Contains(strings.ToUpper(text), " TTL ") {
			return true
		}
	}
	return false
}

// genCase generates case idx: its own random stream, so any case is reproducible from
// (seed, idx) alone, whatever the concurrency.
func genCase(seed uint64, idx int, tables []*table, base int64) *oracleCase {
	r := rand.New(rand.NewPCG(seed, uint64(idx)))
	c := &oracleCase{idx: idx, ts: base + int64(idx)*1000}
	// counters are a smaller share: one table of seven, at half weight
	for {
		c.tb = pick(r, tables)
		if !c.tb.counter || r.IntN(2) == 0 {
			break
		}
	}
	g := &stmtGen{r: r, v: valueGen{r: r}, tb: c.tb, ts: c.ts}
	c.setupTTL = !c.tb.counter && g.chance(20)
	c.setup, g.rows = genSetup(g, c.setupTTL)
	g.fnOK, g.lwtOK = true, true
	c.st = g.next(false)
	c.fn = g.usedFn
	c.clockAlts = g.clockAlts
	g.fnOK, g.lwtOK = false, false
	c.w = g.interleaved(c.st)
	c.wOff = pick(r, []int64{40, 40, -40, 0})
	return c
}

// genSetup writes 1–3 rows (one without clustering columns) with every column set,
// collections holding two or more elements so that element operations find something.
func genSetup(g *stmtGen, ttl bool) ([]part, []map[string]val) {
	tb := g.tb
	cks := tb.byRole(roleClustering)
	n := 1
	if len(cks) > 0 {
		n = 1 + g.r.IntN(3)
	}
	statics := map[string]val{}
	for _, c := range tb.byRole(roleStatic) {
		statics[c.name] = g.v.value(c.t, 2)
	}
	var parts []part
	var rows []map[string]val
	for i := 0; i < n; i++ {
		row := map[string]val{}
		for _, c := range cks {
			row[c.name] = g.v.value(c.t, 0)
		}
		for _, c := range tb.byRole(roleRegular) {
			row[c.name] = g.v.value(c.t, 2)
		}
		for k, v := range statics {
			row[k] = v
		}
		rows = append(rows, row)
		var names, marks, sets []string
		values := []any{}
		if tb.counter {
			for _, c := range tb.nonKey() {
				sets = append(sets, fmt.Sprintf("%s = %s + ?", c.name, c.name))
				values = append(values, row[c.name].gov)
			}
			var conds []string
			for _, c := range cks {
				conds = append(conds, c.name+" = ?")
				values = append(values, row[c.name].gov)
			}
			q := fmt.Sprintf("UPDATE %s SET %s WHERE k = ? AND slot = ? AND %s", tb.name, strings.Join(sets, ", "), strings.Join(conds, " AND "))
			vals := append(append([]any(nil), values[:len(sets)]...), refK, refSlot)
			vals = append(vals, values[len(sets):]...)
			parts = append(parts, part{build: func([]item) (string, []any) { return q, vals }})
			continue
		}
		names, marks = []string{"k", "slot"}, []string{"?", "?"}
		values = []any{refK, refSlot}
		for _, c := range append(cks, tb.nonKey()...) {
			v := row[c.name]
			if c.role != roleClustering && g.chance(4) {
				v = nullVal
			}
			names = append(names, c.name)
			if c.t.kind == kTuple { // gocql v1.7.0 cannot bind a tuple column
				marks = append(marks, v.lit)
				continue
			}
			marks = append(marks, "?")
			values = append(values, bindValue(c.t, v))
		}
		q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", tb.name, strings.Join(names, ", "), strings.Join(marks, ", "))
		if ttl {
			q += " USING TTL 5000"
		}
		parts = append(parts, part{build: func([]item) (string, []any) { return q, values }})
	}
	return parts, rows
}

// pkey is one partition: the case's key k and a slot.
type pkey struct {
	kLit, kJSON string
	kGov        any
	slot        int
}

func partitionKey(tb *table, idx, attempt, slot int) pkey {
	if tb.kText {
		s := fmt.Sprintf("c%d-%d", idx, attempt)
		return pkey{kLit: quoteLit(s), kJSON: jsString(s), kGov: s, slot: slot}
	}
	n := int64(idx)*1000 + int64(attempt)
	s := fmt.Sprint(n)
	return pkey{kLit: s, kJSON: s, kGov: n, slot: slot}
}

// bindKey substitutes the partition into a rendered text and its values.
func bindKey(text string, values []any, k pkey) (string, []any) {
	rep := strings.NewReplacer("{K}", k.kLit, "{KJ}", k.kJSON, "{SLOT}", fmt.Sprint(k.slot))
	out := make([]any, len(values))
	for i, v := range values {
		switch x := v.(type) {
		case keyRef:
			if x == refK {
				out[i] = k.kGov
			} else {
				out[i] = k.slot
			}
		case jsonTmpl:
			out[i] = rep.Replace(string(x))
		default:
			out[i] = v
		}
	}
	return rep.Replace(text), out
}

type runner struct {
	s  *gocql.Session // setup and reads (gocql v1.7 whatever the driver)
	ks string
	d  driver // the driver under test: its judgement and its executions
}

// decide is the library's judgement of a statement executed at timestamp ts, as
// Policy.Exec judges it, with the driver under test.
func (r *runner) decide(cql string, values []any, ts int64) (repeatable bool, reasons []string) {
	return r.d.decide(r.ks, cql, values, ts)
}

// exec runs st once against partition k with write timestamp ts.
func (r *runner) exec(ctx context.Context, st stmt, k pkey, ts int64) error {
	if st.batch == "" || st.textBatch {
		text, values := st.text()
		text, values = bindKey(text, values, k)
		return r.d.query(ctx, text, values, ts)
	}
	texts := make([]string, len(st.parts))
	values := make([][]any, len(st.parts))
	for i, p := range st.parts {
		text, vs := p.render()
		texts[i], values[i] = bindKey(text, vs, k)
	}
	return r.d.batch(ctx, st.batch, texts, values, ts)
}

func (r *runner) setup(ctx context.Context, c *oracleCase, k pkey) error {
	if len(c.setup) == 0 {
		return nil
	}
	typ := "UNLOGGED"
	if c.tb.counter {
		typ = "COUNTER"
	}
	return r.exec(ctx, stmt{batch: typ, parts: c.setup}, k, c.ts-50)
}

// read returns the partition's rows as JSON objects, key columns removed, with
// WRITETIME and TTL of every non-key, non-counter column. Before Cassandra 5.0, which
// cannot read them for a non-frozen collection or UDT, those columns are compared by
// value only.
func (r *runner) read(ctx context.Context, tb *table, k pkey) ([]map[string]any, error) {
	var sel, multiTTL []string
	old := before50()
	for _, c := range tb.cols {
		if c.role == rolePartition {
			continue
		}
		sel = append(sel, c.name)
		switch {
		case c.role == roleClustering || c.t.kind == kCounter:
		case old && c.t.multiCell():
		case c.t.kind == kUDT && !c.t.frozen:
			// Per field: SELECT JSON writetime(u) of a non-frozen UDT with a null field
			// fails in Cassandra 5.0.9 with a NullPointerException.
			for _, f := range c.t.fields {
				sel = append(sel, "writetime("+c.name+"."+f+")", "ttl("+c.name+"."+f+")")
			}
		case c.t.multiCell():
			// SELECT JSON ttl(l) of a non-frozen collection with non-expiring cells fails
			// in Cassandra 5.0.9 with a NullPointerException: read it without JSON.
			sel = append(sel, "writetime("+c.name+")")
			multiTTL = append(multiTTL, c.name)
		default:
			sel = append(sel, "writetime("+c.name+")", "ttl("+c.name+")")
		}
	}
	q := fmt.Sprintf("SELECT JSON %s FROM %s WHERE k = ? AND slot = ?", strings.Join(sel, ", "), tb.name)
	iter := r.s.Query(q, k.kGov, k.slot).WithContext(ctx).Iter()
	var rows []map[string]any
	var js string
	for iter.Scan(&js) {
		dec := json.NewDecoder(strings.NewReader(js))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("decode %q: %w", js, err)
		}
		delete(m, "k")
		delete(m, "slot")
		rows = append(rows, m)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	if len(multiTTL) == 0 {
		return rows, nil
	}
	sel = sel[:0]
	for _, c := range multiTTL {
		sel = append(sel, "ttl("+c+")")
	}
	q = fmt.Sprintf("SELECT %s FROM %s WHERE k = ? AND slot = ?", strings.Join(sel, ", "), tb.name)
	iter = r.s.Query(q, k.kGov, k.slot).WithContext(ctx).Iter()
	ttls := make([][]int, len(multiTTL))
	dest := make([]any, len(multiTTL))
	for i := range ttls {
		dest[i] = &ttls[i]
	}
	for i := 0; iter.Scan(dest...); i++ {
		if i >= len(rows) {
			return nil, fmt.Errorf("%s: more rows than the JSON read", q)
		}
		for j, c := range multiTTL {
			var l []any
			for _, n := range ttls[j] {
				l = append(l, json.Number(fmt.Sprint(n)))
			}
			rows[i]["ttl("+c+")"] = l
		}
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return rows, nil
}

// columnScoped are the statement kinds that write only the columns they name: no row
// marker, no row, range or partition deletion.
var columnScoped = map[string]bool{"update_set": true, "update_collection": true, "update_counter": true,
	"delete_columns": true, "delete_element": true}

// untouched reports whether a and b (same rows) differ only in columns st does not
// name — st writing only the columns it names —, so that repeating st cannot be what
// made them differ. Cassandra 6.0-alpha2 resolves another writer's list element
// removal at the statement's own timestamp differently with and without a repeat of
// an unrelated set element deletion (seed 1, case 833: the list column r9; 5.0.9 does
// not): the server's behaviour, not the repeat's effect on what it wrote.
func untouched(st stmt, a, b []map[string]any, tol int64) bool {
	if !columnScoped[st.kind] || len(a) != len(b) {
		return false
	}
	text, _ := st.text()
	found := false
	for i := range a {
		for k := range a[i] {
			if diff([]map[string]any{{k: a[i][k]}}, []map[string]any{{k: b[i][k]}}, tol) == "" {
				continue
			}
			col := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(k, "writetime("), "ttl("), "maxwritetime("), ")")
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(col) + `\b`).MatchString(text) {
				return false // a column st names (or any text equal to its name): not excused
			}
			found = true
		}
		for k := range b[i] {
			if _, ok := a[i][k]; !ok {
				return false
			}
		}
	}
	return found
}

// diff compares two partitions cell by cell; TTLs may differ by tol seconds.
func diff(a, b []map[string]any, tol int64) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d rows vs %d rows: %s vs %s", len(a), len(b), compact(a), compact(b))
	}
	for i := range a {
		var keys []string
		for k := range a[i] {
			keys = append(keys, k)
		}
		for k := range b[i] {
			if _, ok := a[i][k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			x, y := a[i][k], b[i][k]
			if strings.HasPrefix(k, "ttl(") {
				if !ttlClose(x, y, tol) {
					return fmt.Sprintf("row %d %s: %s vs %s", i, k, compact(x), compact(y))
				}
				continue
			}
			if !reflect.DeepEqual(x, y) {
				return fmt.Sprintf("row %d %s: %s vs %s", i, k, compact(x), compact(y))
			}
		}
	}
	return ""
}

// keysEqualByValue reports whether a and b differ only in how clustering key columns
// (c0, c1, …) spell decimals of equal value: -3143.90 and -3143.9 are one key to
// Cassandra, which keeps either form (seed 20261125, case 49787: a frozen UDT key
// with a decimal field, written by a bound value and by INSERT JSON).
func keysEqualByValue(a, b []map[string]any, tol int64) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(rows []map[string]any) []map[string]any {
		out := make([]map[string]any, len(rows))
		for i, r := range rows {
			out[i] = map[string]any{}
			for k, v := range r {
				if len(k) > 1 && k[0] == 'c' && k[1] >= '0' && k[1] <= '9' {
					v = numbersByValue(v)
				}
				out[i][k] = v
			}
		}
		return out
	}
	return diff(norm(a), norm(b), tol) == ""
}

// numbersByValue replaces each JSON number in v by its exact value's canonical text.
func numbersByValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok {
			return json.Number(r.RatString())
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = numbersByValue(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k := range x {
			out[k] = numbersByValue(x[k])
		}
		return out
	}
	return v
}

func ttlClose(x, y any, tol int64) bool {
	switch xv := x.(type) {
	case json.Number:
		yv, ok := y.(json.Number)
		if !ok {
			return false
		}
		a, _ := xv.Int64()
		b, _ := yv.Int64()
		return abs(a-b) <= tol
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !ttlClose(xv[i], yv[i], tol) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(x, y)
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:297]) + "…"
	}
	return string(b)
}

// verdict is the outcome of judging one statement.
type verdict struct {
	rejected   error  // Cassandra refused the first execution
	err        error  // anything else that went wrong
	diff       string // how the repeated runs differ from the single one; "" when equal
	interleave bool   // the difference shows only with the interleaved writer
	empty      bool   // the difference shows only on a partition empty before the statement
	witness    bool   // the difference shows only around the shape's witness write
	clock      bool   // the difference shows only when server functions return other values
	// known names a documented limit that explains the difference: an equal-timestamp
	// tie between the statement and the other writer on expiring cells is won by the
	// later expiry, so the repeat wins the tie it had lost (retry package doc).
	known string
}

// judge executes st once (A), twice (B), three times (C), and with the other writer's
// write interleaved (D: st, W, st against A2: st, W), all at the case's pinned
// timestamp, and compares the partitions.
func (r *runner) judge(ctx context.Context, c *oracleCase, st stmt, withSetup bool, attempt int) verdict {
	var keys [5]pkey
	for i := range keys {
		keys[i] = partitionKey(c.tb, c.idx, attempt, i)
	}
	// TTLs differ by the time between the writes — the setup's included: a partition set
	// up seconds after another holds TTLs that many seconds longer — and the reads.
	start := time.Now()
	if withSetup {
		for _, k := range keys {
			if err := r.setup(ctx, c, k); err != nil {
				return verdict{err: fmt.Errorf("setup: %w", err)}
			}
		}
	}
	if err := r.exec(ctx, st, keys[0], c.ts); err != nil {
		if r.d.rejected(err) {
			return verdict{rejected: err}
		}
		return verdict{err: err}
	}
	var repeatErr string
	var otherErr error
	run := func(k pkey, n int) {
		for i := 0; i < n; i++ {
			err := r.exec(ctx, st, k, c.ts)
			switch {
			case err == nil:
			case !r.d.rejected(err): // a timeout says nothing about idempotence
				otherErr = err
			case repeatErr == "":
				repeatErr = fmt.Sprintf("execution %d in partition slot %d rejected: %v", i+1, k.slot, err)
			}
		}
	}
	run(keys[1], 2)
	run(keys[2], 3)
	run(keys[3], 1)
	wErrD := r.exec(ctx, c.w, keys[3], c.ts+c.wOff)
	run(keys[3], 1)
	run(keys[4], 1)
	wErrA := r.exec(ctx, c.w, keys[4], c.ts+c.wOff)
	if otherErr != nil {
		return verdict{err: otherErr}
	}
	if repeatErr != "" {
		return verdict{diff: repeatErr}
	}
	var parts [5][]map[string]any
	for i, k := range keys {
		rows, err := r.read(ctx, c.tb, k)
		if err != nil {
			return verdict{err: fmt.Errorf("read: %w", err)}
		}
		parts[i] = rows
	}
	tol := int64(time.Since(start).Seconds()) + 2
	for _, x := range []struct {
		name string
		p    []map[string]any
	}{{"once vs twice: ", parts[1]}, {"once vs three times: ", parts[2]}} {
		if d := diff(parts[0], x.p, tol); d != "" {
			v := verdict{diff: x.name + d}
			if keysEqualByValue(parts[0], x.p, tol) {
				v.known = "a decimal in a clustering key written with another scale: Cassandra keeps either form of keys it compares equal"
			}
			return v
		}
	}
	if (wErrD == nil) != (wErrA == nil) {
		return verdict{diff: fmt.Sprintf("interleaved writer failed in one order only: %v / %v", wErrD, wErrA), interleave: true}
	}
	if d := diff(parts[4], parts[3], tol); d != "" {
		v := verdict{diff: "once+W vs once+W+again: " + d, interleave: true}
		switch {
		case c.wOff == 0 && c.expiring():
			v.known = "equal-timestamp tie with the other writer on expiring cells"
		case c.wOff == 0 && untouched(st, parts[4], parts[3], tol):
			v.known = "the other writer's equal-timestamp write resolved differently in a column the statement does not write"
		}
		return v
	}
	if d, err := r.judgeClock(ctx, c, st, withSetup, attempt, tol); err != nil {
		return verdict{err: err}
	} else if d != "" {
		return verdict{diff: d, clock: true}
	}
	if d, err := r.judgeWitness(ctx, c, st, withSetup, attempt, tol); err != nil {
		return verdict{err: err}
	} else if d != "" {
		return verdict{diff: d, witness: true}
	}
	if d, err := r.judgeEmpty(ctx, c, st, attempt, tol); err != nil {
		return verdict{err: err}
	} else if d != "" {
		return verdict{diff: d, empty: true}
	}
	return verdict{}
}

// judgeClock repeats st as a retry would run on a server whose clock has moved: each
// call of a clock- or randomness-dependent function (now(), currentDate(), uuid(), …)
// returns another value (c.clockAlts). st once against st, then st so changed, both set
// up as the case's other partitions are, and says how they differ. Two probes: the
// other value the generator chose (slots 9 and 10: a setup row's key, so the repeat
// may find data there) and, when that shows nothing, the latest value (slots 11 and
// 12: a late retry's now() or currentDate() is greater, and wins an equal-timestamp tie
// over the first execution's value, which a random value does only half the time). Run
// in the same second or day, such a statement often repeats equal — currentDate()
// changes at midnight only — though a late retry writes another value or another row.
func (r *runner) judgeClock(ctx context.Context, c *oracleCase, st stmt, withSetup bool, attempt int, tol int64) (string, error) {
	if len(c.clockAlts) == 0 || st.lwt {
		return "", nil
	}
	alts := slices.Clone(c.clockAlts)
	slices.SortStableFunc(alts, func(a, b [3]string) int { return len(b[0]) - len(a[0]) }) // toDate(now()) before now()
	for probe, slot := range []int{9, 11} {
		var pairs []string
		for _, a := range alts {
			if alt := a[1+probe]; alt != "" {
				pairs = append(pairs, a[0], alt)
			}
		}
		if probe == 1 && len(pairs) == 0 {
			break
		}
		d, err := r.clockProbe(ctx, c, st, st.replaced(strings.NewReplacer(pairs...).Replace), withSetup, attempt, slot, tol)
		if d != "" || err != nil {
			return d, err
		}
	}
	return "", nil
}

// clockProbe runs st once (slot) against st then later (slot+1) and says how they differ.
func (r *runner) clockProbe(ctx context.Context, c *oracleCase, st, later stmt, withSetup bool, attempt, slot int, tol int64) (string, error) {
	once, again := partitionKey(c.tb, c.idx, attempt, slot), partitionKey(c.tb, c.idx, attempt, slot+1)
	start := time.Now()
	for _, k := range []pkey{once, again} {
		if withSetup {
			if err := r.setup(ctx, c, k); err != nil {
				return "", fmt.Errorf("setup: %w", err)
			}
		}
		if err := r.exec(ctx, st, k, c.ts); err != nil {
			if r.d.rejected(err) {
				return "", nil
			}
			return "", err
		}
	}
	if err := r.exec(ctx, later, again, c.ts); err != nil {
		if r.d.rejected(err) {
			return "", nil // the other value does not fit here (a key out of range)
		}
		return "", err
	}
	if d, err := r.readDiff(ctx, c.tb, once, again, tol+int64(time.Since(start).Seconds())); d != "" || err != nil {
		text, _ := later.text()
		return "once vs once+again on a server whose clock moved (" + text + "): " + d, err
	}
	return "", nil
}

// judgeWitness runs st around the other write its shape is known to be fragile against
// (stmt.witness), 40 µs older than st: st, W, st (slot 7) against st, W (slot 8), both
// after the setup (when the case has one), and says how they differ. The randomly chosen interleaved writer
// rarely is that write, so without it a list element removal or a positional list set
// counts as equal once and repeated though another client's prepend makes the repeat
// remove or overwrite the wrong element (CORRECTNESS.md, bug 1).
func (r *runner) judgeWitness(ctx context.Context, c *oracleCase, st stmt, withSetup bool, attempt int, tol int64) (string, error) {
	w, ok := st.witness()
	if !ok {
		return "", nil
	}
	again, once := partitionKey(c.tb, c.idx, attempt, 7), partitionKey(c.tb, c.idx, attempt, 8)
	start := time.Now() // TTLs differ by the time between writes (setup's too) and reads
	for _, k := range []pkey{again, once} {
		if !withSetup {
			break
		}
		if err := r.setup(ctx, c, k); err != nil {
			return "", fmt.Errorf("setup: %w", err)
		}
	}
	steps := []struct {
		s  stmt
		k  pkey
		ts int64
	}{{st, again, c.ts}, {w, again, c.ts - 40}, {st, again, c.ts}, {st, once, c.ts}, {w, once, c.ts - 40}}
	for i, x := range steps {
		if err := r.exec(ctx, x.s, x.k, x.ts); err != nil {
			if r.d.rejected(err) && i != 2 {
				return "", nil // the witness does not apply here (a null list, an index out of range)
			}
			if r.d.rejected(err) {
				return fmt.Sprintf("repeat after the witness write %s rejected: %v", textOf(w), err), nil
			}
			return "", err
		}
	}
	if d, err := r.readDiff(ctx, c.tb, once, again, tol+int64(time.Since(start).Seconds())); d != "" || err != nil {
		return fmt.Sprintf("once+W vs once+W+again, W = %s at -40µs: %s", textOf(w), d), err
	}
	return "", nil
}

// readDiff reads partitions a and b of tb and says how they differ ("": alike).
func (r *runner) readDiff(ctx context.Context, tb *table, a, b pkey, tol int64) (string, error) {
	ra, err := r.read(ctx, tb, a)
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	rb, err := r.read(ctx, tb, b)
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	return diff(ra, rb, tol), nil
}

func textOf(s stmt) string {
	text, values := s.text()
	return text + valuesNote(values)
}

// judgeEmpty executes st once and twice on partitions that hold nothing before it (slots
// 5 and 6) and says how they differ. The setup rows can hide what a repeat does — a
// newer whole-list write hides the elements an older literal USING TIMESTAMP appends,
// twice as well as once — so a statement counts as equal only if it is equal on a
// populated partition and on an empty one. A statement Cassandra rejects on an empty
// partition (an element of a list that is null) tells nothing here.
func (r *runner) judgeEmpty(ctx context.Context, c *oracleCase, st stmt, attempt int, tol int64) (string, error) {
	once, twice := partitionKey(c.tb, c.idx, attempt, 5), partitionKey(c.tb, c.idx, attempt, 6)
	start := time.Now() // TTLs differ by the time between writes and reads
	if err := r.exec(ctx, st, once, c.ts); err != nil {
		if r.d.rejected(err) {
			return "", nil
		}
		return "", err
	}
	for i := 0; i < 2; i++ {
		if err := r.exec(ctx, st, twice, c.ts); err != nil {
			if r.d.rejected(err) {
				return fmt.Sprintf("empty partition: execution %d rejected: %v", i+1, err), nil
			}
			return "", err
		}
	}
	if d, err := r.readDiff(ctx, c.tb, once, twice, tol+int64(time.Since(start).Seconds())); d != "" || err != nil {
		return "empty partition, once vs twice: " + d, err
	}
	return "", nil
}
