package vet

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"github.com/cqlsafe/cqlsafe/retry"
)

// site is one constant CQL statement handed to a driver: session.Query(cql, values…),
// batch.Query(cql, values…), session.Bind, gocqlx's Session.Query or a qb builder.
type site struct {
	call    *ast.CallExpr
	cql     string
	stmt    *statement
	verdict retry.Verdict
	values  []ast.Expr // bound values; nil when not known (spread, Bind, gocqlx names)
	batch   types.Object
	inBatch bool // an entry of a gocql batch (batch is its variable when known)
	sends   bool // the call itself sends the statement (gocqlx's ExecStmt)
}

// queryNames are the methods that make a query of CQL text: gocql's and gocqlx's, and
// those of wrappers around them.
var queryNames = map[string]bool{"Query": true, "Bind": true, "ContextQuery": true, "QueryWithContext": true, "QueryContext": true}

func isContext(t types.Type) bool {
	n := namedOf(t)
	return n != nil && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

// readCQL reads the CQL of e: a constant, a variable assigned a builder's ToCql() or a
// model's statement, a call returning (stmt, names) passed on whole
// (session.Query(tbl.Insert())), or text whose only run-time parts are table and
// keyspace names.
func (c *checker) readCQL(e ast.Expr) (string, bool) {
	return c.readCQLDepth(e, 0)
}

func (c *checker) readCQLDepth(e ast.Expr, depth int) (string, bool) {
	if cql, ok := c.constString(e); ok {
		return cql, true
	}
	// A variable of this package initialised to CQL and never changed: cql := "…".
	if v, ok := c.objOf(e).(*types.Var); ok && depth < 4 && v.Pkg() == c.pass.Pkg && !c.reassigned[v] {
		if init, ok := c.inits[v]; ok && ast.Unparen(init) != ast.Unparen(e) {
			if _, field := ast.Unparen(e).(*ast.SelectorExpr); !field {
				if cql, ok := c.readCQLDepth(init, depth+1); ok {
					return cql, true
				}
			}
		}
	}
	if cql, ok := c.toCqlOf(e); ok {
		return cql, true
	}
	if cql, ok := c.stmtOf(e); ok {
		return cql, true
	}
	return c.templateCQL(e)
}

// execNames are the methods that send a query, with the Apache driver v2's
// context-taking forms (q.ExecContext(ctx), b.MapExecCASContext(ctx, m), …).
var execNames = map[string]bool{
	"Exec": true, "ExecRelease": true, "ExecCAS": true, "ExecCASRelease": true,
	"ScanCAS": true, "MapScanCAS": true, "Scan": true, "MapScan": true, "Iter": true,
	"Get": true, "GetRelease": true, "GetCAS": true, "GetCASRelease": true,
	"Select": true, "SelectRelease": true, "Release": false,
	"ExecContext": true, "IterContext": true, "ScanContext": true, "MapScanContext": true,
	"ScanCASContext": true, "MapScanCASContext": true, "ExecCASContext": true,
	"MapExecCAS": true, "MapExecCASContext": true,
}

// findSite recognises call as a statement site.
func (c *checker) findSite(call *ast.CallExpr) *site {
	c.opaqueQueryx(call)
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	f := c.callee(call)
	if f == nil {
		return nil
	}
	sig := f.Type().(*types.Signature)
	if sig.Recv() == nil {
		return nil
	}
	name := f.Name()
	recv := recvNamed(f)
	// qb builder: qb.Insert("t").Columns("a").Query(session), ….QueryContext(ctx, session)
	if (name == "Query" || name == "QueryContext") && recv != nil && recv.Obj().Pkg() != nil && isQB(recv.Obj().Pkg().Path()) {
		cql, ok := c.evalQB(sel.X)
		if !ok {
			kind, why := c.qbNote(sel.X)
			c.notAnalysedWhy(call, kind, why)
			return nil
		}
		return c.newSite(call, cql, nil)
	}
	// gocqlx table model: tbl.InsertQuery(session), tbl.UpdateQueryContext(ctx, session, "a")
	if model, _ := c.modelMethod(call); strings.HasSuffix(model, "Query") || strings.HasSuffix(model, "QueryContext") {
		v, why := c.modelCall(call)
		if why != "" || v.Kind() != reflect.String {
			c.notAnalysedWhy(call, modelKind(model), why)
			return nil
		}
		return c.newSite(call, v.String(), nil)
	}
	// gocqlx's Session.ExecStmt(stmt) sends the statement at once.
	if name == "ExecStmt" && recv != nil && recv.Obj().Pkg() != nil && isGocqlx(recv.Obj().Pkg().Path()) && len(call.Args) == 1 {
		cql, ok := c.readCQL(call.Args[0])
		if !ok {
			c.notAnalysed(call, call.Args[0])
			return nil
		}
		s := c.newSite(call, cql, nil)
		if s != nil {
			s.sends = true
		}
		return s
	}
	if !queryNames[name] || len(call.Args) < 1 {
		return nil
	}
	// The CQL is the first parameter, or the second after a context.Context.
	at := 0
	if sig.Params().Len() >= 2 && isContext(sig.Params().At(0).Type()) {
		at = 1
	}
	if sig.Params().Len() <= at || len(call.Args) <= at {
		return nil
	}
	if b, ok := sig.Params().At(at).Type().Underlying().(*types.Basic); !ok || b.Kind() != types.String {
		return nil
	}
	// A gocql look-alike: the query it returns can be pinned (WithTimestamp) or tuned
	// (Consistency); a batch has no result and can itself be pinned. database/sql's
	// Query returns (rows, err) and is not one.
	isBatch := false
	switch sig.Results().Len() {
	case 0:
		if !hasMethod(sig.Recv().Type(), "WithTimestamp") {
			return nil
		}
		isBatch = true
	case 1:
		rt := sig.Results().At(0).Type()
		if !hasMethod(rt, "WithTimestamp") && !hasMethod(rt, "Consistency") {
			return nil
		}
		// The ScyllaDB fork's Batch.Query returns the batch: an entry, as on gocql v1.7.
		isBatch = types.Identical(rt, sig.Recv().Type())
	default:
		return nil
	}
	cql, ok := c.readCQL(call.Args[at])
	if !ok {
		c.notAnalysed(call, call.Args[at])
		return nil
	}
	var values []ast.Expr
	// Query(stmt, values...), QueryWithContext(ctx, stmt, values...): the values follow
	// the CQL.
	if sig.Variadic() && sig.Params().Len() == at+2 && !call.Ellipsis.IsValid() {
		if _, ok := sig.Params().At(at + 1).Type().(*types.Slice); ok {
			values = call.Args[at+1:]
			if values == nil {
				values = []ast.Expr{}
			}
		}
	}
	s := c.newSite(call, cql, values)
	if isBatch {
		s.inBatch = true
		s.batch = c.objOf(sel.X)
	}
	return s
}

// opaqueQueryx lists a gocqlx query made where vet cannot see which model or CQL
// makes it: a function value (ins := tbl.InsertQuery; ins(s)) or an interface method
// (m.InsertQuery(s)).
func (c *checker) opaqueQueryx(call *ast.CallExpr) {
	tv, ok := c.pass.TypesInfo.Types[call]
	if !ok {
		return
	}
	n := namedOf(tv.Type)
	if n == nil || n.Obj().Name() != "Queryx" || n.Obj().Pkg() == nil || !isGocqlx(n.Obj().Pkg().Path()) {
		return
	}
	if _, conv := c.pass.TypesInfo.Types[call.Fun]; conv && c.pass.TypesInfo.Types[call.Fun].IsType() {
		return
	}
	f := c.callee(call)
	switch {
	case f == nil:
		c.notAnalysedWhy(call, "", "a gocqlx query made by a function value ("+types.ExprString(call.Fun)+"): vet does not follow which model or CQL it is")
	case f.Type().(*types.Signature).Recv() != nil && types.IsInterface(f.Type().(*types.Signature).Recv().Type()):
		kind := ""
		if _, ok := modelStmts[strings.TrimSuffix(strings.TrimSuffix(f.Name(), "Context"), "Query")]; ok {
			kind = modelKind(f.Name())
		}
		c.notAnalysedWhy(call, kind, "a gocqlx query made through the interface method "+f.Name()+": vet does not follow the model behind it")
	}
}

func (c *checker) newSite(call *ast.CallExpr, cql string, values []ast.Expr) *site {
	st := parseStatement(cql)
	if st == nil {
		return nil
	}
	s := &site{call: call, cql: cql, stmt: st, verdict: c.classify(cql, values), values: values}
	c.runtimeTable(s)
	return s
}

// runtimeTable: with a schema, a write to a table known only at run time is judged
// without the schema's column kinds and keys, which it may not match. Only what holds
// whatever the columns are is kept (an LWT, a list literal appended, n = n + 1, which
// Cassandra refuses on anything but a counter); what the column kinds would decide (a
// bind marker assigned, c = c + ?) is dropped from the verdict, and the site is listed
// as not analysed for those rules, never judged in silence.
func (c *checker) runtimeTable(s *site) {
	if c.sch == nil || !s.verdict.Writes {
		return
	}
	tbl := ""
	for _, st := range append([]*statement{s.stmt}, s.stmt.inner...) {
		if strings.Contains(st.table, "{") {
			tbl = st.table
			break
		}
	}
	if tbl == "" {
		return
	}
	var kept []string
	for _, r := range s.verdict.Reasons {
		if !strings.Contains(r, "schema metadata can tell") && !strings.Contains(r, "may be bound to a non-frozen list") {
			kept = append(kept, r)
		}
	}
	s.verdict.Reasons = kept
	s.verdict.Idempotent = len(kept) == 0
	c.notAnalysedWhy(s.call, kindWrite, "table "+tbl+" known only at run time: the schema's column kinds and keys do not apply to it, so the rules that depend on them (list assignments, collection and counter updates, nil bound to a key column) were not checked")
}

// flow is what happens to a query after it is built.
type flow struct {
	methods map[string][]*ast.CallExpr // WithTimestamp, Idempotent, RetryPolicy, …
	execs   []*ast.CallExpr            // sent by the driver (q.Exec())
	safe    []*ast.CallExpr            // sent by retry (Policy.Exec, retry.Exec)
	visited map[types.Object]bool
}

// follow traces the query value e through method chains, variables and calls.
func (c *checker) follow(e ast.Expr, fl *flow, scope ast.Node) {
	p := c.parent(e)
	switch p := p.(type) {
	case *ast.SelectorExpr:
		call, ok := c.parent(p).(*ast.CallExpr)
		if !ok || call.Fun != p {
			return
		}
		name := p.Sel.Name
		fl.methods[name] = append(fl.methods[name], call)
		if execNames[name] {
			fl.execs = append(fl.execs, call)
			return
		}
		if tv, ok := c.pass.TypesInfo.Types[call]; ok && (hasMethod(tv.Type, "Exec") || hasMethod(tv.Type, "WithTimestamp")) {
			c.follow(call, fl, scope)
		}
	case *ast.CallExpr:
		f := c.callee(p)
		switch {
		case funcIs(f, isRetry, "Exec", "ExecBatch"),
			methodOf(f, isRetry, "Policy") && (f.Name() == "Exec" || f.Name() == "ExecBatch"):
			fl.safe = append(fl.safe, p)
		case funcIs(f, isGocqlx, "Query"):
			c.follow(p, fl, scope)
		case f != nil && (f.Name() == "ExecuteBatch" || f.Name() == "ExecuteBatchCAS" || f.Name() == "MapExecuteBatchCAS"):
			fl.execs = append(fl.execs, p)
		}
	case *ast.AssignStmt:
		if len(p.Lhs) != len(p.Rhs) {
			return
		}
		for k, r := range p.Rhs {
			if ast.Unparen(r) == e {
				c.followVar(c.objOf(p.Lhs[k]), fl, scope)
			}
		}
	case *ast.ValueSpec:
		for k, v := range p.Values {
			if v == e && k < len(p.Names) {
				c.followVar(c.pass.TypesInfo.ObjectOf(p.Names[k]), fl, scope)
			}
		}
	}
}

func (c *checker) followVar(obj types.Object, fl *flow, scope ast.Node) {
	if obj == nil || fl.visited[obj] {
		return
	}
	fl.visited[obj] = true
	for _, id := range c.uses[obj] {
		if !within(id, scope) {
			continue
		}
		var e ast.Expr = id
		if sel, ok := c.parent(id).(*ast.SelectorExpr); ok && sel.Sel == id {
			e = sel // q.field used as the query
		}
		c.follow(e, fl, scope)
	}
}

func newFlow() *flow {
	return &flow{methods: map[string][]*ast.CallExpr{}, visited: map[types.Object]bool{}}
}

// policyState is what is known about the retry policy a statement runs with.
type policyState struct {
	known    bool
	retrying bool
	why      string
}

// policyOf classifies a retry policy expression.
func (c *checker) policyOf(e ast.Expr) policyState {
	e = ast.Unparen(e)
	if tv, ok := c.pass.TypesInfo.Types[e]; ok && tv.IsNil() {
		return policyState{known: true, why: "nil retry policy"}
	}
	if tv, ok := c.pass.TypesInfo.Types[e]; ok {
		if n := namedOf(tv.Type); n != nil && n.Obj().Pkg() != nil && isRetry(n.Obj().Pkg().Path()) && n.Obj().Name() == "Policy" {
			// A *retry.Policy never re-sends a write it did not pin.
			return policyState{known: true, why: "*retry.Policy"}
		}
	}
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	tv, ok := c.pass.TypesInfo.Types[e]
	if !ok {
		return policyState{}
	}
	n := namedOf(tv.Type)
	if n == nil || n.Obj().Pkg() == nil || !isGocql(n.Obj().Pkg().Path()) {
		return policyState{}
	}
	name := n.Obj().Name()
	switch name {
	case "SimpleRetryPolicy", "ExponentialBackoffRetryPolicy":
		retries := -1 // not visible: assume it retries
		if cl, ok := e.(*ast.CompositeLit); ok {
			retries = 0
			for _, el := range cl.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "NumRetries" {
					retries = -1
					if v := c.pass.TypesInfo.Types[kv.Value].Value; v != nil {
						if n, ok := constant.Int64Val(v); ok {
							retries = int(n)
						}
					}
				}
			}
		}
		if retries == 0 {
			return policyState{known: true, why: "gocql." + name + " with NumRetries 0"}
		}
		return policyState{known: true, retrying: true, why: "gocql." + name}
	case "DowngradingConsistencyRetryPolicy":
		return policyState{known: true, retrying: true, why: "gocql." + name}
	}
	return policyState{}
}

