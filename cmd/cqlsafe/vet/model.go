package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"github.com/scylladb/gocqlx/v2/qb"
	"github.com/scylladb/gocqlx/v2/table"
)

// gocqlx table models: table.New(table.Metadata{…}) carries a table's name, columns
// and keys, and its methods (Insert, UpdateQuery, DeleteBuilder, …) build statements
// from them. The analyzer builds the same statements by running gocqlx's own table
// package (v2's: v3's builds the same CQL) on Metadata it reads from the source.

func isTable(path string) bool {
	return strings.HasSuffix(path, "/table") && isGocqlx(strings.TrimSuffix(path, "/table"))
}

// modelFact is what the analyzer knows of a package-level variable holding a table
// model (or its Metadata), for the packages that import it: schemagen writes the models
// in a package of their own.
type modelFact struct {
	Meta   table.Metadata
	Reason string // not empty: the Metadata is not a constant, and why
}

func (*modelFact) AFact() {}

func (f *modelFact) String() string {
	if f.Reason != "" {
		return "model(" + f.Reason + ")"
	}
	return "model(" + f.Meta.Name + ")"
}

// modelStmts maps a model's methods to the method that builds their statement: the
// *Query and *QueryContext forms run the statement of their plain form.
var modelStmts = map[string]string{
	"Get": "Get", "GetQuery": "Get", "GetQueryContext": "Get",
	"Select": "Select", "SelectQuery": "Select", "SelectQueryContext": "Select",
	"SelectAll": "SelectAll",
	"Insert":    "Insert", "InsertQuery": "Insert", "InsertQueryContext": "Insert",
	"Update": "Update", "UpdateQuery": "Update", "UpdateQueryContext": "Update",
	"Delete": "Delete", "DeleteQuery": "Delete", "DeleteQueryContext": "Delete",
}

// modelBuilders are the model's methods that return a qb builder.
var modelBuilders = map[string]bool{"InsertBuilder": true, "UpdateBuilder": true, "DeleteBuilder": true, "SelectBuilder": true, "GetBuilder": true}

// modelMethod returns the name of a table model method call calls, and its receiver.
func (c *checker) modelMethod(call *ast.CallExpr) (string, ast.Expr) {
	f := c.callee(call)
	n := recvNamed(f)
	if n == nil || n.Obj().Pkg() == nil || !isTable(n.Obj().Pkg().Path()) || n.Obj().Name() != "Table" {
		return "", nil
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", nil
	}
	return f.Name(), sel.X
}

// readInits records the initial value of every variable assigned nowhere else: a
// package-level var's initializer, a local's var or := definition.
func (c *checker) readInits() {
	for _, in := range c.pass.TypesInfo.InitOrder {
		if len(in.Lhs) == 1 {
			c.inits[in.Lhs[0]] = in.Rhs
		}
	}
	for _, f := range c.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for k, l := range n.Lhs {
					id, ok := ast.Unparen(l).(*ast.Ident)
					if n.Tok == token.DEFINE && ok && c.pass.TypesInfo.Defs[id] != nil {
						if len(n.Lhs) == len(n.Rhs) {
							c.inits[c.pass.TypesInfo.Defs[id]] = n.Rhs[k]
						}
						continue
					}
					if obj := c.objOf(l); obj != nil {
						c.reassigned[obj] = true
					}
					if obj := c.rootVar(l); obj != nil {
						c.reassigned[obj] = true // m.Name = …, cols[0] = …: its value changes
					}
				}
			case *ast.ValueSpec:
				if len(n.Names) == len(n.Values) {
					for k, name := range n.Names {
						if obj := c.pass.TypesInfo.Defs[name]; obj != nil {
							c.inits[obj] = n.Values[k]
						}
					}
				}
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					if obj := c.objOf(n.X); obj != nil {
						c.reassigned[obj] = true // its address is taken: it may change
					}
				}
			}
			return true
		})
	}
}

// rootVar returns the variable whose value an assignment to e changes in part: m for
// m.Columns, m.Columns[0] or (*p).Name; nil when e is the variable itself.
func (c *checker) rootVar(e ast.Expr) types.Object {
	part := false
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			if s := c.pass.TypesInfo.Selections[x]; s == nil || s.Kind() != types.FieldVal {
				if !part {
					return nil
				}
				return c.pass.TypesInfo.ObjectOf(x.Sel) // pkg.Var.Field
			}
			e, part = x.X, true
		case *ast.IndexExpr:
			e, part = x.X, true
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			if !part {
				return nil
			}
			if v, ok := c.pass.TypesInfo.ObjectOf(x).(*types.Var); ok {
				return v
			}
			return nil
		default:
			return nil
		}
	}
}

