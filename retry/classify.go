package retry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/cqltext"
)

// Kind is what a statement does.
type Kind int

// Statement kinds.
const (
	KindUnknown Kind = iota
	KindRead         // SELECT
	KindWrite        // INSERT, UPDATE, DELETE
	KindBatch        // BEGIN … APPLY BATCH
	KindSchema       // CREATE, ALTER, DROP
	KindOther        // TRUNCATE, USE, GRANT, …
)

func (k Kind) String() string {
	switch k {
	case KindRead:
		return "read"
	case KindWrite:
		return "write"
	case KindBatch:
		return "batch"
	case KindSchema:
		return "schema"
	case KindOther:
		return "other"
	}
	return "unknown"
}

// Verdict is Classify's judgement of one CQL text.
type Verdict struct {
	// Idempotent: executing the text twice with the same bound values and the same
	// pinned write timestamp has the effect of executing it once.
	Idempotent bool
	// Reasons say why it is not idempotent (empty when it is), one line each, naming the
	// clause: `counter or list "n = n + ?"`, `lightweight transaction (IF NOT EXISTS)`.
	Reasons []string
	// Notes are facts that do not decide idempotence but matter to a caller, such as a
	// literal USING TIMESTAMP.
	Notes []string
	// Kind is what the text does; for several statements, KindBatch.
	Kind Kind
	// Writes is true when the text changes data: then its write timestamp must be pinned
	// before the first attempt, whatever the verdict (the executor does this).
	Writes bool
	// Conditional is true for lightweight transactions (IF …): they are never retried.
	Conditional bool
	// Statements counts the statements read (a batch counts its inner statements).
	Statements int

	// multi: the text may write more than one mutation (a batch of several statements,
	// an IN list in a write's WHERE): Cassandra sends mutations one by one, so an error
	// about a later one does not prove the earlier ones were not applied. logged: a
	// logged batch (all its Unavailable checks run before the batch log is written).
	multi, logged bool

	// binds are the bind markers whose value decides idempotence: a value bound whole
	// to a column that is (or, without schema, may be) a non-frozen list. See forValues.
	binds []bindCheck
	// keyspaces the verdict consulted schema metadata for (for cache validation).
	consulted []string
}

// bindCheck is one bind marker whose bound value can make a statement non-idempotent.
type bindCheck struct {
	index  int    // position among the statement's bind markers, from 0
	column string // the column the value is assigned to ("" for INSERT JSON)
	known  bool   // schema says the column is a non-frozen list (else: unknown type)
	// json: the marker is INSERT JSON's document; listCols are the table's non-frozen
	// list columns (nil when the schema is unknown: any non-empty array counts).
	json     bool
	listCols map[string]bool
}

// ColumnKind is what schema metadata says about a column, to refine Classify.
type ColumnKind int

// Column kinds.
const (
	ColumnUnknown ColumnKind = iota
	ColumnScalar
	ColumnCounter
	ColumnList
	ColumnSet
	ColumnMap
)

// Schema answers column kinds for ClassifyWithSchema. Table is as written in the
// statement (keyspace may be empty when the statement does not name one).
type Schema interface {
	ColumnKind(keyspace, table, column string) ColumnKind
}

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
// idempotent iff every statement in it is. Text that is not CQL is not idempotent.
// Classify never panics.
func Classify(cql string) Verdict { return ClassifyWithSchema(cql, nil) }

// ClassifyWithSchema is Classify with column metadata: `s = s + ?` on a set or map,
// `l = l - ?` on a list and `DELETE m[?]` on a map are idempotent; on a counter or list
// append they are not. Without metadata (schema nil or ColumnUnknown) Classify is
// conservative.
func ClassifyWithSchema(cql string, schema Schema) Verdict {
	return classifyIn("", cql, schema)
}

// classifyIn is ClassifyWithSchema where statements that do not name a keyspace are in
// keyspace ks (the session's or the query's).
func classifyIn(ks, cql string, schema Schema) Verdict {
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
	c := classifier{v: &v, schema: schema, ks: ks, markers: map[int]int{}}
	for _, tok := range toks {
		if tok.Kind == cqltext.Bind {
			c.markers[tok.Pos] = len(c.markers)
		}
	}
	for _, st := range stmts {
		c.statement(st)
	}
	if len(stmts) > 1 && v.Kind != KindBatch {
		v.Kind = KindBatch
	}
	if v.Statements > 1 {
		v.multi = true
	}
	return v
}

func (v *Verdict) notIdempotent(reason string) {
	v.Idempotent = false
	for _, r := range v.Reasons {
		if r == reason {
			return
		}
	}
	v.Reasons = append(v.Reasons, reason)
}

