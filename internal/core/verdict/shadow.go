package verdict

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// Shadowing: a list write that another statement of the same batch deletes.
//
// Every statement of a batch is written at the batch's one timestamp T, and the
// statements on one partition apply together as one mutation. A DELETE at T shadows every
// cell of its rows (or columns) whose timestamp is not above T — a tie goes to the
// deletion — so a list append, prepend, removal or whole assignment at T under such a
// DELETE leaves nothing a read can see, however often the batch runs: each repeat's
// elements die under the same deletion. Such a write is repeatable inside its batch.
//
// What makes the rule hold, and what the code checks:
//   - the DELETE's timestamp is not below the write's: neither has its own USING
//     TIMESTAMP (both write at the batch's T), or both have one (literals, or signed
//     integers bound), or one has and the execution's T is known (Verdict.AtTimestamp;
//     the Policy pins T before it judges). Neither has an IF (a condition decides per
//     execution);
//   - both name the same table, and every restriction of the DELETE (equalities, and
//     slices of a clustering column; no IN) is met by the write's row: a value known
//     equal (the same literal text, bound values of the same plain Go type that are
//     equal, or literal and bound where the key type says they mean the same), or one
//     inside the slice in the column type's order (integers, text, dates);
//   - the DELETE deletes the column: a whole-column selection naming it, or whole rows
//     when the schema says the column is a regular one (a static column only when the
//     DELETE restricts nothing but the partition key);
//   - the write is an append, prepend, removal or whole assignment. Positional list
//     operations (`l[i] = v`, `DELETE l[i]`) stay not repeatable: a repeat finds the list
//     the first run deleted and fails with an index out of bounds.

// ColumnRole is where a column sits in its table's primary key.
type ColumnRole int

// Column roles.
const (
	RoleUnknown ColumnRole = iota
	RolePartitionKey
	RoleClustering
	RoleRegular
	RoleStatic
)

// RoleSchema is implemented by schemas that know each column's role (a driver's session
// metadata). Without it a DELETE of whole rows shadows nothing; a DELETE naming the
// column still does.
type RoleSchema interface {
	ColumnRole(keyspace, table, column string) ColumnRole
}

// ClusteringSchema is implemented by schemas that know a table's clustering columns, in
// order (a driver's session metadata); ok false when the table is unknown. With it (and
// RoleSchema) a DELETE keyed by now() or uuid() on a clustering column is known to name
// one row.
type ClusteringSchema interface {
	ClusteringColumns(keyspace, table string) (columns []string, ok bool)
}

// KeyType is the type of a key column, as far as telling a literal from a bound value
// needs it.
type KeyType int

// Key types. KeyOther: any other type, or unknown.
const (
	KeyOther   KeyType = iota
	KeyText            // text, varchar, ascii
	KeyInteger         // tinyint, smallint, int, bigint
	KeyDouble          // double
	KeyFloat           // float
	KeyBoolean         // boolean
	KeyUUID            // uuid, timeuuid
	KeyVarint          // varint: an integer of any size (also bound as *big.Int)
	KeyDate            // date: a day, as 'yyyy-mm-dd' or a time.Time at midnight UTC
	KeyDecimal         // decimal: an unscaled integer and a scale (bound through a DecimalInspector)
)

// DecimalInspector is implemented by ValueInspectors that read a driver's decimal value:
// the unscaled integer and the scale it marshals (gocql: inf.Dec). Without it a bound
// decimal key is compared with nothing.
type DecimalInspector interface {
	Decimal(v any) (unscaled *big.Int, scale int32, ok bool)
}

// KeyTypeSchema is implemented by schemas that know column types. With it, a key given
// as a literal in one statement and bound in another (`k = 'a'`, `k = ?` bound to "a")
// can be found equal; without it only the same literal text or equal bound values are.
type KeyTypeSchema interface {
	KeyType(keyspace, table, column string) KeyType
}

// footprint is where one write statement writes, for shadowing.
type footprint struct {
	ks, table string
	key       []restriction // WHERE col = v … of UPDATE/DELETE; the column values of INSERT
	del       bool          // a DELETE of whole rows or whole columns
	cols      []string      // the DELETE's whole columns (nil: whole rows)
	partition bool          // the DELETE restricts partition key columns only
	// ownTS: the statement has its own USING TIMESTAMP: the literal ts, or the value
	// bound to marker tsMarker (≥ 0). Without one it writes at the execution's T.
	ownTS    bool
	ts       int64
	tsMarker int
}

