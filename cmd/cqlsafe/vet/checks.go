package vet

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// execRec is one execution the rules saw: the call that sends it and its statements.
type execRec struct {
	call    *ast.CallExpr
	entries []*site
}

func (r *execRec) writes() bool {
	for _, s := range r.entries {
		if s.verdict.Writes {
			return true
		}
	}
	return false
}

func (c *checker) checkFunc(file *ast.File, body *ast.BlockStmt) {
	var sites []*site
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if s := c.findSite(call); s != nil {
				sites = append(sites, s)
			}
		}
		return true
	})
	if len(sites) == 0 {
		return
	}
	var execs []*execRec
	batches := map[types.Object][]*site{}
	var order []types.Object
	for _, s := range sites {
		c.statementRules(file, s)
		if s.inBatch {
			if s.batch != nil {
				if batches[s.batch] == nil {
					order = append(order, s.batch)
				}
				batches[s.batch] = append(batches[s.batch], s)
			} else if s.verdict.Writes {
				c.notExecutedHere(s.call, nil, true)
			}
			continue
		}
		fl := newFlow()
		if s.sends {
			fl.execs = append(fl.execs, s.call)
		} else {
			c.follow(s.call, fl, body)
		}
		c.execRules(fl, []*site{s}, -1)
		if s.verdict.Writes && len(fl.execs)+len(fl.safe) == 0 {
			c.notExecutedHere(s.call, nil, false)
		}
		for _, e := range append(fl.execs, fl.safe...) {
			execs = append(execs, &execRec{call: e, entries: []*site{s}})
		}
	}
	for _, obj := range order {
		entries := batches[obj]
		fl := newFlow()
		c.followVar(obj, fl, body)
		typ := c.batchType(obj, body)
		c.batchRules(entries, typ)
		c.execRules(fl, entries, typ)
		if len(fl.execs)+len(fl.safe) == 0 && (&execRec{entries: entries}).writes() {
			c.notExecutedHere(entries[0].call, obj, true)
		}
		for _, e := range append(fl.execs, fl.safe...) {
			execs = append(execs, &execRec{call: e, entries: entries})
		}
	}
	c.rollbackRule(body, execs)
	c.mintRules(body, sites, execs)
}

func isServerFnReason(r string) bool { return strings.Contains(r, "non-deterministic function") }

// statementRules are the rules one statement breaks wherever it is executed.
func (c *checker) statementRules(file *ast.File, s *site) {
	pos := s.call.Pos()
	if len(s.call.Args) > 0 {
		pos = s.call.Args[0].Pos()
	}
	for _, r := range s.verdict.Reasons {
		if isServerFnReason(r) {
			fn := strings.TrimSuffix(strings.TrimPrefix(r, "server-side non-deterministic function "), " in a write")
			c.report(pos, RuleServerNondeterminism, fmt.Sprintf("%s is evaluated by the server on every attempt, so a retried write stores a different value than the first; fix: compute the value on the client once, before the first attempt (clientid.NewTimeUUID(t), a bound time) and bind it", fn))
		}
	}
	for _, h := range s.verdict.Hazards {
		c.report(pos, RuleDestructiveDelete, fmt.Sprintf("%s; fix: name every clustering column by equality with a client-made id (clientid.NewTimeUUID), or delete the range with bound values", h))
	}
	if s.stmt.kind == "batch" {
		bt := map[string]int{"logged": 0, "unlogged": 1, "counter": 2}[s.stmt.batchType]
		c.batchStatementRules(pos, s.stmt.inner, bt, s.values)
	}
	// Whole-list assignments are the library's verdict (retry.Policy.Lint), so vet and
	// the Policy never disagree: an empty list literal, a frozen list or a set is not
	// reported; a list literal or a bind marker assigned to a non-frozen list is.
	if la := s.verdict.ListAssignments(); len(la) > 0 {
		c.report(pos, RuleListAssignment, fmt.Sprintf("%s; fix: make the column frozen<list<…>> (or a set), or never retry this write", strings.Join(dedupe(la), "; ")))
	}
	c.nilRule(file, s)
}