func (v *Verdict) note(n string) {
	for _, x := range v.Notes {
		if x == n {
			return
		}
	}
	v.Notes = append(v.Notes, n)
}

type classifier struct {
	v       *Verdict
	schema  Schema
	ks      string      // keyspace of statements that name none
	markers map[int]int // bind marker token position → marker index
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

// wholeValue judges a value assigned whole to column col (INSERT VALUES, SET col = …).
// A non-frozen list is not idempotent even with a pinned timestamp: Cassandra keys each
// element by a TimeUUID from the server's clock, so a repeat appends a second copy.
func (c *classifier) wholeValue(ks, table, col string, val []cqltext.Token) {
	val = stripTypeHints(val)
	if len(val) == 0 {
		return
	}
	kind := c.kind(ks, table, col)
	if kind != ColumnList && kind != ColumnUnknown {
		return
	}
	switch {
	case len(val) == 1 && val[0].Kind == cqltext.Bind:
		c.v.binds = append(c.v.binds, bindCheck{index: c.markers[val[0].Pos], column: col, known: kind == ColumnList})
	case len(val) == 2 && val[0].IsPunct("[") && val[1].IsPunct("]"), len(val) == 1 && val[0].Is("null"):
		// An empty list or null writes no element: repeatable.
	case val[0].IsPunct("["):
		if kind == ColumnList {
			c.v.notIdempotent(fmt.Sprintf("non-frozen list assignment %q (each repeat appends another copy)", col+" = "+cqltext.Clause(val)))
		} else {
			c.v.notIdempotent(fmt.Sprintf("list literal assigned to %q, which may be a non-frozen list (a repeat appends another copy; schema metadata can tell)", col))
		}
	case kind == ColumnList:
		// Any other form (a function such as fromJson, …) that yields a list.
		c.v.notIdempotent(fmt.Sprintf("non-frozen list assignment %q (each repeat appends another copy)", col+" = "+cqltext.Clause(val)))
	case callsListFunction(val):
		c.v.notIdempotent(fmt.Sprintf("function result assigned to %q, which may be a non-frozen list (a repeat appends another copy; schema metadata can tell)", col))
	}
}

// stripTypeHints drops leading type hints: `(list<int>)?` is the marker `?`.
func stripTypeHints(val []cqltext.Token) []cqltext.Token {
	for len(val) > 2 && val[0].IsPunct("(") {
		inner := cqltext.InParens(val)
		if len(inner) == 0 || len(inner)+2 >= len(val) || inner[0].Kind != cqltext.Ident {
			return val
		}
		val = val[len(inner)+2:]
	}
	return val
}

// callsListFunction reports a call of a native function that can return a list
// (fromJson, map_values). Unknown and user-defined functions are judged elsewhere.
func callsListFunction(val []cqltext.Token) bool {
	for i := 0; i+1 < len(val); i++ {
		if (val[i].Is("fromjson") || val[i].Is("map_values")) && val[i+1].IsPunct("(") {
			return true
		}
	}
	return false
}

func (c *classifier) setKind(k Kind) {
	if c.v.Kind == KindUnknown {
		c.v.Kind = k
	}
}

func (c *classifier) statement(t []cqltext.Token) {
	c.v.Statements++
	first := t[0]
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
// INSERT, from the token after the table in an UPDATE, from WHERE in a DELETE).
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
		if i := cqltext.IndexKeyword(t, "where", 0); i >= 0 {
			start = i
		}
	}
	if start < len(t) {
		c.functions(t[start:])
	}
}

// functions flags server-side non-deterministic (or unknown) function calls.
func (c *classifier) functions(t []cqltext.Token) {
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
		switch {
		case nonDeterministic[name]:
			c.v.notIdempotent(fmt.Sprintf("server-side non-deterministic function %s() in a write", t[i].Text))
		case deterministic[name] || strings.HasPrefix(name, "blobas") || strings.HasSuffix(name, "asblob"):
		default:
			c.v.notIdempotent(fmt.Sprintf("unknown function %s() in a write may be non-deterministic", t[i].Text))
		}
	}
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

// update classifies UPDATE t [USING …] SET assignments WHERE … [IF …].
func (c *classifier) update(t []cqltext.Token) {
	c.write(t)
	ks, table := cqltext.TableName(t, 1)
	set := cqltext.IndexKeyword(t, "set", 0)
	if set < 0 {
		c.v.notIdempotent("UPDATE without SET")
		return
	}
	where := cqltext.IndexKeyword(t, "where", set)
	if where < 0 {
		where = len(t)
	}
	for _, a := range cqltext.SplitTop(t[set+1:where], ",") {
		c.assignment(ks, table, a)
	}
}