// tsOf is the timestamp the statement writes at, executed with values at T (at, 0
// when not known): its own USING TIMESTAMP, else T; ok false when not known.
func (f footprint) tsOf(values []any, at int64) (int64, bool) {
	switch {
	case !f.ownTS:
		return at, at != 0 && at != math.MinInt64
	case f.tsMarker < 0:
		return f.ts, true
	case f.tsMarker >= len(values):
		return 0, false
	}
	// Only the plain Go integers: gocql marshals them to the bigint USING TIMESTAMP
	// takes by value (a named type may marshal itself otherwise; unsigned ones wrap).
	var ts int64
	switch x := values[f.tsMarker].(type) {
	case int64:
		ts = x
	case int:
		ts = int64(x)
	default:
		return 0, false
	}
	return ts, ts != math.MinInt64
}

// notBefore reports whether d writes at a timestamp not below w's: a tie goes to the
// deletion.
func notBefore(d footprint, dv []any, w footprint, wv []any, at int64) bool {
	if !d.ownTS && !w.ownTS {
		return true // both at the execution's T, whatever it is
	}
	dt, ok := d.tsOf(dv, at)
	if !ok {
		return false
	}
	wt, ok := w.tsOf(wv, at)
	return ok && dt >= wt
}

// restriction is `col = value` (or a DELETE's `col > value`, op): a literal or the bind
// marker at index marker; role is where col sits in the table. lit is
// the literal's value in a form two sources share only where the column's type makes
// them mean the same: "s:text", "i:integer", "f:bits" (double), "b:bool", "u:uuid",
// "d:days" (date), else a form private to the source ("cql:" tokens, "json:" raw). A float key compares
// bound to bound only: Java's and Go's rounding of a literal to 32 bits are not shown
// to agree.
type restriction struct {
	col    string
	typ    KeyType
	lit    string
	marker int    // -1 for a literal
	op     string // a DELETE's slice (">", ">=", "<", "<="); "" for equality
	role   ColumnRole
}

// shadowable is a reason given for a list write that a DELETE of the same batch may
// shadow: the write's footprint (index into Verdict.fps) and column.
type shadowable struct {
	fp     int
	col    string
	role   ColumnRole
	reason string
}

// footprintOf reads the footprint of an INSERT, UPDATE or DELETE; ok is false when
// shadowing cannot be judged for it (its own USING TIMESTAMP, an IF, a restriction other
// than an equality or a DELETE's slice). A bound INSERT JSON document has its key filled
// in with its value (Verdict.jsonListReasons).
func (c *classifier) footprintOf(t []cqltext.Token) (footprint, bool) {
	fp := footprint{tsMarker: -1}
	for i, tok := range t {
		if tok.Is("if") && !(i > 0 && t[i-1].IsPunct(".")) {
			return fp, false
		}
		if tok.Is("timestamp") && i > 0 && (t[i-1].Is("using") || t[i-1].Is("and")) {
			if c.batchTS || fp.ownTS || !c.ownTimestamp(t[i+1:], &fp) {
				return fp, false
			}
		}
	}
	switch {
	case t[0].Is("insert") && cqltext.IndexKeyword(t, "json", 0) >= 0:
		into := cqltext.IndexKeyword(t, "into", 0)
		j := cqltext.IndexKeyword(t, "json", 0)
		if into < 0 || j+1 >= len(t) || (t[j+1].Kind != cqltext.String && t[j+1].Kind != cqltext.Bind) {
			return fp, false
		}
		fp.ks, fp.table = cqltext.TableName(t, into+1)
		if t[j+1].Kind == cqltext.Bind {
			// A bound document: its key comes with its value (Verdict.jsonListReasons).
			// Until then the key is empty, and an empty key is covered by nothing
			// (deletes needs every restriction of the DELETE in it).
			return fp, fp.table != ""
		}
		obj, ok := jsonColumns(t[j+1].Text)
		if !ok {
			return fp, false
		}
		fp.key = c.jsonKey(fp.ks, fp.table, obj)
	case t[0].Is("insert"):
		into := cqltext.IndexKeyword(t, "into", 0)
		vals := cqltext.IndexKeyword(t, "values", 0)
		if into < 0 || vals <= into+1 || vals+1 >= len(t) || !t[vals+1].IsPunct("(") {
			return fp, false
		}
		fp.ks, fp.table = cqltext.TableName(t, into+1)
		open := slices.IndexFunc(t[into+1:vals], func(x cqltext.Token) bool { return x.IsPunct("(") })
		if open < 0 {
			return fp, false
		}
		cols := cqltext.SplitTop(cqltext.InParens(t[into+1+open:]), ",")
		values := cqltext.SplitTop(cqltext.InParens(t[vals+1:]), ",")
		for i := range min(len(cols), len(values)) {
			if len(cols[i]) != 1 {
				continue
			}
			col := cqltext.IdentName(cols[i][0])
			r, ok := c.restrictionOf(fp.ks, fp.table, col, values[i])
			if !ok {
				r = restriction{col: col, marker: -1} // a value not judged: equal to nothing
			}
			fp.key = append(fp.key, r)
		}
	case t[0].Is("update"):
		fp.ks, fp.table = cqltext.TableName(t, 1)
		if !c.whereOf(t, &fp, false) {
			return fp, false
		}
	case t[0].Is("delete"):
		from := cqltext.IndexKeyword(t, "from", 0)
		if from < 0 {
			return fp, false
		}
		fp.ks, fp.table = cqltext.TableName(t, from+1)
		if !c.whereOf(t, &fp, true) {
			return fp, false
		}
		sel := cqltext.SplitTop(t[1:from], ",")
		fp.del = from == 1
		for _, s := range sel {
			if len(s) == 1 {
				fp.cols = append(fp.cols, cqltext.IdentName(s[0]))
				fp.del = true
			}
		}
		fp.partition = len(fp.key) > 0
		for _, r := range fp.key {
			if c.role(fp.ks, fp.table, r.col) != RolePartitionKey {
				fp.partition = false
			}
		}
	default:
		return fp, false
	}
	// fp.ks stays as written: an unqualified table matches only an unqualified one (the
	// default keyspace a caller passes may not be the one Cassandra uses).
	return fp, fp.table != "" && len(fp.key) > 0
}

