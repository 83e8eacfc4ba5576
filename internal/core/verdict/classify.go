package verdict

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// Classify reads any CQL text — one statement, several separated by semicolons, or a
// batch — and judges whether executing it twice with the same bound values and the same
// pinned write timestamp has the effect of executing it once.
//
// Not idempotent: counter updates and other `x = x ± …` whose column could be a counter
// or a list, list append/prepend, positional list deletes (`DELETE l[?]` where l could
// be a list), any server-side non-deterministic function in a write (now(), uuid(),
// currentTimestamp(), …, or a function Classify does not know), lightweight
// transactions (IF …), COUNTER batches, TRUNCATE, and schema changes that fail when
// repeated (CREATE without IF NOT EXISTS, ALTER … ADD). Reads are idempotent. A batch is
// idempotent iff every statement in it is — where a list write or a server function's
// value that a DELETE of the same batch deletes at a timestamp not below the write's
// counts as repeatable: the deletion shadows it on every run (same table, the DELETE's
// restrictions met by the write's key — values known equal, or inside a slice —, no IF
// on either; both at the batch's timestamp, or their own USING TIMESTAMPs compared —
// against the batch's timestamp only when it is known: the adapters' Policy.Exec,
// ExecBatch and RepeatableAt judge at the pinned one, Classify does not know it; with
// schema metadata that knows column roles and key types, such as SessionSchema,
// whole-row deletes and literal-against-bound keys count too). Text that is not CQL is
// not idempotent.
// Classify never panics.
func Classify(cql string) Verdict { return ClassifyWithSchema(cql, nil) }

// ClassifyWithSchema is Classify with column metadata: `s = s + ?` on a set or map,
// `l = l - ?` on a list and `DELETE m[?]` on a map are idempotent; on a counter or list
// append they are not. Without metadata (schema nil or ColumnUnknown) Classify is
// conservative.
func ClassifyWithSchema(cql string, schema Schema) Verdict {
	return ClassifyIn("", cql, schema)
}

// ClassifyIn is ClassifyWithSchema where statements that do not name a keyspace are in
// keyspace ks (the session's or the query's).
func ClassifyIn(ks, cql string, schema Schema) Verdict {
	v := Verdict{Idempotent: true}
	toks, err := cqltext.Lex(cql)
	if err != nil {
		v.notIdempotent("not CQL: " + err.Error())
		return v
	}
	stmts := cqltext.Split(toks)
	if len(stmts) == 0 {
		v.notIdempotent("empty statement")
		return v
	}
	c := classifier{v: &v, schema: schema, ks: ks, markers: map[int]int{}, fp: -1}
	for _, tok := range toks {
		if tok.Kind == cqltext.Bind {
			c.markers[tok.Pos] = len(c.markers)
		}
	}
	v.markers = len(c.markers)
	for _, st := range stmts {
		c.statement(st)
	}
	if len(stmts) > 1 && v.Kind != KindBatch {
		v.Kind = KindBatch
	}
	if v.Statements > 1 {
		v.multi = true
	}
	return v.unshadow(nil, nil) // literal keys; bound ones in ForValues
}

type classifier struct {
	v       *Verdict
	schema  Schema
	ks      string      // keyspace of statements that name none
	markers map[int]int // bind marker token position → marker index
	fp      int         // the current statement's footprint in v.fps, or -1
	// batchTS: the batch has its own USING TIMESTAMP: every statement writes at it, not
	// at the execution's T (Cassandra refuses a statement's own timestamp then).
	batchTS bool
}

// kind asks the schema what a column is. Frozen collections, tuples and UDTs are
// ColumnScalar: one cell, overwritten whole.
func (c *classifier) kind(ks, table, col string) ColumnKind {
	if c.schema == nil || table == "" || col == "" {
		return ColumnUnknown
	}
	if ks == "" {
		ks = c.ks
	}
	if !slices.Contains(c.v.consulted, ks) {
		c.v.consulted = append(c.v.consulted, ks)
	}
	return c.schema.ColumnKind(ks, table, col)
}

func (c *classifier) setKind(k Kind) {
	if c.v.Kind == KindUnknown {
		c.v.Kind = k
	}
}

