package oracle

import (
	"fmt"

	"github.com/gocql/gocql"
	"math/rand/v2"
	"strings"
)

// keyRef stands for a partition key value in a statement's bind values; the same
// statement runs against several partitions.
type keyRef int

const (
	refK keyRef = iota
	refSlot
)

// jsonTmpl is a bound JSON document holding {KJ} and {SLOT} placeholders.
type jsonTmpl string

// item is one droppable piece of a statement: an INSERT column, an UPDATE assignment,
// a DELETE selection or a JSON field. Minimisation drops items.
type item struct {
	text   string // "col" + term for INSERT (see insert), assignment, selection, JSON field
	term   string // INSERT only: the value's term
	values []any
	// witness, for an assignment whose repeat is known to differ around a particular
	// other write, is that write's assignment: a prepend to the list the assignment
	// removes elements from or addresses by position (judgeWitness); witnessStatic: of
	// a static column. update makes witnessPart of it: the UPDATE of the same row.
	witness       *item
	witnessStatic bool
	witnessPart   *part
}

// part is one INSERT, UPDATE or DELETE with {K}, {KJ} and {SLOT} placeholders.
type part struct {
	items []item
	build func(items []item) (string, []any)
}

func (p part) render() (string, []any) { return p.build(p.items) }

// stmt is a generated statement: one part, or a batch of parts.
type stmt struct {
	kind       string
	parts      []part
	batch      string // "", "LOGGED", "UNLOGGED", "COUNTER"
	batchUsing string // literal USING clause of a text batch
	textBatch  bool   // sent as one BEGIN BATCH text (else a protocol batch)
	lwt        bool
}

// witness is the other write that shows a repeat of s differ when one of its
// assignments has one (item.witness): an UPDATE of the same row with that assignment
// alone. Not for LWTs, which are never repeated.
func (s stmt) witness() (stmt, bool) {
	if s.lwt {
		return stmt{}, false
	}
	for _, p := range s.parts {
		for _, it := range p.items {
			if it.witnessPart != nil {
				return stmt{kind: "witness_update", parts: []part{*it.witnessPart}}, true
			}
		}
	}
	return stmt{}, false
}

// replaced is s with its rendered text passed through f (each part's).
func (s stmt) replaced(f func(string) string) stmt {
	out := s
	out.parts = make([]part, len(s.parts))
	for i, p := range s.parts {
		build := p.build
		out.parts[i] = part{items: p.items, build: func(items []item) (string, []any) {
			text, values := build(items)
			return f(text), values
		}}
	}
	return out
}

// text renders the statement with placeholders; for a batch, as BEGIN … APPLY BATCH.
func (s stmt) text() (string, []any) {
	if s.batch == "" {
		return s.parts[0].render()
	}
	var texts []string
	var values []any
	for _, p := range s.parts {
		t, v := p.render()
		texts = append(texts, t)
		values = append(values, v...)
	}
	head := "BEGIN BATCH"
	switch s.batch {
	case "UNLOGGED":
		head = "BEGIN UNLOGGED BATCH"
	case "COUNTER":
		head = "BEGIN COUNTER BATCH"
	}
	return head + s.batchUsing + " " + strings.Join(texts, "; ") + "; APPLY BATCH", values
}

// stmtGen generates the statements of one case over one table.
type stmtGen struct {
	r      *rand.Rand
	v      valueGen
	tb     *table
	ts     int64            // the case's pinned timestamp
	rows   []map[string]val // setup rows: clustering and non-key values
	fnOK   bool             // server functions allowed
	lwtOK  bool
	noTS   bool // inside a batch with its own USING TIMESTAMP
	usedFn bool
	// clockAlts: each call of a clock- or randomness-dependent server function in the
	// statement, with a value another execution may get from it and the value a late
	// execution may get that wins an equal-timestamp tie (clockAlt)
	clockAlts [][3]string
	last      map[string]val // the row the last statement addressed
}

var unsetValue any = gocql.UnsetValue

func (g *stmtGen) chance(pct int) bool { return g.r.IntN(100) < pct }