// ownTimestamp reads the value of a USING TIMESTAMP into fp: an integer literal (a
// negative one lexed as - and the number, adjacent) or one bind marker, followed by
// nothing, AND, or the rest of the statement (SET, WHERE, VALUES, JSON).
func (c *classifier) ownTimestamp(t []cqltext.Token, fp *footprint) bool {
	n := 1
	switch {
	case len(t) >= 1 && t[0].Kind == cqltext.Bind:
		fp.tsMarker = c.markers[t[0].Pos]
	case len(t) >= 1 && t[0].Kind == cqltext.Number:
		v, err := strconv.ParseInt(t[0].Text, 10, 64)
		if err != nil {
			return false
		}
		fp.ts = v
	case len(t) >= 2 && t[0].IsPunct("-") && t[1].Kind == cqltext.Number && t[0].End == t[1].Pos:
		v, err := strconv.ParseInt("-"+t[1].Text, 10, 64)
		if err != nil || v == math.MinInt64 {
			// Long.MIN_VALUE is Cassandra's "no deletion" (DeletionTime.LIVE): a
			// deletion at it is not shown to delete anything.
			return false
		}
		fp.ts, n = v, 2
	default:
		return false
	}
	if len(t) > n && !(t[n].Is("and") || t[n].Is("set") || t[n].Is("where") || t[n].Is("values") || t[n].Is("json")) {
		return false
	}
	fp.ownTS = true
	return true
}

// functionOwner maps the token positions of an INSERT's or UPDATE's values to the
// column each writes ("" for a key column's value or the WHERE clause: the row itself),
// when the statement has a footprint; nil otherwise.
func (c *classifier) functionOwner(t []cqltext.Token) func(pos int) (string, bool) {
	if c.fp < 0 || c.v.fps[c.fp].del {
		return nil
	}
	fp := c.v.fps[c.fp]
	type span struct {
		from, to int
		col      string
	}
	var spans []span
	add := func(toks []cqltext.Token, col string) {
		if len(toks) > 0 {
			spans = append(spans, span{toks[0].Pos, toks[len(toks)-1].End, col})
		}
	}
	isKey := func(col string) bool {
		r := c.role(fp.ks, fp.table, col)
		return r == RolePartitionKey || r == RoleClustering || r == RoleUnknown && slices.ContainsFunc(fp.key, func(x restriction) bool { return x.col == col })
	}
	switch {
	case t[0].Is("update"):
		set := cqltext.IndexKeyword(t, "set", 0)
		if set < 0 {
			return nil
		}
		where := cqltext.IndexKeyword(t, "where", set)
		if where < 0 {
			return nil
		}
		for _, a := range cqltext.SplitTop(t[set+1:where], ",") {
			if len(a) > 0 {
				add(a, cqltext.IdentName(a[0]))
			}
		}
		add(t[where:], "")
	case t[0].Is("insert"):
		into := cqltext.IndexKeyword(t, "into", 0)
		vals := cqltext.IndexKeyword(t, "values", 0)
		if into < 0 || vals <= into+1 || vals+1 >= len(t) {
			return nil // INSERT JSON: its calls are in the document's text, none
		}
		open := slices.IndexFunc(t[into+1:vals], func(x cqltext.Token) bool { return x.IsPunct("(") })
		if open < 0 {
			return nil
		}
		cols := cqltext.SplitTop(cqltext.InParens(t[into+1+open:]), ",")
		values := cqltext.SplitTop(cqltext.InParens(t[vals+1:]), ",")
		for i := range min(len(cols), len(values)) {
			if len(cols[i]) != 1 {
				continue
			}
			col := cqltext.IdentName(cols[i][0])
			if isKey(col) {
				col = ""
			}
			add(values[i], col)
		}
	default:
		return nil
	}
	return func(pos int) (string, bool) {
		for _, sp := range spans {
			if pos >= sp.from && pos < sp.to {
				return sp.col, true
			}
		}
		return "", false
	}
}