// assignment classifies one SET assignment.
func (c *classifier) assignment(ks, table string, a []cqltext.Token) {
	eq := -1
	for i, tok := range a {
		if tok.IsPunct("=") {
			eq = i
			break
		}
	}
	if eq < 1 || eq+1 >= len(a) {
		return
	}
	col := cqltext.IdentName(a[0])
	if eq > 1 {
		if a[1].IsPunct("[") {
			c.elementSet(ks, table, col, a[:eq])
		}
		// c.field = v: a UDT field, one cell.
		return
	}
	rhs := a[eq+1:]
	// c = c + x, c = c - x, c = x + c
	selfLeft := len(rhs) >= 3 && cqltext.IdentName(rhs[0]) == col && (rhs[1].IsPunct("+") || rhs[1].IsPunct("-"))
	selfRight := len(rhs) >= 3 && cqltext.IdentName(rhs[len(rhs)-1]) == col && rhs[len(rhs)-2].IsPunct("+")
	if !selfLeft && !selfRight {
		c.wholeValue(ks, table, col, rhs)
		return
	}
	kind := c.kind(ks, table, col)
	expr := cqltext.Clause(a)
	if selfRight {
		// x + c: list prepend (counters and sets do not take this form idempotently).
		if kind == ColumnSet || kind == ColumnMap {
			return
		}
		c.v.notIdempotent(fmt.Sprintf("list prepend %q", expr))
		return
	}
	operand := rhs[2:]
	minus := rhs[1].IsPunct("-")
	switch kind {
	case ColumnCounter:
		c.v.notIdempotent(fmt.Sprintf("counter update %q", expr))
		return
	case ColumnSet, ColumnMap:
		return
	case ColumnList:
		if minus {
			// Removal tombstones the occurrences it finds when it runs, each at the
			// statement's timestamp: a repeat after another writer added the value (with a
			// timestamp not newer than ours) removes that one too.
			c.v.notIdempotent(fmt.Sprintf("list element removal %q (a repeat also removes what another writer added since)", expr))
			return
		}
		c.v.notIdempotent(fmt.Sprintf("list append %q", expr))
		return
	}
	// No metadata: judge by the operand's literal shape.
	switch {
	case len(operand) > 0 && operand[0].IsPunct("{"):
		return // set or map literal: adding or removing elements is repeatable
	case len(operand) > 0 && operand[0].IsPunct("["):
		if minus {
			c.v.notIdempotent(fmt.Sprintf("list element removal %q (a repeat also removes what another writer added since; schema metadata can tell a set)", expr))
			return
		}
		c.v.notIdempotent(fmt.Sprintf("list append %q", expr))
	case len(operand) > 0 && operand[0].Kind == cqltext.Number:
		c.v.notIdempotent(fmt.Sprintf("counter update %q", expr))
	default:
		c.v.notIdempotent(fmt.Sprintf("counter or list %q (a set or map would be idempotent: schema metadata can tell)", expr))
	}
}

// delete classifies DELETE [selection] FROM t … [IF …].
func (c *classifier) delete(t []cqltext.Token) {
	c.write(t)
	from := cqltext.IndexKeyword(t, "from", 0)
	if from < 0 {
		c.v.notIdempotent("DELETE without FROM")
		return
	}
	ks, table := cqltext.TableName(t, from+1)
	for _, sel := range cqltext.SplitTop(t[1:from], ",") {
		if len(sel) >= 2 && sel[1].IsPunct("[") {
			col := cqltext.IdentName(sel[0])
			kind := c.kind(ks, table, col)
			if kind == ColumnUnknown && stringSubscript(sel) {
				kind = ColumnMap // a list index is an int: a text key means a map
			}
			switch kind {
			case ColumnMap, ColumnSet:
			case ColumnList:
				c.v.notIdempotent(fmt.Sprintf("positional list delete %q", cqltext.Clause(sel)))
			default:
				c.v.notIdempotent(fmt.Sprintf("element delete %q could be a positional list delete (a map would be idempotent: schema metadata can tell)", cqltext.Clause(sel)))
			}
		}
	}
}

// stringSubscript reports whether sel is `c['literal']`: a map key, never a list index.
func stringSubscript(sel []cqltext.Token) bool {
	return len(sel) == 4 && sel[1].IsPunct("[") && sel[2].Kind == cqltext.String && sel[3].IsPunct("]")
}

