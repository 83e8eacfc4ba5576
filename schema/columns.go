package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
)

// ErrBadDDL is matched (errors.Is) by every *DDLError.
var ErrBadDDL = errors.New("schema: bad DDL")

// DDLError is CQL that ParseColumns cannot read: text that does not lex, or a CREATE
// TABLE, CREATE TYPE, ALTER TABLE or USE that is malformed.
type DDLError struct {
	Offset int // byte offset in the text
	Line   int // 1-based
	Column int // 1-based, in bytes
	Reason string
	Err    error // the lexer's error, when the text does not lex
}

func (e *DDLError) Error() string {
	return fmt.Sprintf("schema: line %d, column %d: %s", e.Line, e.Column, e.Reason)
}

// Is makes errors.Is(err, ErrBadDDL) true.
func (e *DDLError) Is(target error) bool { return target == ErrBadDDL }

// Unwrap returns the lexer's error, if any.
func (e *DDLError) Unwrap() error { return e.Err }

// Columns is the column kinds of the tables a CQL schema file creates: a retry.Schema
// read from DDL instead of from a cluster (retry.SessionSchema), for linters and tests.
//
// Kinds: list<…>, set<…> and map<…> are ColumnList, ColumnSet and ColumnMap; counter is
// ColumnCounter; everything else — scalars, frozen<…>, tuples, vectors, user-defined
// types (declared in the file or not) — is ColumnScalar, one cell overwritten whole.
// Anything the file does not define is ColumnUnknown.
//
// Names follow CQL: unquoted identifiers are lower-cased, "quoted" ones are
// case-sensitive, exactly as retry's classifier passes them.
//
// Keyspaces: a table is in the keyspace its CREATE TABLE names, else in the one of the
// last USE before it, else in none. A table in no keyspace answers for any keyspace
// that has no table of that name. A question without a keyspace (a statement that names
// none, linted without a default keyspace) is answered by the tables of that name in
// any keyspace when they all agree on the column's kind, and is ColumnUnknown when they
// disagree: the classifier then stays conservative.
//
// The zero value knows no table. A Columns is not changed after ParseColumns returns
// and is safe for concurrent use.
type Columns struct {
	tables map[tableKey]*tableDef
}

var _ retry.Schema = (*Columns)(nil)

type tableKey struct{ keyspace, table string }

type tableDef struct {
	cols map[string]retry.ColumnKind
	pos  int // offset of the CREATE TABLE, for "already created" errors
	// partition and clustering are the primary key's columns, in order; static the
	// static columns.
	partition, clustering []string
	static                map[string]bool
	// created: the file holds the table's CREATE TABLE (else only ALTER TABLE … ADD:
	// its key is not known).
	created bool
}

// ParseColumns reads the column definitions of the CREATE TABLE statements in ddl (a
// .cql file: several statements, comments allowed), and follows USE, ALTER TABLE … ADD
// / DROP and DROP TABLE / KEYSPACE in order. CREATE TYPE is checked, not recorded (UDT
// columns are ColumnScalar). Other statements (CREATE KEYSPACE, INDEX, INSERT, …) are
// skipped unread.
//
// Malformed DDL is a *DDLError (errors.Is ErrBadDDL) with its line and column: a column
// without a type, list/set/map/frozen without their type parameters, unbalanced
// parentheses or angle brackets, a duplicate column, a table without exactly one
// PRIMARY KEY or one naming an undefined column, a second CREATE TABLE of a table
// without IF NOT EXISTS. ParseColumns never panics.
func ParseColumns(ddl string) (*Columns, error) {
	p := ddlParser{text: ddl, out: &Columns{tables: map[tableKey]*tableDef{}}}
	toks, err := cqltext.Lex(ddl)
	if err != nil {
		pos := len(ddl)
		var le *cqltext.LexError
		if errors.As(err, &le) {
			pos = le.Pos
		}
		reason := err.Error()
		if le != nil {
			reason = le.Reason
		}
		de := p.errAt(pos, "%s", reason)
		de.Err = err
		return nil, de
	}
	for _, st := range cqltext.Split(toks) {
		if err := p.statement(st); err != nil {
			return nil, err
		}
	}
	return p.out, nil
}