// whereOf reads WHERE a = x AND b = y … into fp.key (in a DELETE also a slice of a
// clustering column, c > x, c <= y); false for any other form. A value
// it cannot judge (a call, a cast) is equal to nothing in a write; a DELETE with one
// (del) has no footprint.
func (c *classifier) whereOf(t []cqltext.Token, fp *footprint, del bool) bool {
	where := cqltext.IndexKeyword(t, "where", 0)
	if where < 0 {
		return false
	}
	conj := cqltext.SplitTopFunc(t[where+1:], func(x cqltext.Token) bool { return x.Is("and") })
	for _, e := range conj {
		if len(e) < 3 || (e[0].Kind != cqltext.Ident && e[0].Kind != cqltext.QIdent) {
			return false
		}
		// A DELETE's slice (c > v, c >= v, c < v, c <= v) is met by a write whose key lies
		// in it (see covers).
		slice := e[1].IsPunct(">") || e[1].IsPunct(">=") || e[1].IsPunct("<") || e[1].IsPunct("<=")
		if !e[1].IsPunct("=") && !(del && slice) {
			return false
		}
		col := cqltext.IdentName(e[0])
		r, ok := c.restrictionOf(fp.ks, fp.table, col, e[2:])
		if !ok {
			if del {
				return false // a DELETE must be known to hit the row
			}
			r = restriction{col: col, marker: -1} // a value not judged: equal to nothing
		}
		r.role = c.role(fp.ks, fp.table, col)
		if slice {
			// Only a clustering column takes a slice (Cassandra refuses one on the
			// partition key).
			if r.role != RoleClustering {
				return false
			}
			r.op = e[1].Text
		}
		fp.key = append(fp.key, r)
	}
	return len(fp.key) > 0
}

// restrictionOf reads `col = value` where value is one bind marker or a literal with no
// call in it (equal text, equal value).
func (c *classifier) restrictionOf(ks, table, col string, val []cqltext.Token) (restriction, bool) {
	typ := c.keyType(ks, table, col)
	if hinted := stripTypeHints(val); len(hinted) < len(val) {
		// (type) value: the hint decides how the value is read; only a hint of the
		// column's own kind of type keeps the forms comparable (not integers: int and
		// bigint read the same digits into different bytes).
		if hintType(val[1]) != typ || typ == KeyInteger || typ == KeyVarint || typ == KeyOther || len(val) != len(hinted)+3 {
			return restriction{}, false
		}
		val = hinted
	}
	if len(val) == 1 && val[0].Kind == cqltext.Bind {
		return restriction{col: col, typ: typ, marker: c.markers[val[0].Pos]}, true
	}
	if len(val) == 1 {
		if f, ok := literalForm(val[0], typ); ok {
			return restriction{col: col, typ: typ, lit: f, marker: -1}, true
		}
	}
	// A negative number: cqltext lexes its sign apart; written as one word (-5, not - 5)
	// it is the literal -5.
	if len(val) == 2 && val[0].IsPunct("-") && val[1].Kind == cqltext.Number && val[0].End == val[1].Pos &&
		!strings.HasPrefix(val[1].Text, "-") {
		neg := cqltext.Token{Kind: cqltext.Number, Text: "-" + val[1].Text, Pos: val[0].Pos, End: val[1].End}
		if f, ok := literalForm(neg, typ); ok {
			return restriction{col: col, typ: typ, lit: f, marker: -1}, true
		}
	}
	if typ == KeyUUID {
		var b strings.Builder
		for _, tok := range val {
			b.WriteString(tok.Text)
		}
		if f := uuidForm(b.String()); f != "" {
			return restriction{col: col, typ: typ, lit: f, marker: -1}, true
		}
	}
	var b strings.Builder
	b.WriteString("cql:")
	for _, tok := range val {
		switch tok.Kind {
		case cqltext.Bind, cqltext.QIdent:
			return restriction{}, false
		case cqltext.Punct:
			if tok.Text == "(" {
				return restriction{}, false // a call, a tuple or a cast: not judged
			}
		}
		b.WriteByte(byte('0' + tok.Kind)) // 'x' and x differ
		b.WriteString(tok.Text)
		b.WriteByte(0)
	}
	return restriction{col: col, typ: typ, lit: b.String(), marker: -1}, len(val) > 0
}

