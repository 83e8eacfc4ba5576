package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// minters are functions that return a new value on every call: ids and times that
// must be minted once, before the first attempt.
var minters = map[string][]string{
	"github.com/gocql/gocql":              {"TimeUUID", "RandomUUID", "MustRandomUUID"},
	"github.com/google/uuid":              {"New", "NewString", "NewRandom", "NewUUID", "NewV6", "NewV7"},
	"github.com/gofrs/uuid":               {"NewV1", "NewV4", "NewV6", "NewV7"},
	"github.com/gofrs/uuid/v5":            {"NewV1", "NewV4", "NewV6", "NewV7"},
	"github.com/satori/go.uuid":           {"NewV1", "NewV4"},
	"time":                                {"Now"},
	"github.com/cqlsafe/cqlsafe/clientid": {"NewRandom", "NewV7"},
}

func (c *checker) isMinter(call *ast.CallExpr) bool {
	f := c.callee(call)
	if f == nil || f.Pkg() == nil || f.Type().(*types.Signature).Recv() != nil {
		return false
	}
	path := f.Pkg().Path()
	if strings.HasPrefix(path, "github.com/apache/cassandra-gocql-driver") {
		path = "github.com/gocql/gocql"
	}
	for _, n := range minters[path] {
		if n == f.Name() {
			return true
		}
	}
	return false
}

// mintRules reports ids and times minted inside a function given to retry.Do or inside
// a retry loop, when the value is bound to a statement there.
func (c *checker) mintRules(body *ast.BlockStmt, sites []*site, execs []*execRec) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if funcIs(c.callee(n), isRetry, "Do") && len(n.Args) >= 2 {
				if lit, ok := ast.Unparen(n.Args[1]).(*ast.FuncLit); ok {
					c.mintIn(lit.Body, sites, "inside the function given to retry.Do: a re-run mints a new value, so the re-run's statement differs from the first run's (retry.Do refuses it: ErrNondeterministic)", "mint it before calling retry.Do and use it inside")
				}
			}
		case *ast.ForStmt:
			if c.isRetryLoop(n, execs) {
				c.mintIn(n.Body, sites, "inside a retry loop: every attempt writes a new value, so a retry after an unknown outcome writes a second row or a different value", "mint it once before the loop")
			}
		}
		return true
	})
}

func (c *checker) mintIn(scope *ast.BlockStmt, sites []*site, why, fix string) {
	ast.Inspect(scope, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !c.isMinter(call) || !c.flowsToStatement(call, scope, sites) {
			return true
		}
		c.report(call.Pos(), RuleServerNondeterminism, fmt.Sprintf("%s %s; fix: %s", types.ExprString(call.Fun)+"()", why, fix))
		return true
	})
}

// flowsToStatement reports whether the value of call is bound to a statement in
// scope: an argument of Query/Bind/WithTimestamp/BindStruct…, directly or through a
// variable it is assigned to.
func (c *checker) flowsToStatement(call *ast.CallExpr, scope ast.Node, sites []*site) bool {
	bound := func(n ast.Node) bool {
		for _, s := range sites {
			if within(s.call, scope) && within(n, s.call) && n.Pos() >= s.call.Lparen {
				return true
			}
		}
		for p := c.parent(n); p != nil && p != scope; p = c.parent(p) {
			if pc, ok := p.(*ast.CallExpr); ok && n.Pos() >= pc.Lparen {
				if sel, ok := pc.Fun.(*ast.SelectorExpr); ok {
					switch sel.Sel.Name {
					case "WithTimestamp", "Bind", "BindStruct", "BindMap", "BindStructMap", "Exec", "ExecBatch":
						return true
					}
				}
			}
		}
		return false
	}
	if bound(call) {
		return true
	}
	// v := <call> (or a composite literal holding it): follow v.
	for p := c.parent(call); p != nil && p != scope; p = c.parent(p) {
		var objs []types.Object
		switch p := p.(type) {
		case *ast.AssignStmt:
			for _, l := range p.Lhs {
				objs = append(objs, c.objOf(l))
			}
		case *ast.ValueSpec:
			for _, name := range p.Names {
				objs = append(objs, c.pass.TypesInfo.ObjectOf(name))
			}
		case ast.Stmt, *ast.FuncLit:
			return false
		default:
			continue
		}
		for _, obj := range objs {
			for _, id := range c.uses[obj] {
				if within(id, scope) && bound(id) {
					return true
				}
			}
		}
		return false
	}
	return false
}

// isRetryLoop reports whether a for loop (not a range loop) executes a write and goes
// round again when it fails: "if err == nil { break/return }" or "if err != nil {
// continue }" in its body, or a condition on err.
func (c *checker) isRetryLoop(f *ast.ForStmt, execs []*execRec) bool {
	hasWrite := false
	for _, e := range execs {
		if within(e.call, f.Body) && e.writes() {
			hasWrite = true
		}
	}
	if !hasWrite {
		return false
	}
	if f.Cond != nil && mentionsErr(c, f.Cond) {
		return true
	}
	retry := false
	ast.Inspect(f.Body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		ifs, ok := n.(*ast.IfStmt)
		if !ok {
			return true
		}
		be, ok := ast.Unparen(ifs.Cond).(*ast.BinaryExpr)
		if !ok || !mentionsErr(c, be.X) || !c.pass.TypesInfo.Types[be.Y].IsNil() {
			return true
		}
		ast.Inspect(ifs.Body, func(m ast.Node) bool {
			switch m := m.(type) {
			case *ast.BranchStmt:
				if (be.Op == token.NEQ && m.Tok == token.CONTINUE) || (be.Op == token.EQL && m.Tok == token.BREAK) {
					retry = true
				}
			case *ast.ReturnStmt:
				if be.Op == token.EQL {
					retry = true
				}
			case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt:
				return false
			}
			return true
		})
		return true
	})
	return retry
}

func mentionsErr(c *checker, e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if obj := c.pass.TypesInfo.ObjectOf(id); obj != nil && obj.Type() != nil && obj.Type().String() == "error" {
				found = true
			}
		}
		return true
	})
	return found
}
