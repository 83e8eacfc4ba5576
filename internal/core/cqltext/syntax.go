package cqltext

import (
	"fmt"
	"slices"
	"strings"
)

// SyntaxError is a statement Cassandra's parser would refuse: where (a byte offset in
// the statement) and what.
type SyntaxError struct {
	Pos    int
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("syntax error at offset %d: %s", e.Pos, e.Reason)
}

// statementStarts are the first keywords of the statements CheckSyntax leaves to others
// (schema and access control), besides the ones it parses.
var statementStarts = []string{"create", "alter", "drop", "grant", "revoke", "list", "describe", "desc", "add"}

// reserved are Cassandra's reserved keywords (the CQL reference, appendix A): never an
// unquoted name. NULL, NAN and INFINITY are values.
var reserved = []string{"add", "allow", "alter", "and", "apply", "asc", "authorize", "batch", "begin", "by",
	"columnfamily", "create", "delete", "desc", "describe", "drop", "entries", "execute", "from", "full", "grant",
	"if", "in", "index", "infinity", "insert", "into", "keyspace", "limit", "modify", "nan", "norecursive", "not",
	"null", "of", "on", "or", "order", "primary", "rename", "revoke", "schema", "select", "set", "table",
	"to", "token", "truncate", "unlogged", "update", "use", "using", "view", "where", "with"}

// CheckSyntax parses one statement's tokens as Cassandra's grammar reads the data
// statements — SELECT, INSERT, UPDATE, DELETE, BEGIN … APPLY BATCH, USE, TRUNCATE — and
// returns where it first goes wrong. Schema and access-control statements (CREATE,
// ALTER, DROP, GRANT, …) are not checked here; any other first word is an error. It
// accepts a little more than Cassandra does (clauses in either order, any function
// name), never less.
func CheckSyntax(toks []Token) (err *SyntaxError) {
	if len(toks) == 0 {
		return nil
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*SyntaxError)
			if !ok {
				panic(r)
			}
			err = se
		}
	}()
	p.statement()
	return nil
}

type parser struct {
	toks []Token
	i    int
}

func (p *parser) peek() Token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	end := 0
	if n := len(p.toks); n > 0 {
		end = p.toks[n-1].End
	}
	return Token{Kind: Punct, Text: "", Pos: end}
}

func (p *parser) eof() bool { return p.i >= len(p.toks) }

func (p *parser) fail(format string, args ...any) {
	t := p.peek()
	what := fmt.Sprintf("%q", t.Text)
	if p.eof() {
		what = "the end of the statement"
	}
	panic(&SyntaxError{Pos: t.Pos, Reason: fmt.Sprintf(format, args...) + ", found " + what})
}

func (p *parser) kw(k string) bool {
	if p.peek().Is(k) {
		p.i++
		return true
	}
	return false
}