// exportModels records a fact on each package-level variable that holds a table model
// or its Metadata.
func (c *checker) exportModels() {
	for _, in := range c.pass.TypesInfo.InitOrder {
		if len(in.Lhs) != 1 || !isModelType(in.Lhs[0].Type()) {
			continue
		}
		c.exportModel(in.Lhs[0])
	}
}

// exportModel records v's fact. The analyzer runs on every dependency for its facts:
// no code in one of them may crash it, so a failure to read the Metadata is recorded
// as the reason.
func (c *checker) exportModel(v *types.Var) {
	defer func() {
		if r := recover(); r != nil {
			c.pass.ExportObjectFact(v, &modelFact{Reason: fmt.Sprintf("vet failed to read it: %v", r)})
		}
	}()
	m, why := c.modelOfVar(v, v.Name(), 0)
	c.pass.ExportObjectFact(v, &modelFact{Meta: m, Reason: why})
}

func isModelType(t types.Type) bool {
	n := namedOf(t)
	return n != nil && n.Obj().Pkg() != nil && isTable(n.Obj().Pkg().Path()) && (n.Obj().Name() == "Table" || n.Obj().Name() == "Metadata")
}

// modelOf reads the Metadata of e, a table model or a table.Metadata, or says why it
// cannot: the reason starts with e as written.
func (c *checker) modelOf(e ast.Expr, depth int) (table.Metadata, string) {
	e = ast.Unparen(e)
	src := types.ExprString(e)
	if depth > 8 {
		return table.Metadata{}, src + " is defined through too many variables"
	}
	switch x := e.(type) {
	case *ast.CallExpr:
		f := c.callee(x)
		switch {
		case funcIs(f, isTable, "New") && len(x.Args) == 1:
			return c.modelOf(x.Args[0], depth+1)
		case f != nil && f.Name() == "Metadata" && methodOf(f, isTable, "Table"):
			// (users.Metadata)(): the callee is found through the parentheses.
			if sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr); ok {
				return c.modelOf(sel.X, depth+1)
			}
			return table.Metadata{}, src + " is a method value vet does not follow"
		}
		return table.Metadata{}, src + " is returned by a function: vet does not follow it"
	case *ast.CompositeLit:
		return c.metadataLit(x)
	case *ast.Ident, *ast.SelectorExpr:
		if t := c.pass.TypesInfo.TypeOf(e); t != nil && !isModelType(t) {
			// struct{ *table.Table }: the model's methods are promoted from a field.
			return table.Metadata{}, src + " embeds the table model: vet does not follow the value stored in it"
		}
		if sel, ok := x.(*ast.SelectorExpr); ok {
			if s := c.pass.TypesInfo.Selections[sel]; s != nil && s.Kind() == types.FieldVal {
				return table.Metadata{}, src + " is a struct field: vet does not follow the value stored in it"
			}
		}
		v, ok := c.objOf(e).(*types.Var)
		if !ok {
			return table.Metadata{}, src + " is not a variable vet can read"
		}
		return c.modelOfVar(v, src, depth)
	}
	return table.Metadata{}, src + " is not a table.New of constant Metadata"
}

func (c *checker) modelOfVar(v *types.Var, src string, depth int) (table.Metadata, string) {
	if c.reassigned[v] {
		return table.Metadata{}, src + " is assigned more than once or changed in part"
	}
	if v.Pkg() != c.pass.Pkg {
		var f modelFact
		if !c.pass.ImportObjectFact(v, &f) {
			return table.Metadata{}, src + " is not a table.New of constant Metadata"
		}
		if f.Reason != "" {
			return table.Metadata{}, src + ": " + f.Reason
		}
		return f.Meta, ""
	}
	init, ok := c.inits[v]
	if !ok {
		if c.isParam(c.declOf(v), v) {
			return table.Metadata{}, src + " is a parameter"
		}
		return table.Metadata{}, src + " has no initial value vet can read"
	}
	return c.modelOf(init, depth+1)
}

// declOf returns the identifier declaring v (for isParam), or nil.
func (c *checker) declOf(v *types.Var) ast.Node {
	for id, obj := range c.pass.TypesInfo.Defs {
		if obj == v {
			return id
		}
	}
	return nil
}