func (c *classifier) statement(t []cqltext.Token) {
	c.v.Statements++
	first := t[0]
	c.fp = -1
	if first.Is("insert") || first.Is("update") || first.Is("delete") {
		if fp, ok := c.footprintOf(t); ok {
			c.v.fps = append(c.v.fps, fp)
			c.fp = len(c.v.fps) - 1
			c.v.deleter = c.v.deleter || fp.del
		}
	}
	switch {
	case first.Is("select"):
		c.setKind(KindRead)
	case first.Is("insert"):
		c.setKind(KindWrite)
		c.v.Writes = true
		c.write(t)
		c.insert(t)
	case first.Is("update"):
		c.setKind(KindWrite)
		c.v.Writes = true
		c.update(t)
	case first.Is("delete"):
		c.setKind(KindWrite)
		c.v.Writes = true
		c.delete(t)
	case first.Is("begin"):
		c.v.Kind = KindBatch
		c.batch(t)
	case first.Is("truncate"):
		c.setKind(KindOther)
		c.v.Writes = true
		c.v.notIdempotent("TRUNCATE: a retry erases data written since the first attempt")
	case first.Is("create"), first.Is("drop"):
		c.setKind(KindSchema)
		if !cqltext.HasSeq(t, "if", "exists") && !cqltext.HasSeq(t, "if", "not", "exists") {
			c.v.notIdempotent(fmt.Sprintf("%s without IF [NOT] EXISTS fails when repeated", strings.ToUpper(first.Lower)))
		}
	case first.Is("alter"):
		c.setKind(KindSchema)
		// ALTER TABLE [IF EXISTS] t ADD [IF NOT EXISTS] c … / DROP [IF EXISTS] c / RENAME
		// [IF EXISTS] a TO b: only the clause's own IF [NOT] EXISTS makes a repeat a
		// no-op; the table's IF EXISTS does not.
		for i, tok := range t {
			guarded := false
			switch {
			case tok.Is("add"):
				guarded = cqltext.HasSeq(t[i+1:min(i+4, len(t))], "if", "not", "exists")
			case tok.Is("drop"), tok.Is("rename"):
				guarded = cqltext.HasSeq(t[i+1:min(i+3, len(t))], "if", "exists")
			default:
				continue
			}
			if !guarded {
				c.v.notIdempotent(fmt.Sprintf("ALTER … %s fails when repeated", strings.ToUpper(tok.Lower)))
			}
			break
		}
	case first.Is("use"), first.Is("grant"), first.Is("revoke"), first.Is("list"), first.Is("describe"), first.Is("desc"):
		c.setKind(KindOther)
	default:
		c.setKind(KindUnknown)
		c.v.notIdempotent(fmt.Sprintf("unrecognised statement %q", first.Text))
	}
}

// batch classifies BEGIN [UNLOGGED|LOGGED|COUNTER] BATCH … APPLY BATCH.
func (c *classifier) batch(t []cqltext.Token) {
	i := 1
	if i < len(t) && t[i].Is("counter") {
		c.v.notIdempotent("COUNTER batch")
	}
	c.v.logged = !(i < len(t) && (t[i].Is("counter") || t[i].Is("unlogged")))
	for i < len(t) && !t[i].Is("batch") {
		i++
	}
	i++
	// Skip USING TIMESTAMP n.
	if i < len(t) && t[i].Is("using") {
		c.v.note("batch has a literal USING clause")
		c.batchTS = true
		for i < len(t) && !(t[i].Is("insert") || t[i].Is("update") || t[i].Is("delete")) {
			i++
		}
	}
	end := len(t)
	if end >= 2 && t[end-2].Is("apply") && t[end-1].Is("batch") {
		end -= 2
	} else {
		c.v.notIdempotent("batch without APPLY BATCH")
	}
	// Inner statements start at INSERT/UPDATE/DELETE keywords at nesting depth 0.
	before := c.v.Statements
	start := -1
	depth := 0
	for j := i; j < end; j++ {
		tok := t[j]
		switch {
		case tok.IsPunct("(") || tok.IsPunct("[") || tok.IsPunct("{"):
			depth++
		case tok.IsPunct(")") || tok.IsPunct("]") || tok.IsPunct("}"):
			depth--
		case depth == 0 && tok.IsPunct(";"):
			if start >= 0 {
				c.statement(t[start:j])
			}
			start = -1
		case depth == 0 && (tok.Is("insert") || tok.Is("update") || tok.Is("delete")) && isStatementStart(t, j):
			if start >= 0 {
				c.statement(t[start:j])
			}
			start = j
		}
	}
	if start >= 0 {
		c.statement(t[start:end])
	} else if end > i && c.v.Statements == before {
		c.v.notIdempotent("batch holds statements other than INSERT, UPDATE, DELETE")
	}
}