// term renders a value as a literal or a bind marker, sometimes with a type hint, and
// sometimes (fnOK) as a server function call.
func (g *stmtGen) term(t *ctype, v val, bind bool) (string, []any) {
	if g.fnOK && g.chance(6) {
		if f, ok := g.fn(t); ok {
			g.usedFn = true
			g.clockAlt(t, f, v)
			return f, nil
		}
	}
	hint := ""
	if t.kind == kScalar && g.chance(5) {
		hint = "(" + t.name + ") "
	}
	// gocql v1.7.0 cannot bind a tuple column (it counts a tuple marker as one value per
	// element), so tuples are always literals.
	if bind && t.kind != kTuple {
		return hint + "?", []any{bindValue(t, v)}
	}
	return hint + v.lit, nil
}

// clockAlt records, for a call f of a function whose result depends on the server's
// clock or randomness, a literal of type t it may return on another execution: the
// oracle repeats the statement with each such call replaced (judgeClock). That is v,
// the value the call stands in for — a setup row's key when it addresses one, so the
// repeat finds data there, as a later date or millisecond can —, except for functions
// whose every value is new (now(), uuid()): one drawn from a stream of its own, so the
// case's statements stay as they were.
func (g *stmtGen) clockAlt(t *ctype, f string, v val) {
	if !strings.Contains(f, "now()") && !strings.Contains(f, "uuid()") && !strings.HasPrefix(f, "current") {
		return
	}
	for _, a := range g.clockAlts {
		if a[0] == f {
			return
		}
	}
	alt := v.lit
	// now(), uuid() and currentTimeUUID() never return a value twice: another
	// execution's is a fresh one, never a setup row's key or element.
	unique := f == "now()" || f == "uuid()" || f == "currentTimeUUID()"
	if unique || v.gov == nil || alt == "" {
		r := rand.New(rand.NewPCG(uint64(g.ts), uint64(len(g.clockAlts))<<32|0xc10c))
		alt = valueGen{r: r}.value(t, 0).lit
	}
	g.clockAlts = append(g.clockAlts, [3]string{f, alt, latest(t)})
}

// latest is a value of type t a clock- or randomness-dependent function may return on
// a late execution that wins every tie: two writes of one cell at one timestamp keep
// the greater value by its bytes (Cassandra's Cells.resolveRegular), and a retry's now()
// or currentDate() is later — greater — than the first execution's, while uuid()'s is
// as likely greater as not. Replacing a call by a random value instead, the repeat
// loses the tie about half the time and reads equal, which no late retry promises.
func latest(t *ctype) string {
	switch t.name {
	case "timeuuid":
		return "ffffffff-ffff-1fff-bfff-ffffffffffff" // version 1; the greatest time and bytes
	case "uuid":
		return "ffffffff-ffff-4fff-bfff-ffffffffffff"
	case "timestamp":
		return "'2100-01-01 00:00:00+0000'"
	case "date":
		return "'2100-01-01'"
	case "time":
		return "'23:59:59.999999999'"
	case "bigint": // toUnixTimestamp(now()): milliseconds
		return "4102444800000"
	}
	return ""
}

// fn returns a server function call of type t: non-deterministic ones (now(), uuid(),
// currentTimestamp() …) and deterministic ones (minTimeuuid, textAsBlob …).
func (g *stmtGen) fn(t *ctype) (string, bool) {
	if t.kind != kScalar {
		return "", false
	}
	var opts []string
	switch t.name {
	case "timeuuid":
		opts = []string{"now()", "currentTimeUUID()", "minTimeuuid('2021-01-01 00:00+0000')", "maxTimeuuid('2022-02-02 02:02+0000')"}
	case "uuid":
		opts = []string{"uuid()"}
	case "timestamp":
		opts = []string{"toTimestamp(now())", "currentTimestamp()", "toTimestamp(minTimeuuid('2021-01-01 00:00+0000'))", "toTimestamp('2020-05-06')"}
	case "date":
		opts = []string{"currentDate()", "toDate(now())", "toDate('2020-05-06 01:02:03+0000')"}
	case "time":
		opts = []string{"currentTime()"}
	case "bigint":
		opts = []string{"toUnixTimestamp(now())", "blobAsBigint(0x0000000000000007)", "toUnixTimestamp('2020-01-01')"}
	case "blob":
		opts = []string{"textAsBlob('abc')", "bigintAsBlob(3)", "intAsBlob(-1)"}
	case "text":
		opts = []string{"blobAsText(0x6869)", "toJson(5)"}
	case "int":
		opts = []string{"blobAsInt(0x0000002a)", "abs(-3)"}
	default:
		return "", false
	}
	return pick(g.r, opts), true
}

