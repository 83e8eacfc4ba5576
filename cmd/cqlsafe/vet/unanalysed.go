package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// Result is what one pass of the analyzer leaves beside its diagnostics: the places
// where CQL reaches a driver but was not read, so that silence is not taken for safety.
type Result struct {
	NotAnalysed []NotAnalysed
}

// NotAnalysed is one statement site whose CQL the analyzer could not read, or a write
// whose CQL it read but whose execution it could not follow.
type NotAnalysed struct {
	Pos    token.Pos
	Reason string // "CQL reaches the driver through a wrapper: (*Session).Query passes …"
	// Kind is "write" or "read" when the site shows which (a table model's InsertQuery,
	// CQL whose first word is visible), "" when it does not.
	Kind string
	// Retry says what retry is in force where the statement is executed: "retried: …"
	// (a retrying policy on the query or the package's ClusterConfig), "marked
	// Idempotent(true)", "not retried: …", or "not known: …".
	Retry string
}

// Kinds of NotAnalysed.
const (
	kindWrite = "write"
	kindRead  = "read"
)

// notAnalysedWhy records a site the analyzer could not judge, for the reason why.
func (c *checker) notAnalysedWhy(call *ast.CallExpr, kind, why string) {
	c.result.NotAnalysed = append(c.result.NotAnalysed, NotAnalysed{Pos: call.Pos(), Reason: why, Kind: kind, Retry: c.retryAt(call)})
}

// retryAt says what retry is in force for the query call makes, as far as the
// function holding it and the package's ClusterConfig show.
func (c *checker) retryAt(call *ast.CallExpr) string {
	var body ast.Node
	for p := c.parents[call]; p != nil && body == nil; p = c.parents[p] {
		switch f := p.(type) {
		case *ast.FuncDecl:
			body = f.Body
		case *ast.FuncLit:
			body = f.Body
		}
	}
	fl := newFlow()
	if body != nil {
		c.follow(call, fl, body)
	}
	pol := c.policyFor(fl)
	switch {
	case pol.retrying:
		return "retried: " + pol.why
	case c.idempotentTrue(fl) != nil:
		return "marked Idempotent(true)"
	case pol.known:
		return "not retried: " + pol.why
	case len(fl.methods["RetryPolicy"]) > 0:
		return "not known: a retry policy vet cannot read"
	case len(c.clusters) == 0 && c.scyllaFork():
		return "not known: no RetryPolicy set in this package (the ScyllaDB fork's default is SimpleRetryPolicy{NumRetries: 3})"
	case len(c.clusters) == 0:
		return "not retried: no RetryPolicy set in this package (gocql v1.7's default is none)"
	}
	return "not known: the package's ClusterConfigs do not agree"
}

// notAnalysed records a Query/Bind call of a driver or look-alike whose CQL arg is not
// a constant. When the CQL is a parameter of the enclosing function, that function is
// a wrapper: the statements are in its callers, which the analyzer does not follow.
func (c *checker) notAnalysed(call *ast.CallExpr, arg ast.Expr) {
	arg = ast.Unparen(arg)
	reason := "CQL built at run time, not a constant"
	kind := c.kindOf(arg)
	if id, ok := arg.(*ast.Ident); ok {
		if v, ok := c.pass.TypesInfo.Uses[id].(*types.Var); ok {
			if fn := c.enclosingFunc(call); fn != "" && c.isParam(call, v) {
				reason = fmt.Sprintf("CQL reaches the driver through a wrapper: %s passes its parameter %s on, so its statements are at its callers", fn, v.Name())
			} else if init, ok := c.inits[v]; ok {
				if cql, ok := c.constString(init); ok {
					where := "local variable"
					if v.Parent() == v.Pkg().Scope() {
						where = "package variable"
					}
					reason = fmt.Sprintf("CQL in %s %s: initialised to a constant (%q) and changed afterwards", where, v.Name(), cql)
					kind = c.kindOfAssigned(v, init)
				}
			}
		}
	}
	if mc, ok := arg.(*ast.CallExpr); ok {
		// s.Query(tbl.Insert()) with a model vet cannot read: the model's reason.
		if name, _ := c.modelMethod(mc); name != "" {
			if _, why := c.modelCall(mc); why != "" {
				reason, kind = why, modelKind(name)
			}
		}
	}
	if obj := c.objOf(arg); obj != nil && c.toCqlMulti[obj] {
		reason = fmt.Sprintf("CQL in %s: assigned a statement more than once, vet does not follow which one reaches here", types.ExprString(arg))
	}
	c.notAnalysedWhy(call, kind, reason)
}