// isStatementStart tells "DELETE" the statement from a column named delete: a statement
// keyword follows the start of the batch body or the previous statement's end.
func isStatementStart(t []cqltext.Token, j int) bool {
	if j == 0 {
		return true
	}
	prev := t[j-1]
	// Column lists and assignments put the keyword after ( , = . or a bind marker.
	return !(prev.IsPunct("(") || prev.IsPunct(",") || prev.IsPunct("=") || prev.IsPunct("."))
}

// write checks the clauses every write shares: IF (LWT), functions, USING. Function
// calls are looked for after the table name and column list (from VALUES/JSON in an
// INSERT, from the token after the table in an UPDATE) and, in a DELETE, everywhere
// after DELETE: an element's subscript (DELETE m[now()] …) names the element the
// server's clock gives when it runs, another one on a late retry.
func (c *classifier) write(t []cqltext.Token) {
	for i, tok := range t {
		if tok.Is("if") && !(i > 0 && t[i-1].IsPunct(".")) {
			c.v.Conditional = true
			c.v.notIdempotent("lightweight transaction (" + cqltext.Clause(t[i:]) + ")")
		}
		if tok.Is("timestamp") && i > 0 && (t[i-1].Is("using") || t[i-1].Is("and")) {
			if i+1 < len(t) && t[i+1].Kind == cqltext.Number {
				c.v.note("literal USING TIMESTAMP: every attempt writes the same timestamp")
			}
		}
	}
	if where := cqltext.IndexKeyword(t, "where", 0); where >= 0 && cqltext.IndexKeyword(t, "in", where) >= 0 {
		c.v.multi = true // WHERE k IN (…): one mutation per partition
	}
	start := len(t)
	switch {
	case t[0].Is("insert"):
		if i := cqltext.IndexKeyword(t, "values", 0); i >= 0 {
			start = i
		} else if i := cqltext.IndexKeyword(t, "json", 0); i >= 0 {
			start = i
		}
	case t[0].Is("update"):
		start = 2
		if len(t) > 3 && t[2].IsPunct(".") {
			start = 4
		}
	case t[0].Is("delete"):
		start = 1
	}
	if start < len(t) {
		var del *deleteShape
		if t[0].Is("delete") {
			del = deleteShapeOf(t)
		}
		c.functions(t[start:], c.functionOwner(t), del)
	}
}

// functions flags server-side non-deterministic (or unknown) function calls.
//
// owner, when not nil, names the column a call at a token position writes ("" for a
// call in the row's key), for shadowing (shadow.go); ok false where none is known.
// del is the WHERE clause of a DELETE (nil for other writes).
func (c *classifier) functions(t []cqltext.Token, owner func(pos int) (col string, ok bool), del *deleteShape) {
	flag := func(i int, reason string) {
		if owner != nil {
			if col, ok := owner(t[i].Pos); ok {
				ks, table := c.v.fps[c.fp].ks, c.v.fps[c.fp].table
				c.listReason(ks, table, col, reason)
				return
			}
		}
		fp := c.fp
		c.fp = -1 // a record never covered: the same text may be covered elsewhere
		c.listReason("", "", "", reason)
		c.fp = fp
	}
	for i, tok := range t {
		// 'now' is the server's clock to a timestamp column (TimestampType.fromString),
		// in a literal as in a JSON document; a text column would take it as text, but
		// the verdict does not know which column a literal lands in.
		if tok.Kind == cqltext.String && hasNowLiteral(tok.Text) {
			if owner != nil {
				fp := c.v.fps[c.fp]
				if col, ok := owner(tok.Pos); ok && col != "" && c.keyType(fp.ks, fp.table, col) == KeyText {
					continue // a text column's value, as the schema says
				}
			}
			flag(i, "timestamp literal 'now' in a write (the server's clock when it runs)")
		}
	}
	for i := 0; i+1 < len(t); i++ {
		if (t[i].Kind != cqltext.Ident && t[i].Kind != cqltext.QIdent) || !t[i+1].IsPunct("(") {
			continue
		}
		name := t[i].Lower
		if t[i].Kind == cqltext.QIdent {
			name = strings.ToLower(t[i].Text)
		}
		// Keywords followed by "(" that are not calls.
		if t[i].Kind == cqltext.Ident && syntaxBeforeParen[name] {
			continue
		}
		// keyspace.function(
		if i >= 2 && t[i-1].IsPunct(".") {
			c.v.notIdempotent(fmt.Sprintf("user-defined function %s.%s() may be non-deterministic", t[i-2].Text, t[i].Text))
			continue
		}
		if name == "fromjson" && i+3 < len(t) && t[i+2].Kind == cqltext.Bind && t[i+3].IsPunct(")") {
			// fromJson(?): the bound document may hold the timestamp literal "now".
			c.v.binds = append(c.v.binds, bindCheck{index: c.markers[t[i+2].Pos], json: true, nowOnly: true, fp: -1})
		}
		switch {
		case del != nil && freshKey(t, i):
			// A DELETE of a key no one holds: no read tells one run from two — when the
			// server evaluates the call once (see evaluatedOnce).
			if t[i-1].IsPunct("=") {
				c.freshEquality(del, cqltext.IdentName(t[i-2]), t[i].Text)
			}
		case nonDeterministic[name]:
			flag(i, fmt.Sprintf("server-side non-deterministic function %s() in a write", t[i].Text))
		case deterministic[name] || strings.HasPrefix(name, "blobas") || strings.HasSuffix(name, "asblob"):
		default:
			c.v.notIdempotent(fmt.Sprintf("unknown function %s() in a write may be non-deterministic", t[i].Text))
		}
	}
}

