package settle

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

// parsedWrite is the syntax of one INSERT, UPDATE or DELETE, as Settle and LWT
// need it.
type parsedWrite struct {
	verb        string // insert, update, delete
	keyspace    string // "" when the statement names none
	table       string
	columns     []columnWrite // INSERT's columns and values, UPDATE's assignments
	deletes     []string      // DELETE's whole columns (none: the row)
	where       []restriction // UPDATE's and DELETE's WHERE
	timestamp   *term         // USING TIMESTAMP
	json        bool
	conditional bool
	ifNotExists bool
	ifExists    bool
	conditions  []restriction // IF c op v …
}

// term is a value expression of the statement.
type term struct {
	toks []cqltext.Token
	raw  string // its source text
	bind int    // index among the statement's bind markers, -1 unless a single marker
}

type writeOp int

const (
	opSet     writeOp = iota // c = v (INSERT values too)
	opAdd                    // c = c + v, c = v + c
	opRemove                 // c = c - v
	opElement                // c[k] = v
	opField                  // c.f = v
	opOther                  // c = c + 1 on a counter, and anything else
)

type columnWrite struct {
	column string
	op     writeOp
	value  term
}

// restriction is `column op value` in WHERE or IF; column is "" when the left side is
// not a plain column (token(), a tuple, c[k], c.f).
type restriction struct {
	column string
	op     string // =, !=, <, in, contains, …
	value  term
}