// clusterPolicy reads the package's ClusterConfig retry policies, per driver package
// (gocql v1.7's and the Apache driver v2's ClusterConfig set the policy of their own
// sessions only). A driver's own default (NewCluster, a zero ClusterConfig) is no
// retries. A driver's clusters count as retrying only when every policy assigned to
// them is a retrying policy.
func (c *checker) clusterPolicy() map[string]policyState {
	states := map[string][]policyState{}
	defaults := map[string]int{}
	policySetOn := map[types.Object]bool{} // cluster variables given a RetryPolicy
	var made []made1
	clusterPkg := func(e ast.Expr) string {
		tv, ok := c.pass.TypesInfo.Types[e]
		if !ok {
			return ""
		}
		n := namedOf(tv.Type)
		if n != nil && n.Obj().Pkg() != nil && isGocql(n.Obj().Pkg().Path()) && n.Obj().Name() == "ClusterConfig" {
			return n.Obj().Pkg().Path()
		}
		return ""
	}
	for _, f := range c.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for k, l := range n.Lhs {
					sel, ok := l.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "RetryPolicy" || len(n.Rhs) != len(n.Lhs) {
						continue
					}
					if pkg := clusterPkg(sel.X); pkg != "" {
						if obj := c.objOf(sel.X); obj != nil {
							policySetOn[obj] = true
						}
						st := c.policyOf(n.Rhs[k])
						if c.paramConfig(sel.X) {
							// Set on a ClusterConfig the function is given: it configures
							// clusters made by its callers (a configuring callback),
							// which are not visible here.
							st = policyState{}
						}
						states[pkg] = append(states[pkg], st)
					}
				}
			case *ast.CompositeLit:
				if pkg := clusterPkg(n); pkg != "" {
					set := false
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "RetryPolicy" {
								states[pkg] = append(states[pkg], c.policyOf(kv.Value))
								set = true
							}
						}
					}
					if !set {
						made = append(made, made1{n, pkg})
					}
				}
			case *ast.CallExpr:
				if f := c.callee(n); f != nil && f.Name() == "NewCluster" && f.Pkg() != nil && isGocql(f.Pkg().Path()) {
					if sig, ok := f.Type().(*types.Signature); ok && sig.Recv() == nil && sig.Results().Len() == 1 {
						if pkg := clusterPkg(n); pkg != "" {
							made = append(made, made1{n, pkg})
						}
					}
				}
			}
			return true
		})
	}
	// A cluster made here (NewCluster, a literal without RetryPolicy) whose variable is
	// given no RetryPolicy keeps the driver's default: none.
	for _, m := range made {
		if obj := c.madeInto(m.e); obj != nil && policySetOn[obj] {
			continue
		}
		defaults[m.pkg]++
	}
	out := map[string]policyState{}
	for pkg, ss := range states {
		suffix := " set as the ClusterConfig's RetryPolicy in this package"
		st := policyState{known: true, retrying: true, why: ss[0].why + suffix}
		if !ss[0].retrying {
			st = policyState{known: true, why: ss[0].why + suffix}
		}
		for _, s := range ss {
			if !s.known || s.retrying != st.retrying {
				st = policyState{}
			}
		}
		if defaults[pkg] > 0 && st.retrying {
			st = policyState{} // some of the package's clusters retry, some do not
		}
		out[pkg] = st
	}
	return out
}