// freshKey: in a DELETE, t[i] starts now(), currentTimeUUID() or uuid() as the whole
// value of an equality (c = now()) or of an element subscript (m[now()]). Each run
// deletes a row, partition or map entry keyed by an id the server has just made (a new
// time UUID, or a random one) that no writer holds, so running it again changes nothing
// a read can see. Not a range (c <= now() deletes more on a later run), not the other
// clock functions (a writer may hold the current timestamp or date), not in a write.
func freshKey(t []cqltext.Token, i int) bool {
	if t[i].Kind != cqltext.Ident || (t[i].Lower != "now" && t[i].Lower != "currenttimeuuid" && t[i].Lower != "uuid") ||
		i < 2 || i+2 >= len(t) || !t[i+2].IsPunct(")") {
		return false
	}
	next := func(j int) bool { return j >= len(t) || t[j].Is("and") || t[j].Is("if") || t[j].Is("using") }
	switch {
	case t[i-1].IsPunct("="):
		return (t[i-2].Kind == cqltext.Ident || t[i-2].Kind == cqltext.QIdent) && next(i+3)
	case t[i-1].IsPunct("["):
		return i+3 < len(t) && t[i+3].IsPunct("]")
	}
	return false
}

// deleteShape is what the WHERE clause of a DELETE restricts: the columns it sets
// equal to one value, whether it holds a slice (<, <=, >, >=, single- or multi-column),
// and whether it holds anything else (IN, CONTAINS, a multi-column equality).
type deleteShape struct {
	ks, table   string
	eq          map[string]bool
	slice, more bool
}

func deleteShapeOf(t []cqltext.Token) *deleteShape {
	d := &deleteShape{eq: map[string]bool{}}
	if from := cqltext.IndexKeyword(t, "from", 0); from >= 0 {
		d.ks, d.table = cqltext.TableName(t, from+1)
	}
	where := cqltext.IndexKeyword(t, "where", 0)
	if where < 0 {
		d.more = true
		return d
	}
	end := len(t)
	if i := cqltext.IndexKeyword(t, "if", where); i >= 0 {
		end = i
	}
	isSlice := func(x cqltext.Token) bool {
		return x.IsPunct(">") || x.IsPunct(">=") || x.IsPunct("<") || x.IsPunct("<=")
	}
	for _, e := range cqltext.SplitTopFunc(t[where+1:end], func(x cqltext.Token) bool { return x.Is("and") }) {
		switch {
		case len(e) >= 3 && (e[0].Kind == cqltext.Ident || e[0].Kind == cqltext.QIdent) && e[1].IsPunct("="):
			d.eq[cqltext.IdentName(e[0])] = true
		case slices.ContainsFunc(e, isSlice):
			d.slice = true
		default:
			d.more = true
		}
	}
	return d
}