// Tables is the number of tables whose columns c knows (0 for a nil Columns).
func (c *Columns) Tables() int {
	if c == nil {
		return 0
	}
	return len(c.tables)
}

// ColumnKind implements retry.Schema.
func (c *Columns) ColumnKind(keyspace, table, column string) retry.ColumnKind {
	if c == nil || c.tables == nil {
		return retry.ColumnUnknown
	}
	if keyspace != "" {
		if t, ok := c.tables[tableKey{keyspace, table}]; ok {
			return t.kind(column)
		}
		if t, ok := c.tables[tableKey{"", table}]; ok {
			return t.kind(column)
		}
		return retry.ColumnUnknown
	}
	kind, found := retry.ColumnUnknown, false
	for k, t := range c.tables {
		if k.table != table {
			continue
		}
		tk := t.kind(column)
		if found && tk != kind {
			return retry.ColumnUnknown // same name, different tables: cannot tell which
		}
		kind, found = tk, true
	}
	return kind
}

// table is the table a statement names: in keyspace, else in none; without a keyspace,
// the only table of that name (nil when there is none or more than one).
func (c *Columns) table(keyspace, table string) *tableDef {
	if c == nil || c.tables == nil {
		return nil
	}
	if keyspace != "" {
		if t, ok := c.tables[tableKey{keyspace, table}]; ok {
			return t
		}
		return c.tables[tableKey{"", table}]
	}
	var found *tableDef
	for k, t := range c.tables {
		if k.table == table {
			if found != nil {
				return nil
			}
			found = t
		}
	}
	return found
}

// ColumnRole implements retry.RoleSchema: where a column sits in its table's primary key.
func (c *Columns) ColumnRole(keyspace, table, column string) retry.ColumnRole {
	t := c.table(keyspace, table)
	if t == nil {
		return retry.RoleUnknown
	}
	switch _, ok := t.cols[column]; {
	case !ok:
		return retry.RoleUnknown
	case t.static[column]:
		return retry.RoleStatic
	case slices.Contains(t.partition, column):
		return retry.RolePartitionKey
	case slices.Contains(t.clustering, column):
		return retry.RoleClustering
	}
	return retry.RoleRegular // a column ALTER TABLE … ADD added is never a key column
}

// ClusteringColumns implements retry.ClusteringSchema: the table's clustering columns in
// order.
func (c *Columns) ClusteringColumns(keyspace, table string) ([]string, bool) {
	t := c.table(keyspace, table)
	if t == nil || !t.created {
		return nil, false
	}
	return slices.Clone(t.clustering), true
}

func (t *tableDef) kind(column string) retry.ColumnKind {
	if k, ok := t.cols[column]; ok {
		return k
	}
	return retry.ColumnUnknown
}

// ddlParser reads one file's statements in order.
type ddlParser struct {
	text     string
	keyspace string // from the last USE
	out      *Columns
}

func (p *ddlParser) errAt(pos int, format string, args ...any) *DDLError {
	pos = max(0, min(pos, len(p.text)))
	line := strings.Count(p.text[:pos], "\n") + 1
	col := pos - (strings.LastIndexByte(p.text[:pos], '\n') + 1) + 1
	return &DDLError{Offset: pos, Line: line, Column: col, Reason: fmt.Sprintf(format, args...)}
}

// endOf is the position just past st, for errors about what is missing at its end.
func endOf(st []cqltext.Token) int { return st[len(st)-1].End }

