package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// rollbackRule reports a compensating DELETE (or UPDATE) executed in the error branch
// of a failed write, on a table the function wrote before: "retry, not rollback".
func (c *checker) rollbackRule(body *ast.BlockStmt, execs []*execRec) {
	byCall := map[*ast.CallExpr]*execRec{}
	for _, e := range execs {
		byCall[e.call] = e
	}
	// execsIn returns the executions inside n.
	execsIn := func(n ast.Node) []*execRec {
		var out []*execRec
		ast.Inspect(n, func(m ast.Node) bool {
			if call, ok := m.(*ast.CallExpr); ok && byCall[call] != nil {
				out = append(out, byCall[call])
			}
			return true
		})
		return out
	}
	ast.Inspect(body, func(n ast.Node) bool {
		ifs, ok := n.(*ast.IfStmt)
		if !ok {
			return true
		}
		errObj := c.errNotNil(ifs.Cond)
		if errObj == nil {
			return true
		}
		failed := c.failedWrite(ifs, errObj, execsIn)
		if failed == nil {
			return true
		}
		// Tables written before the if, by this function (the failed write included).
		written := map[string]bool{}
		for _, e := range execs {
			if e.call.Pos() < ifs.Pos() || e == failed {
				for _, s := range e.entries {
					if s.stmt.kind == "insert" || s.stmt.kind == "update" {
						written[s.stmt.qualified()] = true
					}
				}
			}
		}
		for _, e := range execsIn(ifs.Body) {
			for _, s := range e.entries {
				st := s.stmt
				if (st.kind != "delete" && st.kind != "update") || !written[st.qualified()] || st.counterUpdate(c.sch) {
					continue
				}
				pos := e.call.Pos()
				if sel, ok := e.call.Fun.(*ast.SelectorExpr); ok {
					pos = sel.Sel.Pos()
				}
				c.report(pos, RuleRollback, fmt.Sprintf("%s in the error branch of a failed write undoes an earlier write (a client-side rollback): the compensation can fail or race too, and the failed write may still have applied; fix: retry the failed write with its original timestamp instead (retry.Do, or Policy.Exec with AtTimestamp)", short(s.cql)))
				break
			}
		}
		return true
	})
}

// errNotNil returns the error variable of a condition "err != nil".
func (c *checker) errNotNil(cond ast.Expr) types.Object {
	be, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok || be.Op != token.NEQ {
		return nil
	}
	if tv := c.pass.TypesInfo.Types[be.Y]; !tv.IsNil() {
		return nil
	}
	id, ok := ast.Unparen(be.X).(*ast.Ident)
	if !ok {
		return nil
	}
	obj := c.pass.TypesInfo.ObjectOf(id)
	if obj == nil || obj.Type().String() != "error" {
		return nil
	}
	return obj
}

// failedWrite returns the write execution whose error the if tests: in its init
// statement, or in the statement just before it.
func (c *checker) failedWrite(ifs *ast.IfStmt, errObj types.Object, execsIn func(ast.Node) []*execRec) *execRec {
	assigns := func(st ast.Stmt) *execRec {
		as, ok := st.(*ast.AssignStmt)
		if !ok {
			return nil
		}
		for _, l := range as.Lhs {
			if c.objOf(l) == errObj {
				for _, e := range execsIn(as) {
					if e.writes() {
						return e
					}
				}
			}
		}
		return nil
	}
	if ifs.Init != nil {
		return assigns(ifs.Init)
	}
	block, ok := c.parent(ifs).(*ast.BlockStmt)
	if !ok {
		return nil
	}
	for k, st := range block.List {
		if st == ifs && k > 0 {
			return assigns(block.List[k-1])
		}
	}
	return nil
}