// nilRule reports nil bound to a non-key column of an INSERT or UPDATE.
func (c *checker) nilRule(file *ast.File, s *site) {
	if s.values == nil {
		return
	}
	type role struct {
		b  bind
		st *statement
	}
	var roles []role
	stmts := []*statement{s.stmt}
	if s.stmt.kind == "batch" {
		stmts = s.stmt.inner
	}
	for _, st := range stmts {
		for _, b := range st.binds {
			roles = append(roles, role{b, st})
		}
	}
	pkgName := gocqlName(file)
	for i, v := range s.values {
		if i >= len(roles) || !c.isNil(v) {
			continue
		}
		r := roles[i]
		if !r.b.set || r.b.column == "" || (r.st.kind != "insert" && r.st.kind != "update") {
			continue
		}
		if known, key := c.sch.isKey(r.st, r.b.column); key {
			continue
		} else if !known && r.st.kind == "insert" && r.b.column == r.st.firstKey {
			// Without a schema the first INSERT column is taken as the partition key,
			// where Cassandra rejects a null instead of writing a tombstone.
			continue
		}
		var fixes []analysis.SuggestedFix
		if pkgName != "" {
			fixes = []analysis.SuggestedFix{{
				Message:   "bind " + pkgName + ".UnsetValue",
				TextEdits: []analysis.TextEdit{{Pos: v.Pos(), End: v.End(), NewText: []byte(pkgName + ".UnsetValue")}},
			}}
		}
		c.report(v.Pos(), RuleNullNotUnset, fmt.Sprintf("nil bound to column %q writes a NULL: one cell tombstone per execution; fix: bind gocql.UnsetValue, which leaves the column untouched (or write the row with overwrite.Row)", r.b.column), fixes...)
	}
}

// execRules are the rules about how a statement (or a batch's entries) is executed.
func (c *checker) execRules(fl *flow, entries []*site, batchType int) {
	writes, pinned := false, true
	var reasons []string
	for _, s := range entries {
		if !s.verdict.Writes {
			continue
		}
		writes = true
		pinned = pinned && s.stmt.timestamp
		la := s.verdict.ListAssignments()
		for _, r := range s.verdict.Reasons {
			if !isServerFnReason(r) && !slices.Contains(la, r) {
				reasons = append(reasons, r)
			}
		}
	}
	if !writes {
		return
	}
	if batchType == 2 {
		reasons = append(reasons, "COUNTER batch")
	}
	pinned = pinned || len(fl.methods["WithTimestamp"]) > 0
	pol := c.policyFor(fl)
	idem := c.idempotentTrue(fl)
	what := short(entries[0].cql)
	if len(entries) > 1 || entries[0].inBatch {
		what = fmt.Sprintf("this batch (%s …)", short(entries[0].cql))
	}
	for _, ex := range fl.execs {
		pos := ex.Pos()
		if sel, ok := ex.Fun.(*ast.SelectorExpr); ok {
			pos = sel.Sel.Pos()
		}
		switch {
		case len(reasons) > 0 && (pol.retrying || idem != nil):
			how := "is executed with a retrying policy (" + pol.why + ")"
			if !pol.retrying {
				how = "is marked Idempotent(true)"
			}
			c.report(pos, RuleNotIdempotent, fmt.Sprintf("%s is not idempotent (%s) and %s, so a retry after a timeout can apply it twice; fix: execute it with retry.Policy.Exec/ExecBatch, which re-sends it only when nothing was applied, and do not mark it idempotent", what, strings.Join(dedupe(reasons), "; "), how))
		case pol.retrying && !pinned:
			c.report(pos, RuleUnpinnedTimestamp, fmt.Sprintf("%s is retried by %s without a pinned timestamp: every attempt gets a fresh one, so a late retry can overwrite a newer write; fix: pin it once (WithTimestamp(ts)) or execute it with retry.Policy.Exec, which pins it", what, pol.why))
		}
	}
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// batchType reads the type a gocql batch variable was created with: 0 logged,
// 1 unlogged, 2 counter, -1 not known.
func (c *checker) batchType(obj types.Object, scope ast.Node) int {
	typ := -1
	typeArg := func(e ast.Expr) {
		tv := c.pass.TypesInfo.Types[e]
		if tv.Value == nil || tv.Value.Kind() != constant.Int {
			return
		}
		if n := namedOf(tv.Type); n == nil || !strings.HasSuffix(n.Obj().Name(), "BatchType") {
			return
		}
		v, _ := constant.Int64Val(tv.Value)
		typ = int(v)
	}
	check := func(rhs ast.Expr) {
		switch r := ast.Unparen(rhs).(type) {
		case *ast.CallExpr:
			if sel, ok := r.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "NewBatch" || sel.Sel.Name == "Batch") && len(r.Args) == 1 {
				typeArg(r.Args[0])
			}
		case *ast.UnaryExpr:
			if cl, ok := r.X.(*ast.CompositeLit); ok {
				for _, el := range cl.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Type" {
							typeArg(kv.Value)
						}
					}
				}
			}
		}
	}
	ast.Inspect(scope, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for k, l := range n.Lhs {
					if c.objOf(l) == obj {
						check(n.Rhs[k])
					}
				}
			}
		case *ast.ValueSpec:
			for k, name := range n.Names {
				if c.pass.TypesInfo.ObjectOf(name) == obj && k < len(n.Values) {
					check(n.Values[k])
				}
			}
		}
		return true
	})
	return typ
}