func (p *ddlParser) statement(st []cqltext.Token) error {
	switch {
	case st[0].Is("use"):
		if len(st) != 2 || !isName(st[1]) {
			return p.errAt(st[0].Pos, "USE needs exactly one keyspace name")
		}
		p.keyspace = name(st[1])
	case len(st) >= 2 && st[0].Is("create") && (st[1].Is("table") || st[1].Is("columnfamily")):
		return p.createTable(st)
	case len(st) >= 2 && st[0].Is("create") && st[1].Is("type"):
		return p.createType(st)
	case len(st) >= 2 && st[0].Is("alter") && (st[1].Is("table") || st[1].Is("columnfamily")):
		return p.alterTable(st)
	case len(st) >= 2 && st[0].Is("drop") && (st[1].Is("table") || st[1].Is("columnfamily")):
		i := 2
		if hasIf(st, i, "if", "exists") {
			i += 2
		}
		key, _, err := p.qualified(st, i)
		if err != nil {
			return err
		}
		delete(p.out.tables, key)
	case len(st) >= 3 && st[0].Is("drop") && st[1].Is("keyspace"):
		i := 2
		if hasIf(st, i, "if", "exists") {
			i += 2
		}
		if i >= len(st) || !isName(st[i]) {
			return p.errAt(endOf(st), "DROP KEYSPACE needs a keyspace name")
		}
		ks := name(st[i])
		for k := range p.out.tables {
			if k.keyspace == ks {
				delete(p.out.tables, k)
			}
		}
	}
	return nil
}

func isName(t cqltext.Token) bool { return t.Kind == cqltext.Ident || t.Kind == cqltext.QIdent }

// hasIf reports whether st[i:] starts with the keywords kws (IF [NOT] EXISTS).
func hasIf(st []cqltext.Token, i int, kws ...string) bool {
	if i+len(kws) > len(st) {
		return false
	}
	for j, kw := range kws {
		if !st[i+j].Is(kw) {
			return false
		}
	}
	return true
}

// qualified reads [keyspace.]name at st[i]; a name without keyspace is in the USE
// keyspace (or none). It returns the index after the name.
func (p *ddlParser) qualified(st []cqltext.Token, i int) (tableKey, int, error) {
	if i >= len(st) || !isName(st[i]) {
		return tableKey{}, 0, p.errAt(posAt(st, i), "expected a table name")
	}
	if i+1 < len(st) && st[i+1].IsPunct(".") {
		if i+2 >= len(st) || !isName(st[i+2]) {
			return tableKey{}, 0, p.errAt(posAt(st, i+2), "expected a name after %q.", st[i].Text)
		}
		return tableKey{name(st[i]), name(st[i+2])}, i + 3, nil
	}
	return tableKey{p.keyspace, name(st[i])}, i + 1, nil
}

// posAt is st[i]'s position, or the statement's end when i is past it.
func posAt(st []cqltext.Token, i int) int {
	if i < len(st) {
		return st[i].Pos
	}
	return endOf(st)
}

// body returns the definitions between st[i] == "(" and its match, split at top-level
// commas, and the index after the ")". With create (CREATE TABLE/TYPE) an empty
// definition after the first is skipped, as Cassandra's grammar does
// ('(' def ( ',' def? )* ')'): schemas in the wild end with "last_col type,\n)".
func (p *ddlParser) body(st []cqltext.Token, i int, create bool) ([][]cqltext.Token, int, error) {
	if i >= len(st) || !st[i].IsPunct("(") {
		return nil, 0, p.errAt(posAt(st, i), "expected ( and column definitions")
	}
	depth := 0
	for j := i; j < len(st); j++ {
		switch {
		case st[j].IsPunct("("):
			depth++
		case st[j].IsPunct(")"):
			depth--
			if depth == 0 {
				defs, err := p.splitDefs(st[i+1:j], st[j].Pos, create)
				return defs, j + 1, err
			}
		}
	}
	return nil, 0, p.errAt(st[i].Pos, "unclosed (")
}

// splitDefs splits at commas outside () and <>; an empty definition is an error, but
// with skipEmpty only the first one is.
func (p *ddlParser) splitDefs(t []cqltext.Token, closePos int, skipEmpty bool) ([][]cqltext.Token, error) {
	var out [][]cqltext.Token
	depth, start := 0, 0
	for i := 0; i <= len(t); i++ {
		if i < len(t) {
			switch {
			case t[i].IsPunct("(") || t[i].IsPunct("<"):
				depth++
				continue
			case t[i].IsPunct(")") || t[i].IsPunct(">"):
				depth--
				continue
			case depth != 0 || !t[i].IsPunct(","):
				continue
			}
		}
		if i == start && skipEmpty && len(out) > 0 {
			start = i + 1
			continue
		}
		if i == start {
			pos := closePos
			if i < len(t) {
				pos = t[i].Pos
			}
			return nil, p.errAt(pos, "empty definition")
		}
		out = append(out, t[start:i])
		start = i + 1
	}
	return out, nil
}