// freshKeyOK: t is a type a server function makes new ids of (uuid, timeuuid), and
// server functions may be generated.
func (g *stmtGen) freshKeyOK(t *ctype) bool {
	return g.fnOK && t.kind == kScalar && (t.name == "uuid" || t.name == "timeuuid")
}

// freshKeyFn is a call that makes a new id of type t (see freshKeyOK).
func (g *stmtGen) freshKeyFn(t *ctype) string {
	if t.name == "uuid" {
		return "uuid()"
	}
	return pick(g.r, []string{"now()", "currentTimeUUID()"})
}

// where renders the partition key restriction.
func where(bind bool) (string, []any) {
	if bind {
		return "k = ? AND slot = ?", []any{refK, refSlot}
	}
	return "k = {K} AND slot = {SLOT}", nil
}

// row picks a setup row (mostly) or a fresh clustering position.
func (g *stmtGen) row() map[string]val {
	if len(g.rows) > 0 && g.chance(75) {
		g.last = g.rows[g.r.IntN(len(g.rows))]
		return g.last
	}
	m := map[string]val{}
	for _, c := range g.tb.byRole(roleClustering) {
		m[c.name] = g.v.value(c.t, 0)
	}
	g.last = m
	return m
}

// touched returns the non-key columns a statement names.
func (g *stmtGen) touched(s stmt) []*column {
	var out []*column
	for _, p := range s.parts {
		for _, it := range p.items {
			name := strings.TrimLeft(it.text, `"`)
			if i := strings.IndexFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') }); i >= 0 {
				name = name[:i]
			}
			if c := g.tb.col(name); c != nil && c.role != rolePartition && c.role != roleClustering {
				out = append(out, c)
			}
		}
	}
	return out
}

// interleaved returns the other writer's statement: usually a write to a column the
// statement touches, in the row it addressed, so that the two can interact.
func (g *stmtGen) interleaved(st stmt) stmt {
	cols := g.touched(st)
	if len(cols) == 0 || g.last == nil || g.chance(25) {
		return g.next(false)
	}
	c := pick(g.r, cols)
	row := g.last
	bind := g.chance(50)
	wh, wv := where(bind)
	if c.role != roleStatic && len(g.tb.byRole(roleClustering)) > 0 {
		ct, cv := g.ckWhere(row, bind)
		wh += " AND " + ct
		wv = append(wv, cv...)
	}
	if !g.tb.counter && g.chance(15) {
		return g.deleteStmt("interleaved_delete", []item{{text: c.name}}, wh, wv)
	}
	it := g.assignment(c, row, bind, true)
	tb := g.tb
	return stmt{kind: "interleaved_update", parts: []part{{items: []item{it}, build: func(items []item) (string, []any) {
		return fmt.Sprintf("UPDATE %s SET %s WHERE %s", tb.name, items[0].text, wh), append(append([]any(nil), items[0].values...), wv...)
	}}}}
}

func (g *stmtGen) ckWhere(row map[string]val, bind bool) (string, []any) {
	var conds []string
	var values []any
	for _, c := range g.tb.byRole(roleClustering) {
		t, v := g.term(c.t, row[c.name], bind)
		conds = append(conds, c.name+" = "+t)
		values = append(values, v...)
	}
	return strings.Join(conds, " AND "), values
}

// using renders a USING clause: TTL (writes only) and/or a literal TIMESTAMP near the
// pinned one.
func (g *stmtGen) using(ttl, timestamp bool) string {
	var parts []string
	if ttl && g.chance(25) {
		n := 1000 + g.r.IntN(100000)
		if g.chance(10) {
			n = 0
		}
		parts = append(parts, fmt.Sprintf("TTL %d", n))
	}
	if timestamp && !g.noTS && g.chance(8) {
		parts = append(parts, fmt.Sprintf("TIMESTAMP %d", g.ts+pick(g.r, []int64{-70, -10, 0, 10, 70})))
	}
	if len(parts) == 0 {
		return ""
	}
	return " USING " + strings.Join(parts, " AND ")
}