// hintType is the KeyType of a type hint's name.
func hintType(t cqltext.Token) KeyType {
	switch t.Lower {
	case "text", "varchar", "ascii":
		return KeyText
	case "double":
		return KeyDouble
	case "float":
		return KeyFloat
	case "boolean":
		return KeyBoolean
	case "uuid", "timeuuid":
		return KeyUUID
	}
	return KeyOther
}

// keyType asks a KeyTypeSchema the type of a column.
func (c *classifier) keyType(ks, table, col string) KeyType {
	ts, ok := c.schema.(KeyTypeSchema)
	if !ok || table == "" {
		return KeyOther
	}
	if ks == "" {
		ks = c.ks
	}
	return ts.KeyType(ks, table, col)
}

// literalForm is the shared form of a one-token CQL literal for a column of type typ.
func literalForm(tok cqltext.Token, typ KeyType) (string, bool) {
	switch {
	case typ == KeyText && tok.Kind == cqltext.String && utf8.ValidString(tok.Text):
		return "s:" + tok.Text, true
	case (typ == KeyInteger || typ == KeyVarint) && tok.Kind == cqltext.Number:
		if n, ok := new(big.Int).SetString(tok.Text, 10); ok {
			return "i:" + n.String(), true
		}
	case typ == KeyDouble && tok.Kind == cqltext.Number && !strings.HasPrefix(strings.ToLower(tok.Text), "0x") &&
		!strings.HasPrefix(strings.ToLower(tok.Text), "-0x"):
		if f, err := strconv.ParseFloat(tok.Text, 64); err == nil {
			return "f:" + strconv.FormatUint(math.Float64bits(f), 16), true
		}
	case typ == KeyBoolean && (tok.Is("true") || tok.Is("false")):
		return "b:" + tok.Lower, true
	case typ == KeyDate && tok.Kind == cqltext.String:
		if f := dateForm(tok.Text); f != "" {
			return f, true
		}
	case typ == KeyDecimal && tok.Kind == cqltext.Number:
		if f := decimalForm(tok.Text); f != "" {
			return f, true
		}
	}
	return "", false
}

// decimalDigits is the text Cassandra's DecimalType reads (Java's new BigDecimal(s))
// that decimalForm accepts: an optional sign, digits, an optional fraction, an optional
// exponent of at most four digits.
var decimalDigits = regexp.MustCompile(`^([+-]?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]{1,4}))?$`)

// decimalForm is the shared form of a decimal's text as Java's BigDecimal reads it: "r:"
// and the unscaled integer, "e", the scale (10 becomes 10 with scale 0; 1.50 becomes
// 150 with scale 2; 1e3 becomes 1 with scale -3). "" for any other text, and for more
// than 1000 digits or a scale beyond ±1000.
func decimalForm(s string) string {
	m := decimalDigits.FindStringSubmatch(s)
	if m == nil || len(m[2])+len(m[3]) > 1000 {
		return ""
	}
	n, ok := new(big.Int).SetString(m[1]+m[2]+m[3], 10)
	if !ok {
		return ""
	}
	scale := int64(len(m[3]))
	if m[4] != "" {
		e, err := strconv.ParseInt(m[4], 10, 64)
		if err != nil {
			return ""
		}
		scale -= e
	}
	return decimalOf(n, scale)
}

// decimalOf is the shared form of unscaled × 10^-scale ("" for a scale beyond ±1000).
func decimalOf(unscaled *big.Int, scale int64) string {
	if unscaled == nil || scale < -1000 || scale > 1000 {
		return ""
	}
	return "r:" + unscaled.String() + "e" + strconv.FormatInt(scale, 10)
}

// decimalRat reads decimalOf's form back as a rational number.
func decimalRat(f string) (*big.Rat, bool) {
	unscaled, scale, ok := strings.Cut(f[2:], "e")
	n, okn := new(big.Int).SetString(unscaled, 10)
	sc, err := strconv.ParseInt(scale, 10, 64)
	if !ok || !okn || err != nil || sc < -1000 || sc > 1000 {
		return nil, false
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(max(sc, -sc)), nil)
	if sc >= 0 {
		return new(big.Rat).SetFrac(n, p), true
	}
	return new(big.Rat).SetInt(n.Mul(n, p)), true
}

// dateForm is the shared form of a date's text, exactly yyyy-mm-dd (Cassandra reads it
// in UTC, proleptic Gregorian, as Go does): "d:" and the days since 1970-01-01. "" for
// any other text (Cassandra also takes other spellings, and a number of days).
func dateForm(s string) string {
	if len(s) != 10 || strings.Trim(s[:4]+s[5:7]+s[8:], "0123456789") != "" {
		return ""
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return ""
	}
	return "d:" + strconv.FormatInt(t.Unix()/86400, 10)
}