func (p *ddlParser) createTable(st []cqltext.Token) error {
	i := 2
	ifNotExists := hasIf(st, i, "if", "not", "exists")
	if ifNotExists {
		i += 3
	}
	key, i, err := p.qualified(st, i)
	if err != nil {
		return err
	}
	defs, after, err := p.body(st, i, true)
	if err != nil {
		return err
	}
	if after < len(st) && !st[after].Is("with") {
		return p.errAt(st[after].Pos, "unexpected %q after the column definitions (WITH expected)", st[after].Text)
	}
	t := &tableDef{cols: map[string]retry.ColumnKind{}, pos: st[0].Pos, static: map[string]bool{}, created: true}
	var pkPos []int // positions of PRIMARY KEY definitions
	var pkNames []cqltext.Token
	for _, def := range defs {
		if def[0].Is("primary") && len(def) > 1 && def[1].Is("key") {
			pkPos = append(pkPos, def[0].Pos)
			names, partition, err := p.primaryKey(def)
			if err != nil {
				return err
			}
			pkNames = append(pkNames, names...)
			for i, n := range names {
				if i < partition {
					t.partition = append(t.partition, name(n))
				} else {
					t.clustering = append(t.clustering, name(n))
				}
			}
			continue
		}
		col, kind, rest, err := p.column(def)
		if err != nil {
			return err
		}
		if _, dup := t.cols[col]; dup {
			return p.errAt(def[0].Pos, "column %q defined twice", col)
		}
		t.cols[col] = kind
		for j := 0; j < len(rest); j++ {
			switch {
			case rest[j].Is("static"):
				t.static[col] = true
			case rest[j].Is("primary") && j+1 < len(rest) && rest[j+1].Is("key"):
				pkPos = append(pkPos, rest[j].Pos)
				t.partition = append(t.partition, col)
				j++
			case rest[j].Is("masked"):
				j = len(rest) // MASKED WITH fn(args): no bearing on the kind
			default:
				return p.errAt(rest[j].Pos, "unexpected %q in the definition of column %q", rest[j].Text, col)
			}
		}
	}
	switch {
	case len(pkPos) == 0:
		return p.errAt(st[0].Pos, "table %q has no PRIMARY KEY", key.table)
	case len(pkPos) > 1:
		return p.errAt(pkPos[1], "table %q has more than one PRIMARY KEY", key.table)
	}
	for _, n := range pkNames {
		if _, ok := t.cols[name(n)]; !ok {
			return p.errAt(n.Pos, "PRIMARY KEY names undefined column %q", name(n))
		}
	}
	if prev, ok := p.out.tables[key]; ok {
		if ifNotExists {
			return nil // Cassandra keeps the existing table
		}
		return p.errAt(st[0].Pos, "table %q created again (first on line %d) without IF NOT EXISTS", key.table, lineOf(p.text, prev.pos))
	}
	p.out.tables[key] = t
	return nil
}

// primaryKey reads PRIMARY KEY ((a, b), c, d) or PRIMARY KEY (a, c) and returns the
// column name tokens and how many of the first ones form the partition key.
func (p *ddlParser) primaryKey(def []cqltext.Token) ([]cqltext.Token, int, error) {
	t := def[2:]
	if len(t) < 3 || !t[0].IsPunct("(") || !t[len(t)-1].IsPunct(")") {
		return nil, 0, p.errAt(posAt(def, 2), "PRIMARY KEY needs a parenthesised column list")
	}
	var names []cqltext.Token
	partition := 0
	inner, depth, expectName := t[1:len(t)-1], 0, true
	for _, tok := range inner {
		switch {
		case tok.IsPunct("(") && expectName && depth == 0 && len(names) == 0:
			depth++
		case tok.IsPunct(")") && !expectName && depth == 1:
			depth--
			partition = len(names)
		case tok.IsPunct(",") && !expectName:
			expectName = true
		case isName(tok) && expectName:
			names = append(names, tok)
			expectName = false
		default:
			return nil, 0, p.errAt(tok.Pos, "unexpected %q in PRIMARY KEY", tok.Text)
		}
	}
	if depth != 0 || expectName {
		return nil, 0, p.errAt(t[len(t)-1].Pos, "incomplete PRIMARY KEY")
	}
	if partition == 0 {
		partition = 1 // PRIMARY KEY (a, c): a alone
	}
	return names, partition, nil
}