// elementSet judges `c[k] = v`. On a map it sets one entry: repeatable. On a list it
// sets the element at position k as found when it runs: a repeat after another writer
// prepended or removed an element sets a different element.
func (c *classifier) elementSet(ks, table, col string, lhs []cqltext.Token) {
	kind := c.kind(ks, table, col)
	if kind == ColumnUnknown && stringSubscript(lhs) {
		kind = ColumnMap
	}
	switch kind {
	case ColumnMap:
	case ColumnList:
		c.v.notIdempotent(fmt.Sprintf("positional list set %q (a repeat after another write may hit another element)", cqltext.Clause(lhs)))
	default:
		c.v.notIdempotent(fmt.Sprintf("element set %q could be a positional list set (a map would be idempotent: schema metadata can tell)", cqltext.Clause(lhs)))
	}
}

// insert judges the values of INSERT INTO t (cols) VALUES (vals) and INSERT INTO t JSON.
func (c *classifier) insert(t []cqltext.Token) {
	into := cqltext.IndexKeyword(t, "into", 0)
	if into < 0 {
		return
	}
	ks, table := cqltext.TableName(t, into+1)
	if j := cqltext.IndexKeyword(t, "json", into); j >= 0 && j+1 < len(t) {
		c.insertJSON(ks, table, t[j+1])
		return
	}
	open := -1
	for i := into + 1; i < len(t); i++ {
		if t[i].IsPunct("(") {
			open = i
			break
		}
	}
	vals := cqltext.IndexKeyword(t, "values", 0)
	if open < 0 || vals < 0 || vals+1 >= len(t) || !t[vals+1].IsPunct("(") {
		return
	}
	colToks := cqltext.InParens(t[open:])
	valToks := cqltext.InParens(t[vals+1:])
	cols := cqltext.SplitTop(colToks, ",")
	values := cqltext.SplitTop(valToks, ",")
	for i := range min(len(cols), len(values)) {
		if len(cols[i]) == 1 {
			c.wholeValue(ks, table, cqltext.IdentName(cols[i][0]), values[i])
		}
	}
}

// insertJSON judges INSERT … JSON doc: a non-empty array for a non-frozen list column
// is a list assignment (not idempotent). Without schema any non-empty array counts.
func (c *classifier) insertJSON(ks, table string, doc cqltext.Token) {
	var listCols map[string]bool
	if c.schema != nil && table != "" {
		if ks == "" {
			ks = c.ks
		}
		if ls, ok := c.schema.(listColumnser); ok {
			if cols, ok := ls.listColumns(ks, table); ok {
				c.v.consulted = append(c.v.consulted, ks)
				if len(cols) == 0 {
					return // no non-frozen list: every document is repeatable
				}
				listCols = cols
			}
		}
	}
	switch doc.Kind {
	case cqltext.Bind:
		c.v.binds = append(c.v.binds, bindCheck{index: c.markers[doc.Pos], json: true, listCols: listCols})
	case cqltext.String:
		if col, ok := jsonListAssignment(doc.Text, listCols); ok {
			c.v.notIdempotent(fmt.Sprintf("INSERT JSON assigns a list to %q, which is (or may be) a non-frozen list (a repeat appends another copy)", col))
		}
	}
}

// listColumnser is implemented by schemas that can list a table's non-frozen list
// columns (SessionSchema); ok is false when the table is unknown.
type listColumnser interface {
	listColumns(keyspace, table string) (map[string]bool, bool)
}

// jsonListAssignment reports the first key of the JSON object doc whose value is a
// non-empty array and that names a non-frozen list column (any key when listCols is
// nil). A document that is not a JSON object counts as one (conservative).
func jsonListAssignment(doc string, listCols map[string]bool) (string, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		return "?", true
	}
	for k, raw := range obj {
		name := k
		if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
			name = strings.ReplaceAll(k[1:len(k)-1], `""`, `"`) // case-sensitive key
		} else {
			name = strings.ToLower(k)
		}
		if listCols != nil && !listCols[name] {
			continue
		}
		if jsonListValue(raw, listCols != nil) {
			return name, true
		}
	}
	return "", false
}

// jsonListValue reports whether a JSON value can write list elements: a non-empty array,
// or a string (Cassandra's fromJson also takes a collection as a string holding the
// array). Without schema (known false) only a string that holds a non-empty array
// counts; for a known list column any string but "" and "[]" does.
func jsonListValue(raw json.RawMessage, known bool) bool {
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		return len(arr) > 0
	}
	var str string
	if json.Unmarshal(raw, &str) != nil {
		return false // a number, an object, null, true/false: not a list
	}
	if json.Unmarshal([]byte(str), &arr) == nil {
		return len(arr) > 0
	}
	return known && strings.TrimSpace(str) != ""
}