// jsonKey is an INSERT JSON document's columns as a footprint's key: each value in its
// column type's shared form (jsonForm).
func (c *classifier) jsonKey(ks, table string, obj map[string]json.RawMessage) []restriction {
	key := make([]restriction, 0, len(obj))
	for col, raw := range obj {
		typ := c.keyType(ks, table, col)
		key = append(key, restriction{col: col, typ: typ, lit: jsonForm(raw, typ), marker: -1})
	}
	return key
}

// jsonForm is the shared form of an INSERT JSON document's value for a column of type
// typ: a string for a text column, an integer for an integer column, a uuid's or a
// yyyy-mm-dd date's text for those; else private.
func jsonForm(raw json.RawMessage, typ KeyType) string {
	switch typ {
	case KeyText:
		// Only plain text: an escape (a lone surrogate) or invalid UTF-8 decodes
		// differently in Go and in Cassandra.
		var str string
		if !bytes.Contains(raw, []byte(`\u`)) && utf8.Valid(raw) && json.Unmarshal(raw, &str) == nil {
			return "s:" + str
		}
	case KeyInteger, KeyVarint:
		if n, ok := new(big.Int).SetString(string(raw), 10); ok {
			return "i:" + n.String()
		}
	case KeyUUID:
		var str string
		if json.Unmarshal(raw, &str) == nil {
			if f := uuidForm(str); f != "" {
				return f
			}
		}
	case KeyDate:
		var str string
		if json.Unmarshal(raw, &str) == nil {
			if f := dateForm(str); f != "" {
				return f
			}
		}
	case KeyDecimal:
		// A string Cassandra reads as the literal's text; a number only as an integer
		// (DecimalType.fromJSONObject: new BigDecimal(parsed.toString()) — a fraction
		// or an exponent may pass through a double on the way).
		var str string
		if json.Unmarshal(raw, &str) == nil {
			if f := decimalForm(str); f != "" {
				return f
			}
		} else if n, ok := new(big.Int).SetString(string(raw), 10); ok && !bytes.HasPrefix(raw, []byte("-0")) {
			// (-0: should the JSON parser read it as a double, -0.0, Cassandra would
			// store scale 1 — review: not read.)
			return decimalOf(n, 0)
		}
	}
	return "json:" + string(raw)
}

// uuidForm is the shared form of a UUID's text (8-4-4-4-12 hex digits), "" for any
// other text.
func uuidForm(s string) string {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return ""
	}
	h := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	if len(h) != 32 || strings.Trim(h, "0123456789abcdef") != "" {
		return ""
	}
	return "u:" + h
}

// boundForm is the shared form of a bound value for a column of type typ ("" when it
// has none: a type the rule does not know, or a value that marshals itself).
func boundForm(v any, typ KeyType) string {
	rv := reflect.ValueOf(v)
	if v == nil {
		return ""
	}
	if _, own := rv.Type().MethodByName("MarshalCQL"); own {
		return ""
	}
	switch typ {
	case KeyUUID:
		if rv.Kind() == reflect.Array && rv.Len() == 16 && rv.Type().Elem() == reflect.TypeOf(byte(0)) {
			b := make([]byte, 16)
			reflect.Copy(reflect.ValueOf(b), rv)
			return "u:" + hex.EncodeToString(b)
		}
	case KeyText:
		if rv.Kind() == reflect.String && utf8.ValidString(rv.String()) {
			return "s:" + rv.String()
		}
	case KeyInteger, KeyVarint:
		if n, ok := v.(*big.Int); ok {
			// gocql marshals a *big.Int into a varint by value (minimal two's
			// complement); into the fixed-size types it does not.
			if n == nil || typ != KeyVarint {
				return ""
			}
			return "i:" + n.String()
		}
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return "i:" + strconv.FormatInt(rv.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return "i:" + strconv.FormatUint(rv.Uint(), 10)
		}
	case KeyDouble:
		if rv.Kind() == reflect.Float64 {
			return "f:" + strconv.FormatUint(math.Float64bits(rv.Float()), 16)
		}
	case KeyBoolean:
		if rv.Kind() == reflect.Bool {
			return "b:" + strconv.FormatBool(rv.Bool())
		}
	case KeyDate:
		// gocql (v1.7 and v2: marshalDate) sends the day of a time's UTC milliseconds,
		// truncated toward zero (a time before 1970 not at midnight names the next day),
		// as int32(day + 2^31), which Cassandra reads unsigned: a day outside int32
		// wraps, and the milliseconds overflow further out. A string it parses as
		// yyyy-mm-dd.
		switch t := v.(type) {
		case time.Time:
			sec := t.Unix()
			if t.IsZero() || sec/86400 < math.MinInt32-1 || sec/86400 > math.MaxInt32+1 {
				return ""
			}
			day := (sec*1000 + int64(t.Nanosecond()/1e6)) / 86400000
			if day < math.MinInt32 || day > math.MaxInt32 {
				return ""
			}
			return "d:" + strconv.FormatInt(day, 10)
		case string:
			return dateForm(t)
		}
	}
	return ""
}