// column reads "name type …" and returns the name, the type's kind and the tokens
// after the type.
func (p *ddlParser) column(def []cqltext.Token) (string, retry.ColumnKind, []cqltext.Token, error) {
	if !isName(def[0]) {
		return "", 0, nil, p.errAt(def[0].Pos, "expected a column name, found %q", def[0].Text)
	}
	col := name(def[0])
	if len(def) < 2 {
		return "", 0, nil, p.errAt(def[0].End, "column %q has no type", col)
	}
	kind, next, err := p.typ(def, 1, 0)
	if err != nil {
		return "", 0, nil, err
	}
	return col, kind, def[next:], nil
}

// maxTypeDepth bounds nesting (list<frozen<list<…>>>) so hostile input cannot recurse
// without limit; Cassandra's real schemas stay far below it.
const maxTypeDepth = 32

// typ reads a CQL type at t[i] and returns its kind and the index after it. Inside
// type parameters (depth > 0) the kind is irrelevant: only frozen-ness at the top
// decides, since a nested collection is always frozen.
func (p *ddlParser) typ(t []cqltext.Token, i, depth int) (retry.ColumnKind, int, error) {
	if depth > maxTypeDepth {
		return 0, 0, p.errAt(posAt(t, i), "type nested more than %d deep", maxTypeDepth)
	}
	if i >= len(t) {
		return 0, 0, p.errAt(endOf(t), "expected a type")
	}
	tok := t[i]
	switch tok.Kind {
	case cqltext.String, cqltext.QIdent:
		return retry.ColumnScalar, i + 1, nil // a custom type class or a quoted UDT name
	case cqltext.Ident:
	default:
		return 0, 0, p.errAt(tok.Pos, "expected a type, found %q", tok.Text)
	}
	if i+1 < len(t) && t[i+1].IsPunct(".") { // keyspace.udt
		if i+2 >= len(t) || !isName(t[i+2]) {
			return 0, 0, p.errAt(posAt(t, i+2), "expected a type name after %q.", tok.Text)
		}
		return retry.ColumnScalar, i + 3, nil
	}
	arity, parametric := map[string]int{"list": 1, "set": 1, "frozen": 1, "map": 2, "tuple": -1, "vector": 2}[tok.Lower]
	if !parametric {
		if i+1 < len(t) && t[i+1].IsPunct("<") {
			return 0, 0, p.errAt(t[i+1].Pos, "type %s takes no type parameters", tok.Text)
		}
		if tok.Lower == "counter" {
			if depth > 0 {
				return 0, 0, p.errAt(tok.Pos, "counter cannot be nested in another type")
			}
			return retry.ColumnCounter, i + 1, nil
		}
		return retry.ColumnScalar, i + 1, nil
	}
	if i+1 >= len(t) || !t[i+1].IsPunct("<") {
		return 0, 0, p.errAt(posAt(t, i+1), "%s needs type parameters: %s<…>", tok.Lower, tok.Lower)
	}
	j, n := i+2, 0
	for {
		if tok.Lower == "vector" && n == 1 && j < len(t) && t[j].Kind == cqltext.Number {
			j++ // vector<float, 3>: the dimension
		} else {
			_, next, err := p.typ(t, j, depth+1)
			if err != nil {
				return 0, 0, err
			}
			j = next
		}
		n++
		if j >= len(t) {
			return 0, 0, p.errAt(endOf(t), "unclosed < in %s type", tok.Lower)
		}
		if t[j].IsPunct(">") {
			j++
			break
		}
		if !t[j].IsPunct(",") {
			return 0, 0, p.errAt(t[j].Pos, "expected , or > in %s type, found %q", tok.Lower, t[j].Text)
		}
		j++
	}
	if arity > 0 && n != arity {
		return 0, 0, p.errAt(tok.Pos, "%s takes %d type parameter(s), has %d", tok.Lower, arity, n)
	}
	switch tok.Lower {
	case "list":
		return retry.ColumnList, j, nil
	case "set":
		return retry.ColumnSet, j, nil
	case "map":
		return retry.ColumnMap, j, nil
	}
	return retry.ColumnScalar, j, nil // frozen<…>, tuple<…>, vector<…>: one cell
}