type made1 struct {
	e   ast.Expr
	pkg string
}

// madeInto is the variable (or field) a cluster made by e is assigned to, or nil.
func (c *checker) madeInto(e ast.Expr) types.Object {
	p := c.parent(e)
	if u, ok := p.(*ast.UnaryExpr); ok && u.Op == token.AND {
		p = c.parent(u)
	}
	switch p := p.(type) {
	case *ast.AssignStmt:
		if len(p.Lhs) == len(p.Rhs) {
			for k, r := range p.Rhs {
				if within(e, r) {
					return c.objOf(p.Lhs[k])
				}
			}
		}
	case *ast.ValueSpec:
		for k, v := range p.Values {
			if within(e, v) && k < len(p.Names) {
				return c.pass.TypesInfo.Defs[p.Names[k]]
			}
		}
	}
	return nil
}

// paramConfig reports whether e, the ClusterConfig a RetryPolicy is set on, is a
// parameter of the function that sets it (cl.RetryPolicy = … in func(cl
// *gocql.ClusterConfig)). A config the function makes itself, in a closure or not
// (sync.Once.Do, t.Run), is visible.
func (c *checker) paramConfig(e ast.Expr) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.StarExpr:
			e = x.X
			continue
		case *ast.Ident:
			v, ok := c.pass.TypesInfo.Uses[x].(*types.Var)
			return ok && c.isParam(c.declOf(v), v)
		}
		return false
	}
}