// role asks a RoleSchema where col sits.
func (c *classifier) role(ks, table, col string) ColumnRole {
	rs, ok := c.schema.(RoleSchema)
	if !ok || table == "" {
		return RoleUnknown
	}
	if ks == "" {
		ks = c.ks
	}
	return rs.ColumnRole(ks, table, col)
}

// listReason marks the current statement not idempotent for a list write to col that a
// DELETE of the same batch may shadow.
//
// Every occurrence gets a record, also in a statement without a footprint (fp -1, never
// covered): reasons are kept by their text, and two statements can give the same text
// (`list append "l = l + [1]"` in two rows); only a reason all of whose occurrences
// are covered may go.
func (c *classifier) listReason(ks, table, col, reason string) {
	c.v.notIdempotent(reason)
	rec := shadowable{fp: c.fp, col: col, reason: reason}
	if c.fp >= 0 {
		rec.role = c.role(ks, table, col)
	}
	c.v.shadow = append(c.v.shadow, rec)
}

// deletes reports whether d, executed with dv, deletes column s of w's row (w executed
// with wv) at a timestamp not below w's, the execution pinned at at (0: not known).
func (d footprint) deletes(dv []any, w footprint, wv []any, s shadowable, in ValueInspector, at int64) bool {
	if !d.del || d.ks != w.ks || d.table != w.table || !notBefore(d, dv, w, wv, at) {
		return false
	}
	switch {
	case s.col == "": // a write whose row is not known: only a partition delete hits it
		if d.cols != nil || !d.partition {
			return false
		}
	case d.cols != nil:
		if !slices.Contains(d.cols, s.col) {
			return false
		}
	case s.role == RoleRegular:
	case s.role == RoleStatic && d.partition:
	default:
		return false
	}
	for _, r := range d.key {
		if s.role == RoleStatic && d.cols != nil && r.role != RolePartitionKey && r.op == "" {
			// A static column named by a DELETE (with a regular one: named alone,
			// Cassandra refuses clustering restrictions) lives in the partition's
			// static row: deleted whatever row the clustering restrictions name
			// (DeleteStatement.addUpdateForKey, Clustering.STATIC_CLUSTERING).
			continue
		}
		i := slices.IndexFunc(w.key, func(x restriction) bool { return x.col == r.col })
		if i < 0 || !covers(r, dv, w.key[i], wv, in) {
			return false
		}
	}
	return true
}

// covers reports whether the DELETE's restriction d (its values dv) holds for the
// write's key value k (values kv): equal, or inside d's slice. A slice is a range
// tombstone: it deletes whole rows, never a static column (d.partition is false with a
// clustering restriction), and a single-column slice follows the type's own order on a
// DESC column too (Cassandra: Bound.reverseIfNeeded).
func covers(d restriction, dv []any, k restriction, kv []any, in ValueInspector) bool {
	if k.op != "" {
		return false // a write's key is never a slice (whereOf keeps slices for a DELETE): a guard
	}
	if d.op == "" || d.op == ">=" || d.op == "<=" {
		if sameValue(d, dv, k, kv, in) {
			return true
		}
		if d.op == "" {
			return false
		}
	}
	c, ok := order(k, kv, d, dv, in) // the key against the bound
	if !ok {
		return false
	}
	switch d.op {
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	}
	return false
}

// order compares a's value with b's in their column type's order: integers (tinyint to
// varint) by value, text by its UTF-8 bytes, dates by day. ok is false for any other type or form, and
// for a bound unsigned integer (gocql wraps one above the column type's range).
func order(a restriction, av []any, b restriction, bv []any, in ValueInspector) (int, bool) {
	fa, fb := orderForm(a, av, in), orderForm(b, bv, in)
	switch {
	case fa == "" || fb == "" || fa[:2] != fb[:2]:
		return 0, false
	case strings.HasPrefix(fa, "i:"), strings.HasPrefix(fa, "d:"):
		x, okx := new(big.Int).SetString(fa[2:], 10)
		y, oky := new(big.Int).SetString(fb[2:], 10)
		if !okx || !oky {
			return 0, false
		}
		return x.Cmp(y), true
	case strings.HasPrefix(fa, "s:"):
		return strings.Compare(fa[2:], fb[2:]), true
	case strings.HasPrefix(fa, "r:"):
		// Cassandra orders decimals by value (DecimalType: BigDecimal.compareTo).
		x, okx := decimalRat(fa)
		y, oky := decimalRat(fb)
		if !okx || !oky {
			return 0, false
		}
		return x.Cmp(y), true
	}
	return 0, false
}

