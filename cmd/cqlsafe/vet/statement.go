package vet

import (
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// statement is what the rules need to know about one CQL statement: its table, which
// column each bind marker is bound to, and the literal values of its key conditions.
// It reads the statement shapes gocql code sends; anything else is kindOther.
type statement struct {
	kind      string // "insert", "update", "delete", "select", "batch", "other"
	keyspace  string
	table     string
	json      bool // INSERT JSON: values are not per column
	binds     []bind
	set       []assignment      // INSERT columns or UPDATE assignments, in order
	keyLits   map[string]string // column = literal in WHERE (or INSERT … VALUES literal)
	firstKey  string            // first WHERE column, or first INSERT column
	timestamp bool              // USING TIMESTAMP
	batchType string            // for "batch": "logged", "unlogged" or "counter"
	inner     []*statement      // for "batch"
	bindBase  int               // index of the statement's first bind marker in the text
}

// bind is the role of one positional bind marker.
type bind struct {
	column string // the column it is bound to, "" when not known
	set    bool   // a value written to column (INSERT value, UPDATE c = ?)
	where  bool   // a WHERE (key) value
	using  bool   // USING TTL / TIMESTAMP
}

// assignment is one written column.
type assignment struct {
	column    string
	increment bool // c = c + …, c = … + c: a counter update or collection append
	numeric   bool // the increment adds a number literal: a counter
}

func (s *statement) qualified() string {
	if s.keyspace != "" {
		return s.keyspace + "." + s.table
	}
	return s.table
}

func identName(t cqltext.Token) (string, bool) {
	switch t.Kind {
	case cqltext.Ident:
		return t.Lower, true
	case cqltext.QIdent:
		return t.Text, true
	}
	return "", false
}

// parseStatement reads cql; it returns nil when the text does not lex.
func parseStatement(cql string) *statement {
	toks, err := cqltext.Lex(cql)
	if err != nil || len(toks) == 0 {
		return nil
	}
	stmts := cqltext.Split(toks)
	if len(stmts) != 1 {
		return &statement{kind: "other"}
	}
	n := 0
	return parseTokens(stmts[0], &n)
}

// parseTokens reads one statement; n counts bind markers across a batch's statements.
func parseTokens(toks []cqltext.Token, n *int) *statement {
	s := &statement{kind: "other", keyLits: map[string]string{}, bindBase: *n}
	if len(toks) == 0 {
		return s
	}
	p := &parser{toks: toks, s: s, n: n}
	switch {
	case toks[0].Is("insert"):
		p.insert()
	case toks[0].Is("update"):
		p.update()
	case toks[0].Is("delete"):
		p.delete()
	case toks[0].Is("select"):
		s.kind = "select"
		p.rest(bind{})
	case toks[0].Is("begin"):
		p.batch()
	default:
		p.rest(bind{})
	}
	return s
}

type parser struct {
	toks []cqltext.Token
	i    int
	s    *statement
	n    *int
}

func (p *parser) done() bool { return p.i >= len(p.toks) }
func (p *parser) peek() cqltext.Token {
	if p.done() {
		return cqltext.Token{Kind: cqltext.Punct}
	}
	return p.toks[p.i]
}

// addBind records the next bind marker's role.
func (p *parser) addBind(b bind) {
	p.s.binds = append(p.s.binds, b)
	*p.n++
}

// rest records every remaining bind marker with role b (USING … gets role using).
func (p *parser) rest(b bind) {
	for ; !p.done(); p.i++ {
		t := p.toks[p.i]
		if t.Is("using") {
			b = bind{using: true}
		}
		if t.Kind == cqltext.Bind {
			p.addBind(b)
		}
	}
}

// table reads [keyspace.]table.
func (p *parser) table() bool {
	name, ok := identName(p.peek())
	if !ok {
		return false
	}
	p.i++
	if p.peek().IsPunct(".") {
		p.i++
		tn, ok := identName(p.peek())
		if !ok {
			return false
		}
		p.i++
		p.s.keyspace, p.s.table = name, tn
		return true
	}
	p.s.table = name
	return true
}

// group returns the tokens of a parenthesised list split at top-level commas, with
// p at the token after the closing parenthesis.
func (p *parser) group() ([][]cqltext.Token, bool) {
	if !p.peek().IsPunct("(") {
		return nil, false
	}
	p.i++
	var out [][]cqltext.Token
	var cur []cqltext.Token
	depth := 0
	for ; !p.done(); p.i++ {
		t := p.toks[p.i]
		switch {
		case t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{"):
			depth++
		case t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}"):
			if depth == 0 {
				out = append(out, cur)
				p.i++
				return out, true
			}
			depth--
		case t.IsPunct(",") && depth == 0:
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	return nil, false
}

func (p *parser) insert() {
	s := p.s
	s.kind = "insert"
	p.i = 1
	if !p.peek().Is("into") {
		return
	}
	p.i++
	if !p.table() {
		return
	}
	if p.peek().Is("json") {
		s.json = true
		p.rest(bind{})
		return
	}
	colToks, ok := p.group()
	if !ok {
		return
	}
	var cols []string
	for _, c := range colToks {
		if len(c) != 1 {
			return
		}
		name, ok := identName(c[0])
		if !ok {
			return
		}
		cols = append(cols, name)
	}
	if len(cols) > 0 {
		s.firstKey = cols[0]
	}
	if !p.peek().Is("values") {
		return
	}
	p.i++
	vals, ok := p.group()
	if !ok || len(vals) != len(cols) {
		return
	}
	for k, v := range vals {
		a := assignment{column: cols[k]}
		s.set = append(s.set, a)
		if len(v) == 1 && (v[0].Kind == cqltext.String || v[0].Kind == cqltext.Number) {
			s.keyLits[cols[k]] = v[0].Text
		}
		for _, t := range v {
			if t.Kind == cqltext.Bind {
				p.addBind(bind{column: cols[k], set: len(v) == 1})
			}
		}
	}
	for ; !p.done(); p.i++ {
		t := p.toks[p.i]
		if t.Is("timestamp") {
			s.timestamp = true
		}
		if t.Kind == cqltext.Bind {
			p.addBind(bind{using: true})
		}
	}
}

// using reads USING TTL x AND TIMESTAMP y when present.
func (p *parser) using() {
	if !p.peek().Is("using") {
		return
	}
	p.i++
	for !p.done() && !p.peek().Is("set") && !p.peek().Is("where") {
		t := p.toks[p.i]
		if t.Is("timestamp") {
			p.s.timestamp = true
		}
		if t.Kind == cqltext.Bind {
			p.addBind(bind{using: true})
		}
		p.i++
	}
}

// until returns the tokens up to (not including) a top-level keyword of stop.
func (p *parser) until(stop ...string) []cqltext.Token {
	start := p.i
	depth := 0
	for ; !p.done(); p.i++ {
		t := p.toks[p.i]
		switch {
		case t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{"):
			depth++
		case t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}"):
			depth--
		}
		if depth == 0 {
			for _, kw := range stop {
				if t.Is(kw) {
					return p.toks[start:p.i]
				}
			}
		}
	}
	return p.toks[start:p.i]
}

// splitTop splits toks at top-level punctuation sep (",") or keyword sep ("and").
func splitTop(toks []cqltext.Token, sep string) [][]cqltext.Token {
	var out [][]cqltext.Token
	var cur []cqltext.Token
	depth := 0
	for _, t := range toks {
		switch {
		case t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{"):
			depth++
		case t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}"):
			depth--
		}
		if depth == 0 && (t.IsPunct(sep) || t.Is(sep)) {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func (p *parser) update() {
	s := p.s
	s.kind = "update"
	p.i = 1
	if !p.table() {
		return
	}
	p.using()
	if !p.peek().Is("set") {
		return
	}
	p.i++
	for _, as := range splitTop(p.until("where"), ",") {
		if len(as) == 0 {
			continue
		}
		col, ok := identName(as[0])
		if !ok {
			continue
		}
		eq := 0
		for eq < len(as) && !as[eq].IsPunct("=") {
			eq++
		}
		whole := eq == 1 // c = …, not c[?] = … or c.f = …
		a := assignment{column: col}
		if eq+1 < len(as) {
			rhs := as[eq+1:]
			// c = c + 1, c = c - 3, c = 2 + c: the operand other than c is one number.
			if len(rhs) == 3 && (rhs[1].IsPunct("+") || rhs[1].IsPunct("-")) {
				for k, other := range map[int]int{0: 2, 2: 0} {
					if name, ok := identName(rhs[k]); ok && name == col {
						a.increment = true
						a.numeric = rhs[other].Kind == cqltext.Number
					}
				}
			} else {
				for _, t := range rhs {
					if name, ok := identName(t); ok && name == col {
						a.increment = true
					}
				}
			}
		}
		s.set = append(s.set, a)
		for k, t := range as {
			if t.Kind == cqltext.Bind {
				p.addBind(bind{column: col, set: whole && k == eq+1 && len(as) == eq+2})
			}
		}
	}
	p.where()
}

func (p *parser) delete() {
	s := p.s
	s.kind = "delete"
	p.i = 1
	for _, t := range p.until("from") {
		if t.Kind == cqltext.Bind {
			p.addBind(bind{})
		}
	}
	if !p.peek().Is("from") {
		return
	}
	p.i++
	if !p.table() {
		return
	}
	p.using()
	p.where()
}

// where reads WHERE conditions and then the rest (IF …).
func (p *parser) where() {
	s := p.s
	if !p.peek().Is("where") {
		p.rest(bind{})
		return
	}
	p.i++
	for k, cond := range splitTop(p.until("if"), "and") {
		if len(cond) == 0 {
			continue
		}
		col, _ := identName(cond[0])
		if cond[0].Is("token") {
			col = ""
		}
		if k == 0 {
			s.firstKey = col
		}
		if col != "" && len(cond) == 3 && cond[1].IsPunct("=") && (cond[2].Kind == cqltext.String || cond[2].Kind == cqltext.Number) {
			s.keyLits[col] = cond[2].Text
		}
		for _, t := range cond {
			if t.Kind == cqltext.Bind {
				p.addBind(bind{column: col, where: true})
			}
		}
	}
	p.rest(bind{})
}

func (p *parser) batch() {
	s := p.s
	s.kind = "batch"
	s.batchType = "logged"
	p.i = 1
	for !p.done() && !p.peek().Is("batch") {
		switch {
		case p.peek().Is("unlogged"):
			s.batchType = "unlogged"
		case p.peek().Is("counter"):
			s.batchType = "counter"
		}
		p.i++
	}
	p.i++
	p.using()
	// Inner statements start at INSERT/UPDATE/DELETE and may or may not end with ';'.
	var cur []cqltext.Token
	flush := func() {
		if len(cur) > 0 {
			s.inner = append(s.inner, parseTokens(cur, p.n))
		}
		cur = nil
	}
	for ; !p.done(); p.i++ {
		t := p.toks[p.i]
		switch {
		case t.Is("apply") && p.i+1 < len(p.toks) && p.toks[p.i+1].Is("batch"):
			flush()
			return
		case t.IsPunct(";"):
			flush()
			continue
		case (t.Is("insert") || t.Is("update") || t.Is("delete")) && len(cur) > 0 && !strings.EqualFold(cur[len(cur)-1].Text, "."):
			flush()
		}
		cur = append(cur, t)
	}
	flush()
}

// writes reports whether s changes data.
func (s *statement) writes() bool {
	switch s.kind {
	case "insert", "update", "delete":
		return true
	case "batch":
		return len(s.inner) > 0
	}
	return false
}

// counterUpdate reports whether s adds a number to a column (c = c + 1), or, with a
// schema, updates a counter column.
func (s *statement) counterUpdate(sch *Schema) bool {
	for _, a := range s.set {
		if !a.increment {
			continue
		}
		if a.numeric || sch.kind(s, a.column) == kindCounter {
			return true
		}
	}
	return false
}
