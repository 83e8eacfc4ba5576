package vet

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"github.com/scylladb/gocqlx/v2/qb"
)

// qbFuncs are the qb functions a constant builder chain may start from or use.
var qbFuncs = map[string]any{
	"Insert": qb.Insert, "Update": qb.Update, "Delete": qb.Delete, "Select": qb.Select,
	"Eq": qb.Eq, "EqLit": qb.EqLit, "EqNamed": qb.EqNamed, "EqTuple": qb.EqTuple,
	"Ne": qb.Ne, "NeLit": qb.NeLit, "NeNamed": qb.NeNamed,
	"Lt": qb.Lt, "LtLit": qb.LtLit, "LtNamed": qb.LtNamed, "LtOrEq": qb.LtOrEq, "LtOrEqNamed": qb.LtOrEqNamed,
	"Gt": qb.Gt, "GtLit": qb.GtLit, "GtNamed": qb.GtNamed, "GtOrEq": qb.GtOrEq, "GtOrEqNamed": qb.GtOrEqNamed,
	"In": qb.In, "InLit": qb.InLit, "InNamed": qb.InNamed, "InTuple": qb.InTuple,
	"Contains": qb.Contains, "ContainsKey": qb.ContainsKey, "ContainsLit": qb.ContainsLit,
	"Like": qb.Like,
}

// qbStarts are the qb functions whose first argument is a table name.
var qbStarts = map[string]bool{"Insert": true, "Update": true, "Delete": true, "Select": true}

// evalQB builds the CQL of a qb builder chain whose every argument is a constant,
// by running the chain through gocqlx's own qb package. The chain may start at a table
// model's builder (tbl.UpdateBuilder("a")), and its table name may be unknown: it is
// then written as the quoted identifier "{expr}", so that the statement's own rules
// are still judged.
func (c *checker) evalQB(e ast.Expr) (cql string, ok bool) {
	defer func() {
		if recover() != nil {
			cql, ok = "", false
		}
	}()
	v, ok := c.qbValue(e)
	if !ok {
		return "", false
	}
	m := v.MethodByName("ToCql")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 2 {
		return "", false
	}
	return m.Call(nil)[0].String(), true
}

// stmtOf reads the CQL of a call returning (stmt, names): a qb builder's ToCql() or a
// table model's Insert(), Update("a"), …
func (c *checker) stmtOf(e ast.Expr) (string, bool) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return "", false
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ToCql" {
		return c.evalQB(sel.X)
	}
	if name, _ := c.modelMethod(call); name != "" && modelStmts[name] != "" && !strings.Contains(name, "Query") {
		v, why := c.modelCall(call)
		if why == "" && v.Kind() == reflect.String {
			return v.String(), true
		}
	}
	return "", false
}

// unknownIdent is how a table or keyspace name known only at run time is written in
// the CQL the analyzer judges: a quoted identifier no schema names.
func unknownIdent(e ast.Expr) string {
	return `"{` + strings.ReplaceAll(types.ExprString(e), `"`, "'") + `}"`
}

// tableName returns the table name e stands for: a constant, a known model's Name(),
// or else unknownIdent(e).
func (c *checker) tableName(e ast.Expr) string {
	if s, ok := c.constString(e); ok {
		return s
	}
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		if name, recv := c.modelMethod(call); name == "Name" {
			if m, why := c.modelOf(recv, 0); why == "" {
				return m.Name
			}
		}
	}
	return unknownIdent(e)
}

func (c *checker) qbValue(e ast.Expr) (reflect.Value, bool) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || call.Ellipsis.IsValid() {
		return reflect.Value{}, false
	}
	f := c.callee(call)
	if f == nil || f.Pkg() == nil || !isQB(f.Pkg().Path()) && !isTable(f.Pkg().Path()) {
		return reflect.Value{}, false
	}
	if name, _ := c.modelMethod(call); name != "" {
		v, why := c.modelCall(call)
		return v, why == "" && v.Kind() != reflect.String
	}
	var fn reflect.Value
	if f.Type().(*types.Signature).Recv() == nil {
		x, ok := qbFuncs[f.Name()]
		if !ok {
			return reflect.Value{}, false
		}
		fn = reflect.ValueOf(x)
	} else {
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return reflect.Value{}, false
		}
		recv, ok := c.qbValue(sel.X)
		if !ok {
			return reflect.Value{}, false
		}
		fn = recv.MethodByName(f.Name())
	}
	if !fn.IsValid() {
		return reflect.Value{}, false
	}
	t := fn.Type()
	var args []reflect.Value
	starts := f.Type().(*types.Signature).Recv() == nil && qbStarts[f.Name()]
	for i, a := range call.Args {
		if i == 0 && starts {
			args = append(args, reflect.ValueOf(c.tableName(a)))
			continue
		}
		var pt reflect.Type
		switch {
		case t.IsVariadic() && i >= t.NumIn()-1:
			pt = t.In(t.NumIn() - 1).Elem()
		case i < t.NumIn():
			pt = t.In(i)
		default:
			return reflect.Value{}, false
		}
		av, ok := c.qbArg(a, pt)
		if !ok {
			return reflect.Value{}, false
		}
		args = append(args, av)
	}
	out := fn.Call(args)
	if len(out) != 1 {
		return reflect.Value{}, false
	}
	return out[0], true
}