func (g *stmtGen) regularScalar() *column {
	var cs []*column
	for _, c := range g.tb.byRole(roleRegular) {
		if c.t.kind == kScalar {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	return pick(g.r, cs)
}

// subset returns a random non-empty subset of cols (or empty when allowEmpty).
func (g *stmtGen) subset(cols []*column, max int, allowEmpty bool) []*column {
	var out []*column
	for _, i := range g.r.Perm(len(cols)) {
		if len(out) >= max {
			break
		}
		if g.chance(45) || (len(out) == 0 && !allowEmpty) {
			out = append(out, cols[i])
		}
	}
	return out
}

// next generates one statement of a random kind.
func (g *stmtGen) next(inBatch bool) stmt {
	if g.tb.counter {
		if !inBatch && g.chance(25) {
			return g.batch("COUNTER")
		}
		return g.counterUpdate()
	}
	n := g.r.IntN(100)
	switch {
	case n < 20:
		return g.insert(g.chance(50))
	case n < 28:
		return g.insertJSON()
	case n < 43:
		return g.update(false)
	case n < 60:
		return g.update(true)
	case n < 63:
		return g.deleteRow(false)
	case n < 65:
		return g.deleteRow(true)
	case n < 70:
		return g.deleteRange()
	case n < 76:
		return g.deleteCols()
	case n < 84:
		return g.deleteElem()
	default:
		if inBatch {
			return g.update(true)
		}
		return g.batch(pick(g.r, []string{"LOGGED", "UNLOGGED"}))
	}
}

func (g *stmtGen) batch(typ string) stmt {
	s := stmt{kind: "batch_" + strings.ToLower(typ), batch: typ, textBatch: g.chance(50)}
	if s.textBatch && typ != "COUNTER" && g.chance(10) {
		s.batchUsing = fmt.Sprintf(" USING TIMESTAMP %d", g.ts+pick(g.r, []int64{-10, 10}))
	}
	lwt, noTS := g.lwtOK, g.noTS
	g.lwtOK, g.noTS = false, s.batchUsing != ""
	defer func() { g.lwtOK, g.noTS = lwt, noTS }()
	for i, n := 0, 2+g.r.IntN(3); i < n; i++ {
		s.parts = append(s.parts, g.next(true).parts...)
	}
	return s
}

func (g *stmtGen) lwt() bool { return g.lwtOK && g.chance(5) }

func (g *stmtGen) insert(bind bool) stmt {
	kind := "insert_literal"
	if bind {
		kind = "insert_bind"
	}
	tb := g.tb
	row := g.row()
	var items []item
	statics, regulars := tb.byRole(roleStatic), tb.byRole(roleRegular)
	staticOnly := len(statics) > 0 && g.chance(10)
	var cols []*column
	if staticOnly {
		cols = g.subset(statics, len(statics), false)
	} else {
		cols = g.subset(append(statics, regulars...), 6, true)
	}
	for _, c := range cols {
		v := g.v.value(c.t, 0)
		if g.chance(5) {
			v = nullVal
		}
		t, vs := g.term(c.t, v, bind)
		if bind && c.t.kind != kTuple && g.chance(5) {
			t, vs = "?", []any{unsetValue}
		}
		items = append(items, item{text: c.name, term: t, values: vs})
	}
	var keyCols []*column
	keyCols = append(keyCols, tb.byRole(rolePartition)...)
	if !staticOnly {
		keyCols = append(keyCols, tb.byRole(roleClustering)...)
	}
	var keyItems []item
	for _, c := range keyCols {
		switch c.name {
		case "k":
			if bind {
				keyItems = append(keyItems, item{text: "k", term: "?", values: []any{refK}})
			} else {
				keyItems = append(keyItems, item{text: "k", term: "{K}"})
			}
		case "slot":
			if bind {
				keyItems = append(keyItems, item{text: "slot", term: "?", values: []any{refSlot}})
			} else {
				keyItems = append(keyItems, item{text: "slot", term: "{SLOT}"})
			}
		default:
			t, vs := g.term(c.t, row[c.name], bind)
			keyItems = append(keyItems, item{text: c.name, term: t, values: vs})
		}
	}
	lwt := g.lwt()
	using := g.using(true, !lwt)
	s := stmt{kind: kind, lwt: lwt}
	s.parts = []part{{items: items, build: func(items []item) (string, []any) {
		var names, terms []string
		var values []any
		for _, it := range append(append([]item(nil), keyItems...), items...) {
			names, terms = append(names, it.text), append(terms, it.term)
			values = append(values, it.values...)
		}
		q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", tb.name, strings.Join(names, ", "), strings.Join(terms, ", "))
		if lwt {
			q += " IF NOT EXISTS"
		}
		return q + using, values
	}}}
	if lwt {
		s.kind = "lwt_insert"
	}
	return s
}

func (g *stmtGen) insertJSON() stmt {
	tb := g.tb
	row := g.row()
	bind := g.chance(40)
	var keyFields []string
	keyFields = append(keyFields, `"k": {KJ}`, `"slot": {SLOT}`)
	for _, c := range tb.byRole(roleClustering) {
		keyFields = append(keyFields, jsString(c.name)+": "+row[c.name].js)
	}
	var items []item
	for _, c := range g.subset(tb.nonKey(), 6, true) {
		v := g.v.value(c.t, 0)
		if g.chance(8) {
			v = nullVal
		}
		items = append(items, item{text: jsString(c.name) + ": " + v.js})
	}
	def := pick(g.r, []string{"", "", " DEFAULT UNSET", " DEFAULT NULL"})
	lwt := g.lwt()
	using := g.using(true, !lwt)
	s := stmt{kind: "insert_json", lwt: lwt}
	if bind {
		s.kind = "insert_json_bind"
	}
	s.parts = []part{{items: items, build: func(items []item) (string, []any) {
		fields := append([]string(nil), keyFields...)
		for _, it := range items {
			fields = append(fields, it.text)
		}
		doc := "{" + strings.Join(fields, ", ") + "}"
		var q string
		var values []any
		if bind {
			q = "INSERT INTO " + tb.name + " JSON ?"
			values = []any{jsonTmpl(doc)}
		} else {
			q = "INSERT INTO " + tb.name + " JSON " + quoteLit(doc)
		}
		q += def
		if lwt {
			q += " IF NOT EXISTS"
		}
		return q + using, values
	}}}
	if lwt {
		s.kind = "lwt_insert_json"
	}
	return s
}

// assignment renders one SET assignment for c; coll selects collection and UDT-field
// operations over plain assignment.
func (g *stmtGen) assignment(c *column, row map[string]val, bind, coll bool) item {
	t := c.t
	if c.t.kind == kCounter {
		v := g.v.value(t, 0)
		tm, vs := g.term(t, v, bind)
		if g.chance(30) {
			return item{text: fmt.Sprintf("%s = %s - %s", c.name, c.name, tm), values: vs}
		}
		return item{text: fmt.Sprintf("%s = %s + %s", c.name, c.name, tm), values: vs}
	}
	plain := func() item {
		v := g.v.value(t, 0)
		if g.chance(5) {
			v = nullVal
		}
		tm, vs := g.term(t, v, bind)
		return item{text: c.name + " = " + tm, values: vs}
	}
	if !coll || !t.multiCell() {
		return plain()
	}
	old := row[c.name]
	// existing elements: removing or addressing them is what makes a difference
	existing := func(n int) []val {
		var out []val
		for _, i := range g.r.Perm(len(old.items)) {
			if len(out) < n {
				out = append(out, old.items[i])
			}
		}
		return out
	}
	if t.kind == kUDT {
		i := g.r.IntN(len(t.fields))
		tm, vs := g.term(t.elems[i], g.v.value(t.elems[i], 0), bind)
		return item{text: fmt.Sprintf("%s.%s = %s", c.name, t.fields[i], tm), values: vs}
	}
	// elements to add: new ones, or copies of existing ones (a list holds duplicates)
	adding := func() val {
		if es := existing(1); len(es) > 0 && g.chance(40) {
			return mkColl(t.kind, es, nil)
		}
		return g.v.value(t, 1)
	}
	switch t.kind {
	case kList:
		switch g.r.IntN(5) {
		case 0:
			tm, vs := g.term(t, adding(), bind)
			return item{text: fmt.Sprintf("%s = %s + %s", c.name, c.name, tm), values: vs}
		case 1:
			tm, vs := g.term(t, adding(), bind)
			return item{text: fmt.Sprintf("%s = %s + %s", c.name, tm, c.name), values: vs}
		case 2:
			v := mkColl(kList, existing(1+g.r.IntN(2)), nil)
			if len(v.items) == 0 || g.chance(20) {
				v = g.v.value(t, 1)
			}
			tm, vs := g.term(t, v, bind)
			// another client prepends what the removal removes: a repeat removes it too
			w := &item{text: fmt.Sprintf("%s = %s + %s", c.name, tm, c.name), values: vs}
			return item{text: fmt.Sprintf("%s = %s - %s", c.name, c.name, tm), values: vs, witness: w, witnessStatic: c.role == roleStatic}
		case 3:
			idx := g.r.IntN(3)
			e := g.v.value(t.elems[0], 0)
			tm, vs := g.term(t.elems[0], e, bind)
			// another client prepends an element other than e: a repeat sets e in the
			// element before the one it set
			w := g.witnessPrepend(c, e, bind)
			if bind {
				return item{text: fmt.Sprintf("%s[?] = %s", c.name, tm), values: append([]any{idx}, vs...), witness: w, witnessStatic: c.role == roleStatic}
			}
			return item{text: fmt.Sprintf("%s[%d] = %s", c.name, idx, tm), values: vs, witness: w, witnessStatic: c.role == roleStatic}
		}
		return plain()
	case kSet:
		switch g.r.IntN(3) {
		case 0:
			tm, vs := g.term(t, adding(), bind)
			return item{text: fmt.Sprintf("%s = %s + %s", c.name, c.name, tm), values: vs}
		case 1:
			v := mkColl(kSet, existing(1+g.r.IntN(2)), nil)
			if len(v.items) == 0 || g.chance(20) {
				v = g.v.value(t, 1)
			}
			tm, vs := g.term(t, v, bind)
			return item{text: fmt.Sprintf("%s = %s - %s", c.name, c.name, tm), values: vs}
		}
		return plain()
	case kMap:
		switch g.r.IntN(4) {
		case 0:
			tm, vs := g.term(t, g.v.value(t, 1), bind)
			return item{text: fmt.Sprintf("%s = %s + %s", c.name, c.name, tm), values: vs}
		case 1:
			keys := existing(1 + g.r.IntN(2))
			if len(keys) == 0 || g.chance(20) {
				keys = []val{g.v.value(t.elems[0], 0)}
			}
			kt := &ctype{kind: kSet, frozen: true, elems: []*ctype{t.elems[0]}}
			tm, vs := g.term(kt, mkColl(kSet, keys, nil), bind)
			return item{text: fmt.Sprintf("%s = %s - %s", c.name, c.name, tm), values: vs}
		case 2:
			key := g.v.value(t.elems[0], 0)
			if ks := existing(1); len(ks) > 0 && g.chance(60) {
				key = ks[0]
			}
			kt, kvs := g.term(t.elems[0], key, bind)
			tm, vs := g.term(t.elems[1], g.v.value(t.elems[1], 0), bind)
			return item{text: fmt.Sprintf("%s[%s] = %s", c.name, kt, tm), values: append(kvs, vs...)}
		}
		return plain()
	}
	return plain()
}

// witnessPrepend is the assignment prepending to list column c one element other than
// e, drawn from a stream of its own so that the case's statements stay as they were.
func (g *stmtGen) witnessPrepend(c *column, e val, bind bool) *item {
	r := rand.New(rand.NewPCG(uint64(g.ts), uint64(len(c.name))<<32|0x5eed))
	wg := &stmtGen{r: r, v: valueGen{r: r}, tb: g.tb, ts: g.ts}
	x := wg.v.value(c.t.elems[0], 0)
	for i := 0; i < 16 && x.lit == e.lit; i++ {
		x = wg.v.value(c.t.elems[0], 0)
	}
	tm, vs := wg.term(c.t, mkColl(kList, []val{x}, nil), bind)
	return &item{text: fmt.Sprintf("%s = %s + %s", c.name, tm, c.name), values: vs}
}

// witnessParts gives each item with a witness its UPDATE of the row (rowWhere, values
// rowValues) or, for a static column, of the partition.
func witnessParts(tb *table, items []item, bind bool, rowWhere string, rowValues []any) {
	for i := range items {
		w := items[i].witness
		if w == nil {
			continue
		}
		wh, wv := rowWhere, rowValues
		if items[i].witnessStatic {
			wh, wv = where(bind)
		}
		items[i].witnessPart = &part{items: []item{*w}, build: func(its []item) (string, []any) {
			return fmt.Sprintf("UPDATE %s SET %s WHERE %s", tb.name, its[0].text, wh), append(append([]any(nil), its[0].values...), wv...)
		}}
	}
}

func (g *stmtGen) update(coll bool) stmt {
	tb := g.tb
	bind := g.chance(50)
	row := g.row()
	var cands []*column
	for _, c := range tb.nonKey() {
		if !coll || c.t.multiCell() {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		cands = tb.nonKey()
	}
	cols := g.subset(cands, 3, false)
	staticOnly := true
	for _, c := range cols {
		if c.role != roleStatic {
			staticOnly = false
		}
	}
	var items []item
	for _, c := range cols {
		items = append(items, g.assignment(c, row, bind, coll))
	}
	lwt := g.lwt()
	using := g.using(true, !lwt)
	wh, wv := where(bind)
	if !staticOnly && len(tb.byRole(roleClustering)) > 0 {
		ct, cv := g.ckWhere(row, bind)
		wh += " AND " + ct
		wv = append(wv, cv...)
	}
	witnessParts(tb, items, bind, wh, wv)
	cond, condV := "", []any(nil)
	if lwt {
		if c := g.regularScalar(); c != nil && !staticOnly && g.chance(60) {
			tm, vs := g.term(c.t, row[c.name], bind)
			if _, ok := row[c.name]; !ok {
				tm, vs = g.term(c.t, g.v.value(c.t, 0), bind)
			}
			cond, condV = fmt.Sprintf(" IF %s = %s", c.name, tm), vs
		} else {
			cond = " IF EXISTS"
		}
	}
	kind := "update_set"
	if coll {
		kind = "update_collection"
	}
	if lwt {
		kind = "lwt_" + kind
	}
	s := stmt{kind: kind, lwt: lwt}
	s.parts = []part{{items: items, build: func(items []item) (string, []any) {
		var sets []string
		var values []any
		for _, it := range items {
			sets = append(sets, it.text)
			values = append(values, it.values...)
		}
		if len(sets) == 0 {
			return "", nil
		}
		values = append(values, wv...)
		values = append(values, condV...)
		return fmt.Sprintf("UPDATE %s%s SET %s WHERE %s%s", tb.name, using, strings.Join(sets, ", "), wh, cond), values
	}}}
	return s
}

func (g *stmtGen) counterUpdate() stmt {
	tb := g.tb
	bind := g.chance(50)
	row := g.row()
	cols := g.subset(tb.nonKey(), 3, false)
	staticOnly := true
	for _, c := range cols {
		if c.role != roleStatic {
			staticOnly = false
		}
	}
	var items []item
	for _, c := range cols {
		items = append(items, g.assignment(c, row, bind, false))
	}
	wh, wv := where(bind)
	if !staticOnly {
		ct, cv := g.ckWhere(row, bind)
		wh += " AND " + ct
		wv = append(wv, cv...)
	}
	s := stmt{kind: "update_counter"}
	s.parts = []part{{items: items, build: func(items []item) (string, []any) {
		var sets []string
		var values []any
		for _, it := range items {
			sets = append(sets, it.text)
			values = append(values, it.values...)
		}
		if len(sets) == 0 {
			return "", nil
		}
		return fmt.Sprintf("UPDATE %s SET %s WHERE %s", tb.name, strings.Join(sets, ", "), wh), append(values, wv...)
	}}}
	return s
}

// deleteStmt assembles DELETE [sel] FROM t [USING TIMESTAMP] WHERE … [IF EXISTS].
func (g *stmtGen) deleteStmt(kind string, items []item, wh string, wv []any) stmt {
	lwt := g.lwt()
	using := g.using(false, !lwt)
	if lwt {
		kind = "lwt_" + kind
	}
	tb := g.tb
	s := stmt{kind: kind, lwt: lwt}
	s.parts = []part{{items: items, build: func(items []item) (string, []any) {
		var sels []string
		var values []any
		for _, it := range items {
			sels = append(sels, it.text)
			values = append(values, it.values...)
		}
		q := "DELETE "
		if len(sels) > 0 {
			q += strings.Join(sels, ", ") + " "
		}
		q += "FROM " + tb.name + using + " WHERE " + wh
		if lwt {
			q += " IF EXISTS"
		}
		return q, append(values, wv...)
	}}}
	return s
}

func (g *stmtGen) deleteRow(partition bool) stmt {
	bind := g.chance(50)
	wh, wv := where(bind)
	if partition || len(g.tb.byRole(roleClustering)) == 0 {
		return g.deleteStmt("delete_partition", nil, wh, wv)
	}
	ct, cv := g.ckWhere(g.row(), bind)
	return g.deleteStmt("delete_row", nil, wh+" AND "+ct, append(wv, cv...))
}

func (g *stmtGen) deleteRange() stmt {
	cks := g.tb.byRole(roleClustering)
	if len(cks) == 0 {
		return g.deleteRow(true)
	}
	bind := g.chance(50)
	wh, wv := where(bind)
	a, b := g.row(), g.row()
	// With two clustering columns: fix the first (prefix), then maybe a range on the second.
	i := 0
	if len(cks) > 1 && g.chance(60) {
		tm, vs := g.term(cks[0].t, a[cks[0].name], bind)
		// (Only when term made no call: a case it gave one keeps its draws.)
		if g.freshKeyOK(cks[0].t) && !strings.HasSuffix(tm, ")") && g.chance(30) {
			f := g.freshKeyFn(cks[0].t)
			// A fresh id before a range: Cassandra 4.1 and 5.0 evaluate it once per bound
			// (ModificationStatement.createSlices), so the range covers the rows between
			// two values — the shape of seed 20261206, case 743.
			g.usedFn = true
			g.clockAlt(cks[0].t, f, a[cks[0].name])
			tm, vs = f, nil
		}
		wh += " AND " + cks[0].name + " = " + tm
		wv = append(wv, vs...)
		i = 1
		if g.chance(30) {
			return g.deleteStmt("delete_range", nil, wh, wv)
		}
	}
	c := cks[i]
	ops := [][2]string{{">", "<"}, {">=", "<="}, {">", "<="}, {">=", "<"}}
	op := pick(g.r, ops)
	tm, vs := g.term(c.t, a[c.name], bind)
	wh += " AND " + c.name + " " + op[0] + " " + tm
	wv = append(wv, vs...)
	if g.chance(60) {
		tm, vs := g.term(c.t, b[c.name], bind)
		wh += " AND " + c.name + " " + op[1] + " " + tm
		wv = append(wv, vs...)
	}
	return g.deleteStmt("delete_range", nil, wh, wv)
}

func (g *stmtGen) deleteCols() stmt {
	bind := g.chance(50)
	cols := g.subset(g.tb.nonKey(), 3, false)
	var items []item
	staticOnly := true
	for _, c := range cols {
		items = append(items, item{text: c.name})
		if c.role != roleStatic {
			staticOnly = false
		}
	}
	wh, wv := where(bind)
	if !staticOnly && len(g.tb.byRole(roleClustering)) > 0 {
		ct, cv := g.ckWhere(g.row(), bind)
		wh += " AND " + ct
		wv = append(wv, cv...)
	}
	return g.deleteStmt("delete_columns", items, wh, wv)
}

func (g *stmtGen) deleteElem() stmt {
	var cands []*column
	for _, c := range g.tb.nonKey() {
		if c.t.multiCell() {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return g.deleteCols()
	}
	bind := g.chance(50)
	row := g.row()
	var items []item
	staticOnly := true
	for _, c := range g.subset(cands, 2, false) {
		if c.role != roleStatic {
			staticOnly = false
		}
		old := row[c.name]
		switch c.t.kind {
		case kUDT:
			items = append(items, item{text: c.name + "." + pick(g.r, c.t.fields)})
		case kList:
			idx := g.r.IntN(3)
			if bind {
				items = append(items, item{text: c.name + "[?]", values: []any{idx}})
			} else {
				items = append(items, item{text: fmt.Sprintf("%s[%d]", c.name, idx)})
			}
		default: // set element or map key
			e := g.v.value(c.t.elems[0], 0)
			if len(old.items) > 0 && g.chance(70) {
				e = pick(g.r, old.items)
			}
			tm, vs := g.term(c.t.elems[0], e, bind)
			items = append(items, item{text: c.name + "[" + tm + "]", values: vs})
		}
	}
	wh, wv := where(bind)
	if !staticOnly && len(g.tb.byRole(roleClustering)) > 0 {
		ct, cv := g.ckWhere(row, bind)
		wh += " AND " + ct
		wv = append(wv, cv...)
	}
	return g.deleteStmt("delete_element", items, wh, wv)
}