// freshEquality judges `col = fn()` (now(), currentTimeUUID(), uuid()) in a DELETE's
// WHERE clause. The call names a key no one holds only if the server evaluates it once.
// Cassandra 4.1 and 5.0 evaluate a clustering equality once per bound when the DELETE
// is a range — a slice on a later clustering column, or a prefix of them
// (ModificationStatement.createSlices binds the START and the END bound apart, each
// running FunctionCall.bindAndGet): `c0 = uuid() AND c1 > ?` deletes every row whose
// c0 lies between two random values, a different slice each run. Once, proved: the
// column is a partition key column (buildPartitionKeyNames), or every clustering column
// is restricted by equality and nothing is a slice (createClustering).
func (c *classifier) freshEquality(d *deleteShape, col, fn string) {
	role := c.role(d.ks, d.table, col)
	if role == RolePartitionKey {
		return
	}
	clustering, known := c.clustering(d.ks, d.table)
	allEq := known && len(clustering) > 0 && !slices.ContainsFunc(clustering, func(k string) bool { return !d.eq[k] })
	if role == RoleClustering && allEq && !d.slice && !d.more {
		return
	}
	if d.slice || role == RoleClustering && known && !allEq && !d.more {
		h := fmt.Sprintf("%s = %s() in a range DELETE: Cassandra 4.1 and 5.0 evaluate %s() once per bound, so it deletes the rows whose %s lies between two values it does not name (even when run once)", col, fn, fn, col)
		if role == RoleUnknown {
			h += fmt.Sprintf("; unless %s is a partition key column", col)
		}
		c.v.hazard(h)
		c.v.notIdempotent(h)
		return
	}
	c.v.notIdempotent(fmt.Sprintf("%s = %s() in a DELETE: evaluated once only when %s is a partition key column or every clustering column is set by equality, which the schema does not say", col, fn, col))
}

// clustering asks a ClusteringSchema for a table's clustering columns.
func (c *classifier) clustering(ks, table string) ([]string, bool) {
	cs, ok := c.schema.(ClusteringSchema)
	if !ok || table == "" {
		return nil, false
	}
	if ks == "" {
		ks = c.ks
	}
	if !slices.Contains(c.v.consulted, ks) {
		c.v.consulted = append(c.v.consulted, ks)
	}
	return cs.ClusteringColumns(ks, table)
}

// hasNowLiteral: s is 'now' (any case, spaces around), or a JSON document that holds
// the string "now" (INSERT … JSON).
//
// Cassandra decodes JSON with Jackson, which reads a collection given as a string holding
// JSON, map keys by the key type, and ignores text after the first value: "now" counts as
// a value, a key, inside a string holding JSON, and in any text that looks like JSON but
// does not decode in Go.
func hasNowLiteral(s string) bool {
	if strings.EqualFold(strings.TrimSpace(s), "now") {
		return true
	}
	if !strings.Contains(strings.ToLower(s), "now") && !strings.Contains(s, `\u`) {
		return false
	}
	var doc any
	if json.Unmarshal([]byte(s), &doc) != nil {
		t := strings.TrimSpace(s)
		looksJSON := t != "" && strings.IndexByte(`{["`, t[0]) >= 0
		return looksJSON && (strings.Contains(strings.ToLower(s), "now") || strings.Contains(s, `\u`))
	}
	return jsonHasNow(doc, 0)
}

// jsonHasNow: some string, value or key, in the decoded JSON value is "now" (or holds
// JSON that has one).
func jsonHasNow(v any, depth int) bool {
	if depth > 32 {
		return true // deeper than any real document: do not judge
	}
	isNow := func(x string) bool {
		if strings.EqualFold(strings.TrimSpace(x), "now") {
			return true
		}
		var inner any
		return strings.Contains(strings.ToLower(x), "now") && json.Unmarshal([]byte(x), &inner) == nil && jsonHasNow(inner, depth+1)
	}
	switch x := v.(type) {
	case string:
		return isNow(x)
	case []any:
		for _, e := range x {
			if jsonHasNow(e, depth+1) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if isNow(k) || jsonHasNow(e, depth+1) {
				return true
			}
		}
	}
	return false
}

var syntaxBeforeParen = map[string]bool{
	"values": true, "in": true, "insert": true, "into": true, "and": true, "where": true,
	"set": true, "contains": true, "key": true, "exists": true, "not": true,
	"if": true, "using": true, "json": true, "default": true, "unset": true, "null": true,
	"frozen": true, "list": true, "map": true, "tuple": true, "from": true,
}

var nonDeterministic = map[string]bool{
	"now": true, "uuid": true, "currenttimestamp": true, "currentdate": true, "currenttime": true,
	"currenttimeuuid": true, "random": true,
}

var deterministic = map[string]bool{
	"token": true, "totimestamp": true, "tounixtimestamp": true, "todate": true, "dateof": true,
	"unixtimestampof": true, "mintimeuuid": true, "maxtimeuuid": true, "fromjson": true,
	"tojson": true, "cast": true, "writetime": true, "maxwritetime": true, "ttl": true,
	"abs": true, "exp": true, "log": true, "log10": true, "round": true, "floor": true,
	"ceil": true, "mask_null": true, "mask_default": true, "mask_replace": true,
	"mask_inner": true, "mask_outer": true, "mask_hash": true, "collection_count": true,
	"collection_min": true, "collection_max": true, "collection_sum": true,
	"collection_avg": true, "map_keys": true, "map_values": true,
}