// driverOf is the driver package of the query or batch fl follows (the receiver of its
// methods), "" when no method call says.
func (c *checker) driverOf(fl *flow) string {
	calls := append([]*ast.CallExpr(nil), fl.execs...)
	for _, cs := range fl.methods {
		calls = append(calls, cs...)
	}
	for _, call := range calls {
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		if tv, ok := c.pass.TypesInfo.Types[sel.X]; ok {
			if n := namedOf(tv.Type); n != nil && n.Obj().Pkg() != nil && isGocql(n.Obj().Pkg().Path()) {
				return n.Obj().Pkg().Path()
			}
		}
	}
	return ""
}

// policyFor is the policy a query or batch runs with: its own RetryPolicy(…), else
// the cluster policy of its driver's ClusterConfigs in the package (when its driver is
// not known: the policy only when every driver's clusters agree on it).
func (c *checker) policyFor(fl *flow) policyState {
	if calls := fl.methods["RetryPolicy"]; len(calls) > 0 {
		last := calls[len(calls)-1]
		if len(last.Args) == 1 {
			return c.policyOf(last.Args[0])
		}
		return policyState{}
	}
	if pkg := c.driverOf(fl); pkg != "" {
		return c.clusters[pkg]
	}
	var st policyState
	for _, s := range c.clusters {
		if !s.known || !s.retrying {
			return policyState{}
		}
		st = s
	}
	return st
}

// idempotentTrue returns the call marking the query Idempotent(true), or nil.
func (c *checker) idempotentTrue(fl *flow) *ast.CallExpr {
	for _, call := range fl.methods["Idempotent"] {
		if len(call.Args) == 1 {
			if v := c.pass.TypesInfo.Types[call.Args[0]].Value; v != nil && v.Kind() == constant.Bool && constant.BoolVal(v) {
				return call
			}
		}
	}
	return nil
}