// kindOfAssigned is the kind of a variable initialised to init and changed
// afterwards: a read only when every value assigned to it reads, a write when the
// first that does not read writes, else not known.
func (c *checker) kindOfAssigned(v *types.Var, init ast.Expr) string {
	kind := c.kindOf(init)
	for _, f := range c.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for k, l := range as.Lhs {
				if c.objOf(l) != v {
					continue
				}
				other := ""
				if len(as.Lhs) == len(as.Rhs) && (as.Tok == token.ASSIGN || as.Tok == token.DEFINE) {
					other = c.kindOf(as.Rhs[k])
				}
				if kind == kindRead && other != kindRead {
					kind = other
				}
			}
			return true
		})
	}
	return kind
}

// kindOf guesses from the visible text of e whether it reads or writes: the first word
// of the CQL, with run-time parts as unknown identifiers.
func (c *checker) kindOf(e ast.Expr) string {
	var unknown []string
	text, ok := c.template(e, &unknown)
	if !ok {
		return ""
	}
	st := parseStatement(text)
	switch {
	case st == nil:
		return ""
	case st.kind == "select":
		return kindRead
	case st.writes() || st.kind == "insert" || st.kind == "update" || st.kind == "delete":
		return kindWrite
	}
	return ""
}

// notExecutedHere records a write whose CQL was read but whose execution is not in
// this function: a query passed to another function or returned, or a batch filled
// here (often a parameter) and executed by a caller. The statement rules ran on it; the
// rules about how it is executed (not-idempotent, unpinned-timestamp, rollback) did
// not, and that must not read as "safe".
func (c *checker) notExecutedHere(call *ast.CallExpr, batch types.Object, inBatch bool) {
	what := "the query is passed to another function or returned"
	switch {
	case batch != nil:
		what = fmt.Sprintf("batch %s is filled here and executed elsewhere", batch.Name())
		if v, ok := batch.(*types.Var); ok && c.isParam(call, v) {
			if fn := c.enclosingFunc(call); fn != "" {
				what = fmt.Sprintf("batch %s is a parameter of %s: its callers execute it", v.Name(), fn)
			}
		}
	case inBatch:
		what = "an entry of a batch that is not a variable of this function"
	}
	// The retry in force is where it is executed, which is not here.
	c.result.NotAnalysed = append(c.result.NotAnalysed, NotAnalysed{Pos: call.Pos(), Kind: kindWrite,
		Reason: "write executed outside this function (" + what + "): the retry policy, Idempotent and WithTimestamp it runs with were not checked",
		Retry:  "not known: executed outside this function"})
}

// enclosingFunc names the function declaration holding n ("" for none).
func (c *checker) enclosingFunc(n ast.Node) string {
	for p := c.parents[n]; p != nil; p = c.parents[p] {
		if fd, ok := p.(*ast.FuncDecl); ok {
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				return fmt.Sprintf("(%s).%s", types.ExprString(fd.Recv.List[0].Type), fd.Name.Name)
			}
			return fd.Name.Name
		}
	}
	return ""
}

// isParam reports whether v is a parameter of the function (or closure) holding n.
func (c *checker) isParam(n ast.Node, v *types.Var) bool {
	for p := c.parents[n]; p != nil; p = c.parents[p] {
		var ft *ast.FuncType
		switch f := p.(type) {
		case *ast.FuncDecl:
			ft = f.Type
		case *ast.FuncLit:
			ft = f.Type
		default:
			continue
		}
		for _, field := range ft.Params.List {
			for _, name := range field.Names {
				if c.pass.TypesInfo.Defs[name] == v {
					return true
				}
			}
		}
		return false
	}
	return false
}

// scyllaFork reports whether the gocql the package is built with is the ScyllaDB fork
// (replacing github.com/gocql/gocql), whose default retry policy is
// SimpleRetryPolicy{NumRetries: 3}, not none: its HostInfo has ScyllaShardAwarePort.
func (c *checker) scyllaFork() bool {
	seen := map[*types.Package]bool{}
	var walk func(p *types.Package) bool
	walk = func(p *types.Package) bool {
		if seen[p] {
			return false
		}
		seen[p] = true
		if p.Path() == "github.com/gocql/gocql" {
			if h, ok := p.Scope().Lookup("HostInfo").(*types.TypeName); ok {
				obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(h.Type()), true, p, "ScyllaShardAwarePort")
				return obj != nil
			}
			return false
		}
		for _, q := range p.Imports() {
			if walk(q) {
				return true
			}
		}
		return false
	}
	return walk(c.pass.Pkg)
}