// metadataLit reads table.Metadata{Name: "t", Columns: []string{…}, …} of constants.
func (c *checker) metadataLit(cl *ast.CompositeLit) (table.Metadata, string) {
	var m table.Metadata
	src := types.ExprString(cl)
	if n := namedOf(c.pass.TypesInfo.TypeOf(cl)); n == nil || n.Obj().Name() != "Metadata" {
		return m, src + " is not a table.Metadata"
	}
	fields := []string{"Name", "Columns", "PartKey", "SortKey"}
	for k, el := range cl.Elts {
		name, val := "", el
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			id, _ := kv.Key.(*ast.Ident)
			if id == nil {
				return m, src + " is not a table.Metadata literal"
			}
			name, val = id.Name, kv.Value
		} else if k < len(fields) {
			name = fields[k]
		}
		if name == "Name" {
			s, ok := c.constString(val)
			if !ok {
				return m, "its Name " + types.ExprString(val) + " is not a constant"
			}
			m.Name = s
			continue
		}
		cols, ok := c.constStrings(val)
		if !ok {
			return m, "its " + name + " " + types.ExprString(val) + " is not a list of constants"
		}
		switch name {
		case "Columns":
			m.Columns = cols
		case "PartKey":
			m.PartKey = cols
		case "SortKey":
			m.SortKey = cols
		}
	}
	if m.Name == "" {
		return m, src + " has no Name"
	}
	return m, ""
}

// constStrings reads []string{"a", "b"} of constants, or nil.
func (c *checker) constStrings(e ast.Expr) ([]string, bool) {
	e = ast.Unparen(e)
	if tv, ok := c.pass.TypesInfo.Types[e]; ok && tv.IsNil() {
		return nil, true
	}
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		if v, ok := c.objOf(e).(*types.Var); ok && v.Pkg() == c.pass.Pkg && !c.reassigned[v] {
			if init, ok := c.inits[v]; ok && init != e {
				return c.constStrings(init)
			}
		}
		return nil, false
	}
	var out []string
	for _, el := range cl.Elts {
		s, ok := c.constString(el)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// modelCall runs a model method call (Insert, UpdateQuery(s, "a"), UpdateBuilder("a"),
// …) through gocqlx's table package: the CQL for statement methods, the builder for
// builder methods. why says what stopped it.
func (c *checker) modelCall(call *ast.CallExpr) (v reflect.Value, why string) {
	defer func() {
		if r := recover(); r != nil {
			v, why = reflect.Value{}, fmt.Sprintf("gocqlx's table package failed on it: %v", r)
		}
	}()
	name, recv := c.modelMethod(call)
	if name == "" {
		return reflect.Value{}, "not a table model method"
	}
	m, why := c.modelOf(recv, 0)
	if why != "" {
		return reflect.Value{}, "gocqlx table model " + why
	}
	tbl := table.New(m)
	// The columns are the variadic arguments, after the context and session.
	sig := c.callee(call).Type().(*types.Signature)
	var cols []string
	if sig.Variadic() {
		if call.Ellipsis.IsValid() {
			return reflect.Value{}, "its columns are spread from a slice"
		}
		for _, a := range call.Args[sig.Params().Len()-1:] {
			s, ok := c.constString(a)
			if !ok {
				return reflect.Value{}, "its column " + types.ExprString(a) + " is not a constant"
			}
			cols = append(cols, s)
		}
	}
	if name == "GetBuilder" { // v3 only: the select by primary key
		return reflect.ValueOf(qb.Select(m.Name).Columns(cols...).Where(tbl.PrimaryKeyCmp()...)), ""
	}
	method := name
	if s, ok := modelStmts[name]; ok {
		method = s
	} else if !modelBuilders[name] {
		return reflect.Value{}, "table model method " + name + " is not one vet reads"
	}
	fn := reflect.ValueOf(tbl).MethodByName(method)
	if !fn.IsValid() {
		return reflect.Value{}, "table model method " + name + " is not one vet reads"
	}
	var args []reflect.Value
	if fn.Type().IsVariadic() {
		for _, s := range cols {
			args = append(args, reflect.ValueOf(s))
		}
	}
	out := fn.Call(args)
	if len(out) == 0 {
		return reflect.Value{}, "table model method " + name + " returned nothing"
	}
	return out[0], ""
}

// modelKind says whether a model method reads or writes.
func modelKind(name string) string {
	if strings.HasPrefix(name, "Get") || strings.HasPrefix(name, "Select") {
		return kindRead
	}
	return kindWrite
}
