package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"

	"github.com/cqlsafe/cqlsafe/retry"
)

// Rule names, as printed in diagnostics and accepted by //cqlsafe:ignore.
const (
	RuleNotIdempotent        = "not-idempotent"
	RuleRollback             = "rollback"
	RuleNullNotUnset         = "null-not-unset"
	RuleServerNondeterminism = "server-nondeterminism"
	RuleUnpinnedTimestamp    = "unpinned-timestamp"
	RuleListAssignment       = "list-assignment"
	RuleDestructiveDelete    = "destructive-delete"
	// RuleNotAnalysed names the notes of Result.NotAnalysed (cqlsafe vet -v): a
	// statement site whose CQL the analyzer could not read. Never a diagnostic.
	RuleNotAnalysed = "not-analysed"
)

// Rules lists every rule name.
var Rules = []string{RuleNotIdempotent, RuleRollback, RuleNullNotUnset, RuleServerNondeterminism, RuleUnpinnedTimestamp, RuleListAssignment, RuleDestructiveDelete}

const doc = `report Cassandra writes that are unsafe to retry

cqlsafe vet reads constant CQL passed to gocql (Session.Query, Batch.Query, Session.Bind),
gocqlx (Session.Query, qb builders) and look-alike wrappers, follows each query to where
it is executed, and reports:

  not-idempotent         a non-idempotent statement executed with a retrying gocql policy
                         or marked Idempotent(true)
  rollback               a compensating DELETE/UPDATE in the error branch of a failed write
  null-not-unset         nil bound to a non-key column: one cell tombstone per execution
  server-nondeterminism  now()/uuid()/… in a write; ids or times minted inside retry.Do
                         or a retry loop
  unpinned-timestamp     a write retried by a gocql policy without WithTimestamp
  list-assignment        non-frozen list assigned whole; counter updates in a logged
                         batch; unlogged batches that span partitions
  destructive-delete     a DELETE that removes rows it does not name even run once:
                         c0 = uuid() (or now()) before a range on the clustering key

"//cqlsafe:ignore RULE reason" on the line (or the line above) silences RULE there.`

// Analyzer is the cqlsafe vet analyzer. Its flag -schema names a .cql file whose
// CREATE TABLE statements give column kinds and primary keys.
var Analyzer = newFlagged()

// New returns an analyzer that judges statements with the column kinds and keys of
// sch (nil: none, as without -schema).
func New(sch *Schema) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:       "cqlsafe",
		Doc:        doc,
		URL:        "https://github.com/cqlsafe/cqlsafe#cqlsafe-vet",
		Requires:   []*analysis.Analyzer{inspect.Analyzer},
		Run:        func(pass *analysis.Pass) (any, error) { return run(pass, sch) },
		ResultType: reflect.TypeFor[*Result](),
		FactTypes:  []analysis.Fact{new(modelFact)},
	}
}

func newFlagged() *analysis.Analyzer {
	a := New(nil)
	var path string
	var once sync.Once
	var sch *Schema
	var err error
	a.Flags.StringVar(&path, "schema", "", "CQL file whose CREATE TABLE statements give column kinds and primary keys")
	a.Run = func(pass *analysis.Pass) (any, error) {
		once.Do(func() {
			if path != "" {
				sch, err = LoadSchema(path)
			}
		})
		if err != nil {
			return nil, err
		}
		return run(pass, sch)
	}
	return a
}

// checker holds one pass's state.
type checker struct {
	pass       *analysis.Pass
	sch        *Schema
	parents    map[ast.Node]ast.Node
	uses       map[types.Object][]*ast.Ident
	ignores    map[string]map[int][]string // file → line → rules
	clusters   map[string]policyState      // the package's ClusterConfig retry policy, per driver package
	toCql      map[types.Object]string     // stmt, names := <qb>.ToCql()
	toCqlMulti map[types.Object]bool       // assigned a statement and assigned again
	inits      map[types.Object]ast.Expr   // a variable's initial value
	reassigned map[types.Object]bool       // assigned after its definition, or its address taken
	reported   map[string]bool
	policy     *retry.Policy // judges every statement: the library's verdict, not a copy
	result     *Result
}