// orderForm is r's value as order reads it ("" for none).
func orderForm(r restriction, values []any, in ValueInspector) string {
	if r.typ != KeyInteger && r.typ != KeyVarint && r.typ != KeyText && r.typ != KeyDate && r.typ != KeyDecimal {
		return ""
	}
	f := r.lit
	if r.marker >= 0 {
		if r.marker >= len(values) {
			return ""
		}
		switch reflect.ValueOf(values[r.marker]).Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return ""
		}
		f = boundAt(values, r, in)
	}
	if !strings.HasPrefix(f, "i:") && !strings.HasPrefix(f, "s:") && !strings.HasPrefix(f, "d:") && !strings.HasPrefix(f, "r:") {
		return ""
	}
	return f
}

func sameValue(a restriction, av []any, b restriction, bv []any, in ValueInspector) bool {
	if a.marker >= 0 && b.marker >= 0 {
		if a.marker < len(av) && b.marker < len(bv) && equalKeyValues(av[a.marker], bv[b.marker], in) {
			return true
		}
		if (a.typ != KeyDate || b.typ != KeyDate) && (a.typ != KeyDecimal || b.typ != KeyDecimal) {
			return false
		}
		// Two dates, each a midnight UTC or a yyyy-mm-dd string: the same day; two
		// decimals of the same unscaled value and scale.
	}
	fa, fb := a.lit, b.lit
	if a.marker >= 0 {
		fa = boundAt(av, a, in)
	}
	if b.marker >= 0 {
		fb = boundAt(bv, b, in)
	}
	return fa != "" && fa == fb
}

// boundAt is the shared form of the value bound to r's marker ("" for none).
func boundAt(values []any, r restriction, in ValueInspector) string {
	if r.marker >= len(values) || in == nil || values[r.marker] == nil || in.IsUnset(values[r.marker]) {
		return ""
	}
	if r.typ == KeyDecimal {
		if di, ok := in.(DecimalInspector); ok {
			if n, scale, ok := di.Decimal(values[r.marker]); ok {
				return decimalOf(n, int64(scale))
			}
		}
		return ""
	}
	return boundForm(values[r.marker], r.typ)
}

// equalKeyValues: two bound values that surely marshal to the same bytes: the same
// plain type (strings, integers, booleans, floats bit for bit, byte slices and arrays
// such as UUIDs), equal. Structs, pointers and types with methods (their own
// marshalling) are left out.
func equalKeyValues(a, b any, in ValueInspector) bool {
	if a == nil || b == nil || in == nil || in.IsUnset(a) || in.IsUnset(b) {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	switch ta.Kind() {
	case reflect.Array:
		return ta.Elem().Kind() == reflect.Uint8 && reflect.ValueOf(a).Equal(reflect.ValueOf(b))
	case reflect.Slice:
		return ta.Elem().Kind() == reflect.Uint8 && ta.NumMethod() == 0 &&
			reflect.ValueOf(a).Bytes() != nil && string(reflect.ValueOf(a).Bytes()) == string(reflect.ValueOf(b).Bytes())
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return ta.NumMethod() == 0 && a == b
	case reflect.Float32, reflect.Float64: // bit for bit: -0 is not +0 in CQL; no NaN (a float32's payload is lost on the way to float64)
		fa, fb := reflect.ValueOf(a).Float(), reflect.ValueOf(b).Float()
		return ta.NumMethod() == 0 && !math.IsNaN(fa) && math.Float64bits(fa) == math.Float64bits(fb)
	}
	return false
}

// unshadow drops the reasons of v (one text, values bound to its markers) that only
// shadowed list writes gave: every statement that gave the reason writes a column a
// DELETE of the same text deletes.
func (v Verdict) unshadow(values []any, in ValueInspector) Verdict {
	if v.Idempotent || len(v.shadow) == 0 || !v.deleter {
		return v
	}
	return v.dropShadowed(func(s shadowable) bool {
		for _, d := range v.fps {
			if s.fp >= 0 && d.deletes(values, v.fps[s.fp], values, s, in, v.at) {
				return true
			}
		}
		return false
	}, "")
}

// dropShadowed returns v without the reasons r (as prefix+r) for which every shadowable
// record giving r is covered.
func (v Verdict) dropShadowed(covered func(shadowable) bool, prefix string) Verdict {
	var keep []string
	dropped := false
	for _, r := range v.Reasons {
		drop := false
		for _, s := range v.shadow {
			if prefix+s.reason != r {
				continue
			}
			if !covered(s) {
				drop = false
				break
			}
			drop = true
		}
		if drop {
			dropped = true
			continue
		}
		keep = append(keep, r)
	}
	if !dropped {
		return v
	}
	v.Reasons = keep
	v.Idempotent = len(keep) == 0
	return v
}