// qbNote says why the qb chain e cannot be read, and whether it reads or writes, from
// the call it starts with: a qb function (qb.Select reads) or a table model's builder
// (whose model may be the reason).
func (c *checker) qbNote(e ast.Expr) (kind, why string) {
	why = "a gocqlx qb builder chain with an argument that is not a constant (only its table name may be)"
	for depth := 0; depth < 64; depth++ {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return "", why
		}
		if name, _ := c.modelMethod(call); name != "" {
			if _, w := c.modelCall(call); w != "" {
				why = "a gocqlx qb builder chain from a table model: " + w
			}
			return modelKind(strings.TrimSuffix(name, "Builder")), why
		}
		f := c.callee(call)
		if f == nil {
			return "", why
		}
		if f.Type().(*types.Signature).Recv() == nil {
			switch f.Name() {
			case "Select":
				return kindRead, why
			case "Insert", "Update", "Delete":
				return kindWrite, why
			}
			return "", why
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return "", why
		}
		e = sel.X
	}
	return "", why
}

// qbArg converts a constant (or a nested qb call) to a parameter of type pt.
func (c *checker) qbArg(a ast.Expr, pt reflect.Type) (reflect.Value, bool) {
	if v := c.pass.TypesInfo.Types[a].Value; v != nil {
		var x any
		switch v.Kind() {
		case constant.String:
			x = constant.StringVal(v)
		case constant.Int:
			n, ok := constant.Int64Val(v)
			if !ok {
				return reflect.Value{}, false
			}
			x = n
		case constant.Bool:
			x = constant.BoolVal(v)
		default:
			return reflect.Value{}, false
		}
		rv := reflect.ValueOf(x)
		if !rv.CanConvert(pt) || rv.Kind() != pt.Kind() && !(rv.Kind() == reflect.Int64 && pt.Kind() >= reflect.Int && pt.Kind() <= reflect.Uint64) {
			return reflect.Value{}, false
		}
		return rv.Convert(pt), true
	}
	v, ok := c.qbValue(a)
	if !ok || !v.Type().AssignableTo(pt) {
		return reflect.Value{}, false
	}
	return v, true
}

// findToCql records variables assigned from a constant builder's ToCql() or a table
// model's statement: stmt, names := qb.Insert("t").Columns("a").ToCql(),
// stmt, names := tbl.Update("a").
func (c *checker) findToCql() {
	// Only a variable (or field) assigned once, whose address is not taken, holds
	// the statement it was given: stmt, names reused for a second statement hold
	// either.
	assigned := map[types.Object]int{}
	for _, f := range c.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if obj := c.objOf(l); obj != nil {
						assigned[obj]++
					}
				}
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					if obj := c.objOf(n.X); obj != nil {
						assigned[obj] += 2
					}
				}
			case *ast.RangeStmt:
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if obj := c.objOf(e); obj != nil {
						assigned[obj] += 2
					}
				}
			}
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Rhs) != 1 || len(as.Lhs) != 2 {
				return true
			}
			if cql, ok := c.stmtOf(as.Rhs[0]); ok {
				if obj := c.objOf(as.Lhs[0]); obj != nil {
					c.toCql[obj] = cql
				}
			}
			return true
		})
	}
	for obj := range c.toCql {
		if assigned[obj] != 1 {
			delete(c.toCql, obj)
			c.toCqlMulti[obj] = true
		}
	}
}

// toCqlOf returns the CQL of a variable assigned from a constant builder's ToCql().
func (c *checker) toCqlOf(e ast.Expr) (string, bool) {
	obj := c.objOf(e)
	if obj == nil {
		return "", false
	}
	cql, ok := c.toCql[obj]
	return cql, ok
}