func run(pass *analysis.Pass, sch *Schema) (*Result, error) {
	c := &checker{
		pass:       pass,
		sch:        sch,
		parents:    map[ast.Node]ast.Node{},
		uses:       map[types.Object][]*ast.Ident{},
		ignores:    map[string]map[int][]string{},
		toCql:      map[types.Object]string{},
		toCqlMulti: map[types.Object]bool{},
		inits:      map[types.Object]ast.Expr{},
		reassigned: map[types.Object]bool{},
		reported:   map[string]bool{},
		result:     &Result{},
	}
	if sch != nil {
		c.policy = retry.NewPolicy(retry.WithSchema(sch.retrySchema()))
	} else {
		c.policy = retry.NewPolicy()
	}
	for id, obj := range pass.TypesInfo.Uses {
		c.uses[obj] = append(c.uses[obj], id)
	}
	for _, f := range pass.Files {
		c.readIgnores(f)
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if len(stack) > 0 {
				c.parents[n] = stack[len(stack)-1]
			}
			stack = append(stack, n)
			return true
		})
	}
	c.clusters = c.clusterPolicy()
	c.readInits()
	c.exportModels()
	c.findToCql()
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			c.checkFunc(f, fd.Body)
		}
	}
	return c.result, nil
}

// report emits one diagnostic unless an ignore comment silences it or it was
// emitted already (a statement reached through two paths).
func (c *checker) report(pos token.Pos, rule, msg string, fixes ...analysis.SuggestedFix) {
	p := c.pass.Fset.Position(pos)
	key := fmt.Sprintf("%s:%d:%d:%s", p.Filename, p.Line, p.Column, rule)
	if c.reported[key] {
		return
	}
	c.reported[key] = true
	for _, line := range []int{p.Line, p.Line - 1} {
		for _, r := range c.ignores[p.Filename][line] {
			if r == rule || r == "all" {
				return
			}
		}
	}
	c.pass.Report(analysis.Diagnostic{Pos: pos, Category: rule, Message: rule + ": " + msg, SuggestedFixes: fixes})
}

// readIgnores records "//cqlsafe:ignore RULE[,RULE] reason" comments.
func (c *checker) readIgnores(f *ast.File) {
	for _, cg := range f.Comments {
		for _, cm := range cg.List {
			text, ok := strings.CutPrefix(cm.Text, "//cqlsafe:ignore")
			if !ok {
				continue
			}
			fields := strings.Fields(text)
			if len(fields) == 0 {
				continue
			}
			p := c.pass.Fset.Position(cm.Slash)
			if c.ignores[p.Filename] == nil {
				c.ignores[p.Filename] = map[int][]string{}
			}
			c.ignores[p.Filename][p.Line] = append(c.ignores[p.Filename][p.Line], strings.Split(fields[0], ",")...)
		}
	}
}

// parent returns n's parent, skipping parentheses.
func (c *checker) parent(n ast.Node) ast.Node {
	p := c.parents[n]
	for {
		pe, ok := p.(*ast.ParenExpr)
		if !ok {
			return p
		}
		p = c.parents[pe]
	}
}

// classify is the library's verdict on cql as it stands in the source (Policy.Lint),
// with the schema's column kinds when there is one: what cqlsafe lint and a Policy
// say of the same statement. A marker the source visibly binds to a value that writes
// no list element (nil, UnsetValue, an empty slice literal) is judged as the Policy
// judges that value at run time: repeatable.
func (c *checker) classify(cql string, values []ast.Expr) retry.Verdict {
	return c.policy.Repeatable("", cql, nil).ForSource(func(marker int) bool {
		return marker < len(values) && c.writesNoElement(values[marker])
	})
}

// writesNoElement: e is nil, the driver's UnsetValue or an empty slice or map literal.
func (c *checker) writesNoElement(e ast.Expr) bool {
	e = ast.Unparen(e)
	if c.isNil(e) {
		return true
	}
	switch x := e.(type) {
	case *ast.CompositeLit:
		if len(x.Elts) != 0 {
			return false
		}
		switch c.pass.TypesInfo.TypeOf(x).Underlying().(type) {
		case *types.Slice, *types.Map:
			return true
		}
	case *ast.SelectorExpr:
		v, ok := c.pass.TypesInfo.Uses[x.Sel].(*types.Var)
		return ok && v.Name() == "UnsetValue" && v.Pkg() != nil && isGocql(v.Pkg().Path())
	}
	return false
}

// short abbreviates CQL for messages.
func short(cql string) string {
	s := strings.Join(strings.Fields(cql), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return fmt.Sprintf("%q", s)
}