// parseWrite reads one INSERT, UPDATE or DELETE; the error says why it is not one this
// file can map.
func parseWrite(cql string) (*parsedWrite, error) {
	toks, err := cqltext.Lex(cql)
	if err != nil {
		return nil, fmt.Errorf("not CQL: %v", err)
	}
	stmts := cqltext.Split(toks)
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%d statements in one text", len(stmts))
	}
	t := stmts[0]
	binds := map[int]int{}
	for _, tok := range toks {
		if tok.Kind == cqltext.Bind {
			binds[tok.Pos] = len(binds)
		}
	}
	p := &parser{src: cql, t: t, binds: binds}
	w := &parsedWrite{}
	switch {
	case t[0].Is("insert"):
		w.verb = "insert"
		err = p.insert(w)
	case t[0].Is("update"):
		w.verb = "update"
		err = p.update(w)
	case t[0].Is("delete"):
		w.verb = "delete"
		err = p.delete(w)
	case t[0].Is("begin"):
		return nil, errors.New("a batch written as CQL text (send it as a driver Batch to settle each statement)")
	default:
		return nil, fmt.Errorf("not a write (%s)", t[0].Text)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

type parser struct {
	src   string
	t     []cqltext.Token
	binds map[int]int
}

func (p *parser) term(toks []cqltext.Token) term {
	tm := term{toks: toks, bind: -1}
	if len(toks) > 0 {
		tm.raw = p.src[toks[0].Pos:toks[len(toks)-1].End]
		if len(toks) == 1 && toks[0].Kind == cqltext.Bind {
			tm.bind = p.binds[toks[0].Pos]
		}
	}
	return tm
}

// table reads [keyspace.]table at t[i] and returns the index after it.
func (p *parser) table(w *parsedWrite, i int) (int, error) {
	t := p.t
	if i >= len(t) || cqltext.IdentName(t[i]) == "" {
		return i, errors.New("no table name")
	}
	if i+2 < len(t) && t[i+1].IsPunct(".") {
		if cqltext.IdentName(t[i+2]) == "" {
			return i, errors.New("no table name")
		}
		w.keyspace, w.table = cqltext.IdentName(t[i]), cqltext.IdentName(t[i+2])
		return i + 3, nil
	}
	w.table = cqltext.IdentName(t[i])
	return i + 1, nil
}

func (p *parser) insert(w *parsedWrite) error {
	t := p.t
	if len(t) < 2 || !t[1].Is("into") {
		return errors.New("INSERT without INTO")
	}
	i, err := p.table(w, 2)
	if err != nil {
		return err
	}
	if i < len(t) && t[i].Is("json") {
		w.json = true
		p.tail(w, i+2)
		return nil
	}
	if i >= len(t) || !t[i].IsPunct("(") {
		return errors.New("INSERT without a column list")
	}
	cols := cqltext.InParens(t[i:])
	i += len(cols) + 2
	if i+1 >= len(t) || !t[i].Is("values") || !t[i+1].IsPunct("(") {
		return errors.New("INSERT without VALUES")
	}
	vals := cqltext.InParens(t[i+1:])
	i += len(vals) + 3
	colList, valList := cqltext.SplitTop(cols, ","), cqltext.SplitTop(vals, ",")
	if len(colList) != len(valList) || len(colList) == 0 {
		return fmt.Errorf("INSERT lists %d columns and %d values", len(colList), len(valList))
	}
	for k, c := range colList {
		if len(c) != 1 || cqltext.IdentName(c[0]) == "" || len(valList[k]) == 0 {
			return errors.New("INSERT column list is not plain column names")
		}
		w.columns = append(w.columns, columnWrite{column: cqltext.IdentName(c[0]), op: opSet, value: p.term(valList[k])})
	}
	p.tail(w, i)
	return nil
}

// tail reads the clauses after the body: IF NOT EXISTS / IF EXISTS / IF conditions and
// USING (in either order).
func (p *parser) tail(w *parsedWrite, i int) {
	t := p.t
	for i < len(t) {
		switch {
		case t[i].Is("using"):
			i = p.using(w, i+1)
		case t[i].Is("if"):
			w.conditional = true
			switch {
			case i+2 < len(t) && t[i+1].Is("not") && t[i+2].Is("exists"):
				w.ifNotExists = true
				i += 3
			case i+1 < len(t) && t[i+1].Is("exists"):
				w.ifExists = true
				i += 2
			default:
				end := len(t)
				if u := cqltext.IndexKeyword(t, "using", i+1); u >= 0 {
					end = u
				}
				w.conditions = p.restrictions(t[i+1 : end])
				i = end
			}
		default:
			i++
		}
	}
}

// using reads TTL x AND TIMESTAMP y from t[i]; it returns the index after the clause.
func (p *parser) using(w *parsedWrite, i int) int {
	t := p.t
	for i < len(t) {
		switch {
		case (t[i].Is("timestamp") || t[i].Is("ttl")) && i+1 < len(t):
			j := i + 2
			if t[i+1].IsPunct("-") && j < len(t) {
				j++
			}
			if t[i].Is("timestamp") {
				tm := p.term(t[i+1 : j])
				w.timestamp = &tm
			}
			i = j
			if i < len(t) && t[i].Is("and") {
				i++
				continue
			}
			return i
		default:
			return i
		}
	}
	return i
}

// restrictions reads `a op x AND b op y …`.
func (p *parser) restrictions(t []cqltext.Token) []restriction {
	var out []restriction
	for _, r := range cqltext.SplitTopFunc(t, func(tok cqltext.Token) bool { return tok.Is("and") }) {
		if len(r) == 0 {
			continue
		}
		var col string
		opAt := 1
		if len(r) >= 2 && cqltext.IdentName(r[0]) != "" && !r[1].IsPunct("(") && !r[1].IsPunct("[") && !r[1].IsPunct(".") {
			col = cqltext.IdentName(r[0])
		} else {
			// token(k), (a, b), c[k], c.f: find the operator after the left side
			opAt = -1
			depth := 0
			for j, tok := range r {
				if tok.IsPunct("(") || tok.IsPunct("[") {
					depth++
				} else if tok.IsPunct(")") || tok.IsPunct("]") {
					depth--
				} else if depth == 0 && j > 0 && isOperator(tok) {
					opAt = j
					break
				}
			}
			if opAt < 0 {
				out = append(out, restriction{op: "?", value: p.term(r)})
				continue
			}
		}
		if opAt >= len(r) {
			out = append(out, restriction{column: col, op: "?", value: p.term(r)})
			continue
		}
		op := r[opAt].Text
		if r[opAt].Kind == cqltext.Ident {
			op = r[opAt].Lower
			if op == "contains" && opAt+1 < len(r) && r[opAt+1].Is("key") {
				opAt++
				op = "contains key"
			}
		}
		if !isOperator(r[opAt]) && op != "contains key" {
			op = "?"
		}
		out = append(out, restriction{column: col, op: op, value: p.term(r[opAt+1:])})
	}
	return out
}

func isOperator(t cqltext.Token) bool {
	if t.Kind == cqltext.Punct {
		switch t.Text {
		case "=", "!=", "<", ">", "<=", ">=":
			return true
		}
	}
	return t.Is("in") || t.Is("contains") || t.Is("like")
}

func (p *parser) update(w *parsedWrite) error {
	t := p.t
	i, err := p.table(w, 1)
	if err != nil {
		return err
	}
	if i < len(t) && t[i].Is("using") {
		i = p.using(w, i+1)
	}
	if i >= len(t) || !t[i].Is("set") {
		return errors.New("UPDATE without SET")
	}
	where := cqltext.IndexKeyword(t, "where", i)
	if where < 0 {
		return errors.New("UPDATE without WHERE")
	}
	for _, a := range cqltext.SplitTop(t[i+1:where], ",") {
		cw, err := p.assignment(a)
		if err != nil {
			return err
		}
		w.columns = append(w.columns, cw)
	}
	end := cqltext.IndexKeyword(t, "if", where)
	if end < 0 {
		end = len(t)
	}
	w.where = p.restrictions(t[where+1 : end])
	p.tail(w, end)
	return nil
}

// assignment reads one SET assignment.
func (p *parser) assignment(a []cqltext.Token) (columnWrite, error) {
	eq := -1
	for j, tok := range a {
		if tok.IsPunct("=") {
			eq = j
			break
		}
	}
	if eq < 1 || eq+1 >= len(a) || cqltext.IdentName(a[0]) == "" {
		return columnWrite{}, fmt.Errorf("assignment %q", cqltext.Clause(a))
	}
	col := cqltext.IdentName(a[0])
	rhs := a[eq+1:]
	cw := columnWrite{column: col, op: opSet, value: p.term(rhs)}
	switch {
	case eq > 1 && a[1].IsPunct("["):
		cw.op = opElement
	case eq > 1 && a[1].IsPunct("."):
		cw.op = opField
	case eq > 1:
		return columnWrite{}, fmt.Errorf("assignment %q", cqltext.Clause(a))
	case len(rhs) >= 3 && cqltext.IdentName(rhs[0]) == col && (rhs[1].IsPunct("+") || rhs[1].IsPunct("-")):
		cw.op, cw.value = opAdd, p.term(rhs[2:])
		if rhs[1].IsPunct("-") {
			cw.op = opRemove
		}
		if rhs[2].Kind == cqltext.Number {
			cw.op = opOther // c = c + 1: a counter
		}
	case len(rhs) >= 3 && cqltext.IdentName(rhs[len(rhs)-1]) == col && rhs[len(rhs)-2].IsPunct("+"):
		cw.op, cw.value = opAdd, p.term(rhs[:len(rhs)-2])
	}
	return cw, nil
}

func (p *parser) delete(w *parsedWrite) error {
	t := p.t
	from := cqltext.IndexKeyword(t, "from", 0)
	if from < 0 {
		return errors.New("DELETE without FROM")
	}
	for _, sel := range cqltext.SplitTop(t[1:from], ",") {
		if len(sel) == 0 {
			return errors.New("DELETE selection has an empty item")
		}
		if len(sel) == 1 && cqltext.IdentName(sel[0]) != "" {
			w.deletes = append(w.deletes, cqltext.IdentName(sel[0]))
			continue
		}
		w.columns = append(w.columns, columnWrite{column: cqltext.IdentName(sel[0]), op: opOther}) // c[k], c.f
	}
	i, err := p.table(w, from+1)
	if err != nil {
		return err
	}
	if i < len(t) && t[i].Is("using") {
		i = p.using(w, i+1)
	}
	if i >= len(t) || !t[i].Is("where") {
		return errors.New("DELETE without WHERE")
	}
	end := cqltext.IndexKeyword(t, "if", i)
	if end < 0 {
		end = len(t)
	}
	w.where = p.restrictions(t[i+1 : end])
	p.tail(w, end)
	return nil
}

// termValue is the Go value a term puts in a column of type typ: the bound value, or a
// literal converted. unset reports an UNSET bound value (the driver's, unsetValue).
func termValue(tm *term, typ cqltype.Type, unsetValue any, values []any) (v any, unset bool, err error) {
	if tm.bind >= 0 {
		if tm.bind >= len(values) {
			return nil, false, fmt.Errorf("bind marker %d has no value (%d given)", tm.bind+1, len(values))
		}
		v := values[tm.bind]
		return v, v == unsetValue, nil
	}
	v, err = literalValue(tm, typ)
	return v, false, err
}

// literalValue converts a literal of the statement text to a Go value both drivers bind
// as typ. Literals it does not convert (collections, tuples, functions, durations,
// decimals, user types, …) are an error: the caller settles nothing rather than guess.
func literalValue(tm *term, typ cqltype.Type) (any, error) {
	toks := tm.toks
	if len(toks) == 0 {
		return nil, errors.New("no value")
	}
	if len(toks) == 1 && toks[0].Is("null") {
		return nil, nil
	}
	for _, tok := range toks {
		if tok.Kind == cqltext.Bind || tok.IsPunct("(") || tok.IsPunct("[") || tok.IsPunct("{") {
			return nil, fmt.Errorf("value %q is not a literal it can read (bind it)", clip(tm.raw))
		}
	}
	if typ.Kind == cqltype.Native && typ.Name == "" {
		return nil, errors.New("column type unknown")
	}
	raw := strings.TrimSpace(tm.raw)
	str := len(toks) == 1 && toks[0].Kind == cqltext.String
	bad := fmt.Errorf("literal %q for a %s column is not one it can read (bind it)", clip(raw), typ)
	native := ""
	if typ.Kind == cqltype.Native {
		native = typ.Name
	}
	switch native {
	case "varchar", "text", "ascii", "inet", "date":
		if str {
			return toks[0].Text, nil
		}
	case "int", "bigint", "smallint", "tinyint", "counter", "timestamp":
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil && !str {
			return n, nil
		}
	case "varint":
		if n, ok := new(big.Int).SetString(raw, 10); ok && !str {
			return n, nil
		}
	case "float":
		// Parsed once as a float32 (as Java's Float.parseFloat), not rounded twice
		// through a float64; NaN as Java's canonical NaN, the bits Cassandra stores.
		if f, err := strconv.ParseFloat(raw, 32); err == nil && !str {
			if f != f {
				return math.Float32frombits(0x7fc00000), nil
			}
			return float32(f), nil
		}
	case "double":
		if f, err := strconv.ParseFloat(raw, 64); err == nil && !str {
			if f != f {
				return math.Float64frombits(0x7ff8000000000000), nil
			}
			return f, nil
		}
	case "boolean":
		if len(toks) == 1 && (toks[0].Is("true") || toks[0].Is("false")) {
			return toks[0].Is("true"), nil
		}
	case "uuid", "timeuuid":
		if u, ok := parseUUID(raw); ok && !str {
			return u, nil
		}
	case "blob":
		if len(raw) > 2 && (raw[:2] == "0x" || raw[:2] == "0X") && !str {
			if b, err := hex.DecodeString(raw[2:]); err == nil {
				return b, nil
			}
		}
	}
	return nil, bad
}

// parseUUID reads a UUID literal (8-4-4-4-12 hexadecimal digits) as the [16]byte both
// drivers bind to uuid and timeuuid.
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	h := s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, false
	}
	return u, true
}
