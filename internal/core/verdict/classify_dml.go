package verdict

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

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
		c.v.binds = append(c.v.binds, bindCheck{index: c.markers[val[0].Pos], column: col, known: kind == ColumnList,
			fp: c.fp, role: c.role(ks, table, col)})
	case len(val) == 2 && val[0].IsPunct("[") && val[1].IsPunct("]"), len(val) == 1 && val[0].Is("null"):
		// An empty list or null writes no element: repeatable.
	case val[0].IsPunct("["):
		if kind == ColumnList {
			c.listReason(ks, table, col, fmt.Sprintf("non-frozen list assignment %q (each repeat appends another copy)", col+" = "+cqltext.Clause(val)))
		} else {
			c.listReason(ks, table, col, fmt.Sprintf("list literal assigned to %q, which may be a non-frozen list (a repeat appends another copy; schema metadata can tell)", col))
		}
	case kind == ColumnList:
		// Any other form (a function such as fromJson, …) that yields a list.
		c.listReason(ks, table, col, fmt.Sprintf("non-frozen list assignment %q (each repeat appends another copy)", col+" = "+cqltext.Clause(val)))
	case callsListFunction(val):
		c.listReason(ks, table, col, fmt.Sprintf("function result assigned to %q, which may be a non-frozen list (a repeat appends another copy; schema metadata can tell)", col))
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
		c.listReason(ks, table, col, fmt.Sprintf("list prepend %q", expr))
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
			c.listReason(ks, table, col, fmt.Sprintf("list element removal %q (a repeat also removes what another writer added since)", expr))
			return
		}
		c.listReason(ks, table, col, fmt.Sprintf("list append %q", expr))
		return
	}
	// No metadata: judge by the operand's literal shape.
	switch {
	case len(operand) > 0 && operand[0].IsPunct("{"):
		return // set or map literal: adding or removing elements is repeatable
	case len(operand) > 0 && operand[0].IsPunct("["):
		if minus {
			c.listReason(ks, table, col, fmt.Sprintf("list element removal %q (a repeat also removes what another writer added since; schema metadata can tell a set)", expr))
			return
		}
		c.listReason(ks, table, col, fmt.Sprintf("list append %q", expr))
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
	var kind func(string) ColumnKind
	if c.schema != nil && table != "" {
		if ks == "" {
			ks = c.ks
		}
		c.v.consulted = append(c.v.consulted, ks)
		if ls, ok := c.schema.(ListColumner); ok {
			if cols, ok := ls.ListColumns(ks, table); ok {
				listCols = cols // empty: no list, only a "now" can make a document not repeatable
			}
		}
		if listCols == nil {
			// A schema that answers column by column: each key of the document is
			// judged by its column's kind.
			schema := c.schema
			kind = func(col string) ColumnKind { return schema.ColumnKind(ks, table, col) }
		}
	}
	switch doc.Kind {
	case cqltext.Bind:
		// The document's columns are known only with its value: ForValues fills the
		// statement's footprint from it (jsonListReasons).
		b := bindCheck{index: c.markers[doc.Pos], json: true, listCols: listCols, kind: kind, fp: c.fp}
		if c.fp >= 0 {
			b.look = &classifier{schema: c.schema, ks: c.ks}
		}
		c.v.binds = append(c.v.binds, b)
	case cqltext.String:
		// Every list column its own reason: a DELETE of the same batch may shadow one
		// and not another.
		for _, col := range jsonListAssignments(doc.Text, listCols, kind) {
			c.listReason(ks, table, col, fmt.Sprintf("INSERT JSON assigns a list to %q, which is (or may be) a non-frozen list (a repeat appends another copy)", col))
		}
	}
}

// ListColumner is implemented by schemas that can list a table's non-frozen list
// columns (a driver's session metadata); ok is false when the table is unknown.
type ListColumner interface {
	ListColumns(keyspace, table string) (map[string]bool, bool)
}

// jsonListAssignments reports every key of the JSON object doc whose value is a
// non-empty array and that names a non-frozen list column: one of listCols, else one
// kind calls a list or does not know, else any key; sorted. A document that is not a
// JSON object counts as one ("?" alone: conservative).
func jsonListAssignments(doc string, listCols map[string]bool, kind func(string) ColumnKind) []string {
	obj, ok := jsonColumns(doc)
	if !ok {
		return []string{"?"}
	}
	var out []string
	for name, raw := range obj {
		known := listCols != nil
		switch {
		case listCols != nil:
			if !listCols[name] {
				continue
			}
		case kind != nil:
			switch kind(name) {
			case ColumnList:
				known = true
			case ColumnUnknown:
			default:
				continue // a scalar (frozen collections included), a set or a map
			}
		}
		if jsonListValue(raw, known) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// jsonColumns reads an INSERT JSON document as Cassandra names its columns: a key in
// double quotes is the case-sensitive name inside them, any other key lower-cased
// (JsonUtils.handleCaseSensitivity). ok is false for a document that is not a JSON
// object, and for one whose names Cassandra resolves by key order or otherwise than Go
// would: two keys that name one column ignoring case ("k" and "K", `"\"K\""` and "K" —
// Cassandra's outcome depends on their order), a key that is not ASCII (Java and Go
// lower-case some letters differently), a quoted key holding a quote.
func jsonColumns(doc string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(doc), &obj) != nil {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(obj))
	folded := make(map[string]bool, len(obj))
	for k, raw := range obj {
		name := k
		if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
			name = k[1 : len(k)-1] // case-sensitive key
			if strings.Contains(name, `"`) {
				return nil, false
			}
		} else {
			for i := 0; i < len(k); i++ {
				if k[i] >= 0x80 {
					return nil, false
				}
			}
			name = strings.ToLower(k)
		}
		f := strings.ToLower(name)
		if folded[f] {
			return nil, false
		}
		folded[f] = true
		out[name] = raw
	}
	return out, true
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