// createType checks CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, …).
func (p *ddlParser) createType(st []cqltext.Token) error {
	i := 2
	if hasIf(st, i, "if", "not", "exists") {
		i += 3
	}
	_, i, err := p.qualified(st, i)
	if err != nil {
		return err
	}
	defs, after, err := p.body(st, i, true)
	if err != nil {
		return err
	}
	if after < len(st) {
		return p.errAt(st[after].Pos, "unexpected %q after the fields of a type", st[after].Text)
	}
	seen := map[string]bool{}
	for _, def := range defs {
		f, _, rest, err := p.column(def)
		if err != nil {
			return err
		}
		if len(rest) > 0 {
			return p.errAt(rest[0].Pos, "unexpected %q after the type of field %q", rest[0].Text, f)
		}
		if seen[f] {
			return p.errAt(def[0].Pos, "field %q defined twice", f)
		}
		seen[f] = true
	}
	return nil
}

// alterTable follows ALTER TABLE [IF EXISTS] t ADD [IF NOT EXISTS] c type | (c type, …)
// and DROP [IF EXISTS] c | (c, …). Other alterations (WITH, RENAME of key columns) keep
// the kinds. A table the file did not create gets an entry of just the added columns.
func (p *ddlParser) alterTable(st []cqltext.Token) error {
	i := 2
	if hasIf(st, i, "if", "exists") {
		i += 2
	}
	key, i, err := p.qualified(st, i)
	if err != nil {
		return err
	}
	if i >= len(st) {
		return p.errAt(endOf(st), "ALTER TABLE needs ADD, DROP, RENAME or WITH")
	}
	op := st[i]
	switch {
	case op.Is("add"):
		i++
		guarded := hasIf(st, i, "if", "not", "exists")
		if guarded {
			i += 3
		}
		if i >= len(st) {
			return p.errAt(endOf(st), "ALTER TABLE … ADD needs a column and its type")
		}
		var defs [][]cqltext.Token
		if st[i].IsPunct("(") {
			var after int
			if defs, after, err = p.body(st, i, false); err != nil {
				return err
			}
			if after < len(st) {
				return p.errAt(st[after].Pos, "unexpected %q after ALTER TABLE … ADD (…)", st[after].Text)
			}
		} else if defs, err = p.splitDefs(st[i:], endOf(st), false); err != nil {
			return err
		}
		t := p.out.tables[key]
		if t == nil {
			t = &tableDef{cols: map[string]retry.ColumnKind{}, pos: st[0].Pos, static: map[string]bool{}}
			p.out.tables[key] = t
		}
		for _, def := range defs {
			col, kind, rest, err := p.column(def)
			if err != nil {
				return err
			}
			static := false
			for _, r := range rest {
				if !r.Is("static") {
					return p.errAt(r.Pos, "unexpected %q in the definition of column %q", r.Text, col)
				}
				static = true
			}
			if _, dup := t.cols[col]; dup && guarded {
				continue // IF NOT EXISTS: the existing column stays
			}
			t.cols[col] = kind
			if static {
				t.static[col] = true
			} else {
				delete(t.static, col) // dropped and added again as a regular column
			}
		}
	case op.Is("drop"):
		i++
		if hasIf(st, i, "if", "exists") {
			i += 2
		}
		var cols []cqltext.Token
		for _, tok := range st[i:] {
			if tok.Is("using") {
				break // DROP c USING TIMESTAMP n
			}
			if isName(tok) {
				cols = append(cols, tok)
			}
		}
		if len(cols) == 0 {
			return p.errAt(posAt(st, i), "ALTER TABLE … DROP needs a column")
		}
		if t := p.out.tables[key]; t != nil {
			for _, c := range cols {
				delete(t.cols, name(c))
			}
		}
	}
	return nil
}