func (p *parser) punct(s string) bool {
	if !p.eof() && p.peek().IsPunct(s) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectKw(k string) {
	if !p.kw(k) {
		p.fail("expected %s", strings.ToUpper(k))
	}
}

func (p *parser) expectPunct(s string) {
	if !p.punct(s) {
		p.fail("expected %q", s)
	}
}

func (p *parser) isName(t Token) bool {
	return t.Kind == QIdent || t.Kind == Ident && !slices.Contains(reserved, t.Lower)
}

// name is an identifier: a column, table, keyspace, field or function name.
func (p *parser) name(what string) {
	if p.eof() || !p.isName(p.peek()) {
		p.fail("expected %s", what)
	}
	p.i++
}

func (p *parser) table() {
	p.name("a table name")
	if p.punct(".") {
		p.name("a table name after the keyspace")
	}
}

func (p *parser) statement() {
	t := p.peek()
	switch {
	case t.Is("select"):
		p.i++
		p.selectStmt()
	case t.Is("insert"):
		p.i++
		p.insert()
	case t.Is("update"):
		p.i++
		p.update()
	case t.Is("delete"):
		p.i++
		p.delete()
	case t.Is("begin"):
		p.i++
		p.batch()
	case t.Is("use"):
		p.i++
		p.name("a keyspace name")
	case t.Is("truncate"):
		p.i++
		if !p.kw("table") {
			p.kw("columnfamily")
		}
		p.table()
	case t.Kind == Ident && slices.Contains(statementStarts, t.Lower):
		return // schema and access control: not checked here
	default:
		p.fail("expected a statement (SELECT, INSERT, UPDATE, DELETE, BEGIN BATCH, USE, TRUNCATE, CREATE, ALTER, DROP, …)")
	}
	p.punct(";")
	if !p.eof() {
		p.fail("expected the end of the statement")
	}
}

func (p *parser) insert() {
	p.expectKw("into")
	p.table()
	if p.kw("json") {
		p.term()
		if p.kw("default") {
			if !p.kw("null") && !p.kw("unset") {
				p.fail("expected NULL or UNSET after DEFAULT")
			}
		}
	} else {
		p.expectPunct("(")
		cols := 0
		p.commaList(func() {
			p.name("a column name")
			cols++
		})
		p.expectPunct(")")
		p.expectKw("values")
		at := p.peek().Pos
		p.expectPunct("(")
		vals := 0
		p.commaList(func() {
			p.term()
			vals++
		})
		p.expectPunct(")")
		if cols != vals {
			panic(&SyntaxError{Pos: at, Reason: fmt.Sprintf("%d columns but %d values", cols, vals)})
		}
	}
	for range 2 { // IF NOT EXISTS and USING, in either order
		if p.kw("if") {
			p.expectKw("not")
			p.expectKw("exists")
		}
		if p.peek().Is("using") {
			p.using()
		}
	}
}

func (p *parser) using() {
	p.expectKw("using")
	for {
		if !p.kw("ttl") && !p.kw("timestamp") {
			p.fail("expected TTL or TIMESTAMP")
		}
		p.term()
		if !p.kw("and") {
			return
		}
	}
}

func (p *parser) update() {
	p.table()
	if p.peek().Is("using") {
		p.using()
	}
	p.expectKw("set")
	p.commaList(p.assignment)
	p.expectKw("where")
	p.relations()
	p.ifClause()
}

func (p *parser) assignment() {
	p.name("a column name")
	switch {
	case p.punct("["):
		p.term()
		p.expectPunct("]")
		p.expectPunct("=")
		p.term()
	case p.punct("."):
		p.name("a field name")
		p.expectPunct("=")
		p.term()
	case p.punct("+"), p.punct("-"):
		p.expectPunct("=")
		p.term()
	default:
		p.expectPunct("=")
		p.term()
	}
}

func (p *parser) ifClause() {
	if !p.kw("if") {
		return
	}
	if p.peek().Is("exists") && (p.i+1 >= len(p.toks) || p.toks[p.i+1].IsPunct(";") || p.toks[p.i+1].Is("apply") ||
		p.toks[p.i+1].Is("insert") || p.toks[p.i+1].Is("update") || p.toks[p.i+1].Is("delete")) {
		p.i++ // IF EXISTS (exists is unreserved: IF exists = 1 is a condition on a column)
		return
	}
	for {
		p.name("a column name in the condition")
		if p.punct("[") {
			p.term()
			p.expectPunct("]")
		} else if p.punct(".") {
			p.name("a field name")
		}
		p.comparison()
		if !p.kw("and") {
			return
		}
	}
}

// comparison is what follows a column in a condition or relation.
func (p *parser) comparison() {
	t := p.peek()
	switch {
	case t.Kind == Punct && slices.Contains([]string{"=", "<", ">", "<=", ">=", "!="}, t.Text):
		p.i++
		p.term()
	case p.kw("in"):
		p.inValues()
	case p.kw("contains"):
		p.kw("key")
		p.term()
	case p.kw("like"):
		p.term()
	case p.kw("is"):
		p.expectKw("not")
		p.expectKw("null")
	case p.kw("between"):
		p.term()
		p.expectKw("and")
		p.term()
	default:
		p.fail("expected an operator (=, <, >, <=, >=, !=, IN, CONTAINS, LIKE)")
	}
}

func (p *parser) inValues() {
	if p.peek().Kind == Bind {
		p.i++
		return
	}
	p.expectPunct("(")
	if p.punct(")") {
		return
	}
	p.commaList(p.term)
	p.expectPunct(")")
}

func (p *parser) relations() {
	for {
		p.relation()
		if !p.kw("and") {
			return
		}
	}
}

func (p *parser) relation() {
	switch {
	case p.peek().Is("token") && p.i+1 < len(p.toks) && p.toks[p.i+1].IsPunct("("):
		p.i++
		p.nameList()
		p.comparison()
	case p.peek().Is("expr") && p.i+1 < len(p.toks) && p.toks[p.i+1].IsPunct("("):
		// A custom index expression: expr(index, term).
		p.i += 2
		p.name("an index name")
		p.expectPunct(",")
		p.term()
		p.expectPunct(")")
	case !p.eof() && p.peek().IsPunct("(") && p.tupleOfNames():
		p.nameList()
		p.comparison()
	case p.punct("("):
		p.relation() // a relation in parentheses
		p.expectPunct(")")
	default:
		p.name("a column name in the WHERE clause")
		if p.punct("[") {
			p.term()
			p.expectPunct("]")
		}
		p.comparison()
	}
}

// tupleOfNames: at '(', a list of column names follows — (a, b) > … — not a relation in
// parentheses.
func (p *parser) tupleOfNames() bool {
	j := p.i + 1
	if j+1 >= len(p.toks) || !p.isName(p.toks[j]) {
		return false
	}
	n := p.toks[j+1]
	return n.IsPunct(",") || n.IsPunct(")")
}

func (p *parser) nameList() {
	p.expectPunct("(")
	p.commaList(func() {
		p.name("a column name")
	})
	p.expectPunct(")")
}

func (p *parser) delete() {
	if !p.peek().Is("from") {
		p.commaList(func() {
			p.name("a column name or FROM")
			if p.punct("[") {
				p.term()
				p.expectPunct("]")
			} else if p.punct(".") {
				p.name("a field name")
			}
		})
	}
	p.expectKw("from")
	p.table()
	if p.peek().Is("using") {
		p.using()
	}
	p.expectKw("where")
	p.relations()
	p.ifClause()
}

func (p *parser) selectStmt() {
	// JSON and DISTINCT are keywords only when a selection follows them; otherwise they
	// name a column (both are unreserved).
	if p.peek().Is("json") && p.selectionFollows() {
		p.i++
	}
	if p.peek().Is("distinct") && p.selectionFollows() {
		p.i++
	}
	if !p.punct("*") {
		p.commaList(func() {
			p.term()
			if p.kw("as") {
				p.name("an alias")
			}
		})
	}
	p.expectKw("from")
	p.table()
	if p.kw("where") {
		p.relations()
	}
	if p.kw("group") {
		p.expectKw("by")
		p.commaList(p.term)
	}
	if p.kw("order") {
		p.expectKw("by")
		p.commaList(func() {
			p.name("a column name")
			if p.kw("ann") {
				p.expectKw("of")
				p.term()
			}
			if !p.kw("asc") {
				p.kw("desc")
			}
		})
	}
	if p.kw("per") {
		p.expectKw("partition")
		p.expectKw("limit")
		p.term()
	}
	if p.kw("limit") {
		p.term()
	}
	if p.kw("allow") {
		p.expectKw("filtering")
	}
	if p.kw("with") { // 5.0: WITH ann_options = {…}
		p.name("an option name")
		p.expectPunct("=")
		p.term()
	}
}

// selectionFollows: the token after the current one can begin a selection (so the
// current one is a keyword, not a column name).
func (p *parser) selectionFollows() bool {
	if p.i+1 >= len(p.toks) {
		return false
	}
	n := p.toks[p.i+1]
	switch {
	case n.Is("from"), n.Is("as"):
		return false
	case n.Kind == Punct:
		return n.Text == "*" || n.Text == "(" || n.Text == "[" || n.Text == "{" || n.Text == "-"
	}
	return true
}

func (p *parser) batch() {
	if !p.kw("unlogged") {
		p.kw("counter")
	}
	p.expectKw("batch")
	if p.peek().Is("using") {
		p.using()
	}
	for {
		switch {
		case p.kw("insert"):
			p.insert()
		case p.kw("update"):
			p.update()
		case p.kw("delete"):
			p.delete()
		case p.kw("apply"):
			p.expectKw("batch")
			return
		default:
			p.fail("expected INSERT, UPDATE, DELETE or APPLY BATCH")
		}
		p.punct(";")
	}
}

// term is a value: a literal, a bind marker, a name (a column in arithmetic, a uuid's
// pieces), a function call, a collection, tuple or UDT literal, a type cast, with
// arithmetic, element access and field access.
func (p *parser) term() {
	p.unary()
	for {
		t := p.peek()
		if p.eof() || t.Kind != Punct || !slices.Contains([]string{"+", "-", "*", "/"}, t.Text) {
			return
		}
		p.i++
		p.unary()
	}
}

func (p *parser) unary() {
	if p.punct("-") {
		p.unary()
		return
	}
	p.primary()
	for { // element and field access
		switch {
		case p.isoTimeColon():
			p.i += 2 // P0001-02-03T04:05:06, a duration in ISO 8601's alternative form
		case p.punct("["):
			// An element, or a slice: [a..b], [..b], [a..].
			if !p.rangeDots() {
				p.term()
				if p.rangeDots() && !p.peek().IsPunct("]") {
					p.term()
				}
			} else {
				p.term()
			}
			p.expectPunct("]")
		case !p.eof() && p.peek().IsPunct(".") && p.i+1 < len(p.toks) && (p.isName(p.toks[p.i+1]) || p.toks[p.i+1].Is("token")):
			p.i += 2
			if p.punct("(") { // a function named with its keyspace
				p.args()
			}
		default:
			return
		}
	}
}

// isoTimeColon: a ':' written against the number before and after it — the time part of
// an ISO 8601 duration (PT04:05:06), which the lexer splits.
func (p *parser) isoTimeColon() bool {
	if p.i == 0 || p.i+1 >= len(p.toks) {
		return false
	}
	prev, c, next := p.toks[p.i-1], p.toks[p.i], p.toks[p.i+1]
	return c.IsPunct(":") && next.Kind == Number && prev.End == c.Pos && c.End == next.Pos &&
		(prev.Kind == Number || prev.Kind == Ident)
}

// commaList parses item, then again after each comma.
func (p *parser) commaList(item func()) {
	for {
		item()
		if !p.punct(",") {
			return
		}
	}
}

// rangeDots consumes "..", a slice's range.
func (p *parser) rangeDots() bool {
	if p.i+1 < len(p.toks) && p.toks[p.i].IsPunct(".") && p.toks[p.i+1].IsPunct(".") {
		p.i += 2
		return true
	}
	return false
}

func (p *parser) primary() {
	t := p.peek()
	switch {
	case p.eof():
		p.fail("expected a value")
	case t.Kind == String, t.Kind == Number, t.Kind == Bind:
		p.i++
	case t.IsPunct(":") && p.i+1 < len(p.toks) && p.isName(p.toks[p.i+1]):
		p.i += 2 // a named marker written with a space: ": name"
	case t.Kind == QIdent:
		p.i++
		if p.punct("(") {
			p.args()
		}
	case t.Is("null"), t.Is("nan"), t.Is("infinity"):
		p.i++
	case t.Kind == Ident:
		if slices.Contains(reserved, t.Lower) && !t.Is("token") {
			p.fail("expected a value")
		}
		p.i++
		if p.punct("(") {
			if t.Is("cast") {
				p.term()
				p.expectKw("as")
				p.typeName()
				p.expectPunct(")")
				return
			}
			p.args()
		}
	case p.punct("("):
		// A tuple, or a type cast: (int) ?
		if p.isTypeCast() {
			p.typeName()
			p.expectPunct(")")
			p.unary()
			return
		}
		p.commaList(p.term)
		p.expectPunct(")")
	case p.punct("["):
		if p.punct("]") {
			return
		}
		p.commaList(p.term)
		p.expectPunct("]")
	case p.punct("{"):
		if p.punct("}") {
			return
		}
		p.commaList(func() {
			p.term()
			if p.punct(":") {
				p.term()
			}
		})
		p.expectPunct("}")
	default:
		p.fail("expected a value")
	}
}

// isTypeCast: after '(', a type name — list<int>, a quoted or keyspace-qualified user
// type, a class name string — and ')' followed by a value.
func (p *parser) isTypeCast() bool {
	j := p.i
	if j >= len(p.toks) {
		return false
	}
	switch t := p.toks[j]; {
	case t.Kind == String, t.Kind == QIdent, t.Kind == Ident:
	default:
		return false
	}
	j++
	if j+1 < len(p.toks) && p.toks[j].IsPunct(".") && p.isName(p.toks[j+1]) {
		j += 2 // ks.type
	}
	if j < len(p.toks) && p.toks[j].IsPunct("<") {
		for depth := 0; j < len(p.toks); j++ {
			if p.toks[j].IsPunct("<") {
				depth++
			} else if p.toks[j].IsPunct(">") {
				if depth--; depth == 0 {
					j++
					break
				}
			}
		}
	}
	if j+1 >= len(p.toks) || !p.toks[j].IsPunct(")") {
		return false
	}
	n := p.toks[j+1]
	return n.Kind == Bind || n.Kind == String || n.Kind == Number || n.IsPunct("(") || n.IsPunct("[") || n.IsPunct("{") ||
		n.IsPunct("-") || n.Is("null") || n.Is("nan") || n.Is("infinity") || n.IsPunct(":") ||
		n.Kind == QIdent || n.Kind == Ident && !slices.Contains(reserved, n.Lower) || n.Is("token")
}

func (p *parser) typeName() {
	if p.peek().Kind == String { // a class name
		p.i++
		return
	}
	p.name("a type")
	if p.punct(".") {
		p.name("a type name after the keyspace")
	}
	if p.punct("<") {
		depth := 1
		for depth > 0 {
			switch {
			case p.eof():
				p.fail("expected '>'")
			case p.punct("<"):
				depth++
			case p.punct(">"):
				depth--
			default:
				p.i++
			}
		}
	}
}

func (p *parser) args() {
	if p.punct(")") {
		return
	}
	p.commaList(func() {
		if !p.punct("*") { // count(*)
			p.term()
		}
	})
	p.expectPunct(")")
}
