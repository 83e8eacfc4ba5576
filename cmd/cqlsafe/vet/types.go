package vet

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

const (
	retryPath   = "github.com/cqlsafe/cqlsafe/retry"         // gocql v1.7
	retryV2Path = "github.com/cqlsafe/cqlsafe/gocqlv2/retry" // the Apache driver v2
)

// isRetry reports cqlsafe's retry package, for either driver.
func isRetry(path string) bool { return path == retryPath || path == retryV2Path }

func isGocql(path string) bool {
	return path == "github.com/gocql/gocql" || strings.HasPrefix(path, "github.com/apache/cassandra-gocql-driver")
}

func isGocqlx(path string) bool {
	return path == "github.com/scylladb/gocqlx" || strings.HasPrefix(path, "github.com/scylladb/gocqlx/v")
}

func isQB(path string) bool {
	return isGocqlx(strings.TrimSuffix(path, "/qb")) && strings.HasSuffix(path, "/qb")
}

// callee returns the function or method call calls, or nil.
func (c *checker) callee(call *ast.CallExpr) *types.Func {
	f, _ := typeutil.Callee(c.pass.TypesInfo, call).(*types.Func)
	return f
}

// funcIs reports whether f is the package-level function pkg.name (pkg by predicate).
func funcIs(f *types.Func, pkg func(string) bool, names ...string) bool {
	if f == nil || f.Pkg() == nil || f.Type().(*types.Signature).Recv() != nil || !pkg(f.Pkg().Path()) {
		return false
	}
	for _, n := range names {
		if f.Name() == n {
			return true
		}
	}
	return false
}

// recvNamed returns the named type of f's receiver (pointer removed), or nil.
func recvNamed(f *types.Func) *types.Named {
	if f == nil {
		return nil
	}
	sig := f.Type().(*types.Signature)
	if sig.Recv() == nil {
		return nil
	}
	return namedOf(sig.Recv().Type())
}

func namedOf(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// methodOf reports whether f is a method of a type named typ in a package matching pkg.
func methodOf(f *types.Func, pkg func(string) bool, typ string) bool {
	n := recvNamed(f)
	return n != nil && n.Obj().Pkg() != nil && pkg(n.Obj().Pkg().Path()) && n.Obj().Name() == typ
}

// hasMethod reports whether t (or *t) has a method called name.
func hasMethod(t types.Type, name string) bool {
	if t == nil {
		return false
	}
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	_, ok := obj.(*types.Func)
	return ok
}

// constString returns e's value when it is a constant string.
func (c *checker) constString(e ast.Expr) (string, bool) {
	tv, ok := c.pass.TypesInfo.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// constValue returns e's constant value as text, for comparing key values.
func (c *checker) constValue(e ast.Expr) (string, bool) {
	tv, ok := c.pass.TypesInfo.Types[e]
	if !ok || tv.Value == nil {
		return "", false
	}
	if tv.Value.Kind() == constant.String {
		return constant.StringVal(tv.Value), true
	}
	return tv.Value.ExactString(), true
}

// isNil reports whether e is nil, or a conversion of nil to a pointer, slice or map
// type: a value gocql binds as NULL.
func (c *checker) isNil(e ast.Expr) bool {
	e = ast.Unparen(e)
	if tv, ok := c.pass.TypesInfo.Types[e]; ok && tv.IsNil() {
		return true
	}
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	tv, ok := c.pass.TypesInfo.Types[call.Fun]
	if !ok || !tv.IsType() {
		return false
	}
	switch tv.Type.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map:
		return c.isNil(call.Args[0])
	}
	return false
}

// objOf returns the variable an identifier or field selector denotes.
func (c *checker) objOf(e ast.Expr) types.Object {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return c.pass.TypesInfo.ObjectOf(e)
	case *ast.SelectorExpr:
		if _, ok := c.pass.TypesInfo.ObjectOf(e.Sel).(*types.Var); ok {
			return c.pass.TypesInfo.ObjectOf(e.Sel)
		}
	}
	return nil
}

// within reports whether n is inside root.
func within(n, root ast.Node) bool {
	return n.Pos() >= root.Pos() && n.End() <= root.End()
}

// gocqlName returns the name file f imports gocql under, or "".
func gocqlName(f *ast.File) string {
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if !isGocql(path) {
			continue
		}
		if imp.Name != nil {
			if imp.Name.Name == "_" || imp.Name.Name == "." {
				return ""
			}
			return imp.Name.Name
		}
		return "gocql"
	}
	return ""
}
