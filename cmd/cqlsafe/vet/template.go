package vet

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// templateCQL reads CQL built from constants and run-time table or keyspace names:
// "UPDATE "+ks+"."+tbl+" SET c = c + 1 WHERE k = ?" or fmt.Sprintf("DELETE FROM %s …",
// tbl). Each run-time part is written as unknownIdent; the CQL is used only when every
// such part is the statement's table or keyspace, so a counter update or a list append
// is judged whatever the table, and nothing else is guessed.
func (c *checker) templateCQL(e ast.Expr) (string, bool) {
	var unknown []string
	cql, ok := c.template(e, &unknown)
	if !ok || len(unknown) == 0 {
		return "", false
	}
	st := parseStatement(cql)
	if st == nil || !complete(st) {
		return "", false
	}
	toks, err := cqltext.Lex(cql)
	if err != nil {
		return "", false
	}
	// Every unknown part must be one whole quoted identifier, and the table or keyspace.
	n := 0
	for _, t := range toks {
		if t.Kind == cqltext.QIdent && strings.HasPrefix(t.Text, "{") && strings.HasSuffix(t.Text, "}") {
			if t.Text != st.table && t.Text != st.keyspace {
				return "", false
			}
			n++
		}
	}
	if n != len(unknown) {
		return "", false
	}
	return cql, true
}

func (c *checker) template(e ast.Expr, unknown *[]string) (string, bool) {
	e = ast.Unparen(e)
	if s, ok := c.constString(e); ok {
		return s, true
	}
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		l, ok := c.template(x.X, unknown)
		if !ok {
			return "", false
		}
		r, ok := c.template(x.Y, unknown)
		return l + r, ok
	case *ast.CallExpr:
		if f := c.callee(x); funcIs(f, func(p string) bool { return p == "fmt" }, "Sprintf") && len(x.Args) >= 1 && !x.Ellipsis.IsValid() {
			return c.sprintf(x, unknown)
		}
	}
	if !isStringTyped(c, e) {
		return "", false
	}
	u := unknownIdent(e)
	*unknown = append(*unknown, u)
	return u, true
}

func isStringTyped(c *checker, e ast.Expr) bool {
	tv, ok := c.pass.TypesInfo.Types[e]
	if !ok || tv.Type == nil {
		return false
	}
	b, ok := tv.Type.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// sprintf expands fmt.Sprintf with a constant format whose verbs are all %s or %v.
func (c *checker) sprintf(call *ast.CallExpr, unknown *[]string) (string, bool) {
	format, ok := c.constString(call.Args[0])
	if !ok {
		return "", false
	}
	args := call.Args[1:]
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		if i+1 >= len(format) {
			return "", false
		}
		i++
		switch format[i] {
		case '%':
			b.WriteByte('%')
		case 's', 'v':
			if len(args) == 0 {
				return "", false
			}
			s, ok := c.template(args[0], unknown)
			if !ok {
				return "", false
			}
			b.WriteString(s)
			args = args[1:]
		default:
			return "", false
		}
	}
	return b.String(), len(args) == 0
}

// complete reports whether st reads as a whole statement: an INSERT with its columns,
// an UPDATE with assignments and a WHERE, a DELETE or SELECT with a table and a WHERE.
func complete(st *statement) bool {
	switch st.kind {
	case "insert":
		return st.table != "" && (len(st.set) > 0 || st.json)
	case "update":
		return st.table != "" && len(st.set) > 0 && st.firstKey != ""
	case "delete":
		return st.table != "" && st.firstKey != ""
	case "select":
		return true
	}
	return false
}