// batchRules: counter updates in a logged batch, unlogged batches over partitions.
func (c *checker) batchRules(entries []*site, typ int) {
	var stmts []*statement
	var values [][]ast.Expr
	for _, s := range entries {
		stmts = append(stmts, s.stmt)
		values = append(values, s.values)
	}
	c.batchEntryRules(func(i int) token.Pos { return entries[i].call.Args[0].Pos() }, stmts, values, typ)
}

// batchStatementRules is batchRules for a BEGIN … APPLY BATCH text.
func (c *checker) batchStatementRules(pos token.Pos, inner []*statement, typ int, values []ast.Expr) {
	vals := make([][]ast.Expr, len(inner))
	for i, st := range inner {
		if values == nil {
			continue
		}
		lo, hi := st.bindBase, st.bindBase+len(st.binds)
		if hi <= len(values) {
			vals[i] = values[lo:hi]
		}
	}
	c.batchEntryRules(func(int) token.Pos { return pos }, inner, vals, typ)
}

func (c *checker) batchEntryRules(pos func(int) token.Pos, stmts []*statement, values [][]ast.Expr, typ int) {
	switch typ {
	case 0:
		for i, st := range stmts {
			if st.counterUpdate(c.sch) {
				c.report(pos(i), RuleListAssignment, "counter update in a LOGGED batch: Cassandra rejects counter mutations in logged batches, and a counter update is never idempotent; fix: send counter updates in a COUNTER batch (gocql.CounterBatch) of their own")
			}
		}
	case 1:
		first := ""
		for i, st := range stmts {
			if !st.writes() {
				continue
			}
			if first == "" {
				first = st.qualified()
				continue
			}
			if st.qualified() != first {
				c.report(pos(i), RuleListAssignment, fmt.Sprintf("UNLOGGED batch writes tables %s and %s: more than one partition, so it is neither atomic nor cheaper than separate writes (the coordinator fans it out); fix: use a LOGGED batch for atomicity across partitions, or separate (concurrent) writes", first, st.qualified()))
				return
			}
		}
		seen := ""
		for i, st := range stmts {
			k, ok := c.partitionValue(st, values[i])
			if !ok {
				continue
			}
			if seen == "" {
				seen = k
				continue
			}
			if k != seen {
				c.report(pos(i), RuleListAssignment, fmt.Sprintf("UNLOGGED batch writes %s partitions %s and %s: more than one partition, so it is neither atomic nor cheaper than separate writes; fix: use a LOGGED batch for atomicity across partitions, or separate (concurrent) writes", st.qualified(), seen, k))
				return
			}
		}
	}
}

// partitionValue returns the literal partition key of st when every column of it is a
// literal or a constant bound value.
func (c *checker) partitionValue(st *statement, values []ast.Expr) (string, bool) {
	cols := c.sch.partitionKey(st)
	if cols == nil {
		if st.firstKey == "" {
			return "", false
		}
		cols = []string{st.firstKey}
	}
	var parts []string
	for _, col := range cols {
		v, ok := st.keyLits[col]
		if !ok {
			for i, b := range st.binds {
				if b.column == col && (b.where || b.set) && i < len(values) {
					v, ok = c.constValue(values[i])
					break
				}
			}
		}
		if !ok {
			return "", false
		}
		parts = append(parts, col+"="+v)
	}
	return strings.Join(parts, ","), true
}
