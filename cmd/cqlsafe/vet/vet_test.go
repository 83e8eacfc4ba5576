package vet_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/cqlsafe/cqlsafe/cmd/cqlsafe/vet"
)

func TestVetRules(t *testing.T) {
	for _, pkg := range []string{"notidempotent", "unpinned", "rollback", "nondeterminism", "lists", "ignore", "gocqlxuse", "v2driver", "mixeddrivers", "gocqlxmodel", "gocqlxv3", "gocqlxexec", "clustercallback", "clusteronce", "clusternamed", "clusterlit"} {
		t.Run(pkg, func(t *testing.T) {
			analysistest.Run(t, analysistest.TestData(), vet.New(nil), pkg)
		})
	}
}

// TestVetNullFix checks the nil → gocql.UnsetValue fix against a.go.golden.
func TestVetNullFix(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), vet.New(nil), "nullunset")
}

// TestVetSchema runs with column kinds and keys from a .cql file.
func TestVetSchema(t *testing.T) {
	sch, err := vet.LoadSchema(filepath.Join(analysistest.TestData(), "src", "listschema", "schema.cql"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, analysistest.TestData(), vet.New(sch), "listschema")
}

// TestVetSchemaFlag sets the standalone analyzer's -schema flag.
func TestVetSchemaFlag(t *testing.T) {
	a := vet.Analyzer
	if err := a.Flags.Set("schema", filepath.Join(analysistest.TestData(), "src", "listschema", "schema.cql")); err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, analysistest.TestData(), a, "listschema")
}

func TestVetBadSchema(t *testing.T) {
	if _, err := vet.ParseSchema("CREATE TABLE t (a int);"); err == nil {
		t.Fatal("a table without a primary key was accepted")
	}
}

// TestVetNotAnalysed: CQL the analyzer cannot read is listed, not passed over in
// silence — a wrapper's parameter as a wrapper, CQL built at run time as such, and a
// write executed outside the function that holds its CQL.
func TestVetNotAnalysed(t *testing.T) {
	res := analysistest.Run(t, analysistest.TestData(), vet.New(nil), "wrapper")
	var got []string
	for _, r := range res {
		vr, ok := r.Result.(*vet.Result)
		if !ok {
			t.Fatalf("result %T, want *vet.Result", r.Result)
		}
		for _, n := range vr.NotAnalysed {
			got = append(got, fmt.Sprintf("%d: %s", r.Pass.Fset.Position(n.Pos).Line, n.Reason))
		}
	}
	for _, r := range res {
		for _, n := range r.Result.(*vet.Result).NotAnalysed {
			if strings.HasPrefix(n.Reason, "write executed outside") && n.Retry != "not known: executed outside this function" {
				t.Errorf("%d: retry %q for a write executed elsewhere", r.Pass.Fset.Position(n.Pos).Line, n.Retry)
			}
		}
	}
	if len(got) != 4 || !strings.HasPrefix(got[0], "15: CQL reaches the driver through a wrapper: (*Session).Query passes its parameter stmt on") ||
		!strings.HasPrefix(got[1], "19: CQL built at run time, not a constant") ||
		!strings.HasPrefix(got[2], "29: write executed outside this function (batch b is a parameter of fill: its callers execute it)") ||
		!strings.HasPrefix(got[3], "34: write executed outside this function (the query is passed to another function or returned)") {
		t.Errorf("not analysed:\n%s", strings.Join(got, "\n"))
	}
}

// notes runs the analyzer on pkgs and returns its not-analysed notes as "line: reason".
func notes(t *testing.T, pkgs ...string) []string {
	t.Helper()
	res := analysistest.Run(t, analysistest.TestData(), vet.New(nil), pkgs...)
	var got []string
	for _, r := range res {
		vr, ok := r.Result.(*vet.Result)
		if !ok {
			t.Fatalf("result %T, want *vet.Result", r.Result)
		}
		for _, n := range vr.NotAnalysed {
			got = append(got, fmt.Sprintf("%d: %s", r.Pass.Fset.Position(n.Pos).Line, n.Reason))
		}
	}
	return got
}

// TestVetGocqlxModelsNotAnalysed: a gocqlx table model whose Metadata is not a constant
// is listed with the reason, never passed over.
func TestVetGocqlxModelsNotAnalysed(t *testing.T) {
	got := notes(t, "gocqlxmodel")
	want := []string{
		"58: gocqlx table model s.table is a struct field: vet does not follow the value stored in it",
		"62: gocqlx table model models.Named(\"t\") is returned by a function: vet does not follow it",
		"74: CQL in stmt: assigned a statement more than once, vet does not follow which one reaches here",
		"76: CQL in stmt: assigned a statement more than once, vet does not follow which one reaches here",
		"84: gocqlx table model m is assigned more than once or changed in part",
		"94: a gocqlx qb builder chain with an argument that is not a constant (only its table name may be)",
		"98: a gocqlx qb builder chain from a table model: gocqlx table model s.table is a struct field: vet does not follow the value stored in it",
		"102: gocqlx table model s.table is a struct field: vet does not follow the value stored in it",
		"110: a gocqlx query made through the interface method InsertQuery: vet does not follow the model behind it",
		"115: a gocqlx query made by a function value (ins): vet does not follow which model or CQL it is",
		"119: gocqlx table model models.UsersT embeds the table model: vet does not follow the value stored in it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("not analysed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVetIdentifiersNotAnalysed: CQL whose run-time part is not a table or keyspace
// name is listed.
func TestVetIdentifiersNotAnalysed(t *testing.T) {
	got := notes(t, "gocqlxexec")
	if len(got) != 1 || !strings.HasPrefix(got[0], "38: CQL built at run time") {
		t.Errorf("not analysed:\n%s", strings.Join(got, "\n"))
	}
}

// TestVetNotAnalysedTriage: each note says whether the site writes or reads and what
// retry is in force there; a local initialised to a constant is labelled as such.
func TestVetNotAnalysedTriage(t *testing.T) {
	res := analysistest.Run(t, analysistest.TestData(), vet.New(nil), "triage")
	var got []string
	for _, r := range res {
		for _, n := range r.Result.(*vet.Result).NotAnalysed {
			got = append(got, fmt.Sprintf("%d [%s] [%s] %s", r.Pass.Fset.Position(n.Pos).Line, n.Kind, n.Retry, n.Reason))
		}
	}
	want := []string{
		`24 [write] [retried: gocql.SimpleRetryPolicy set as the ClusterConfig's RetryPolicy in this package] CQL in local variable cql: initialised to a constant ("INSERT INTO t (id, v) VALUES (?, ?)") and changed afterwards`,
		`28 [read] [retried: gocql.SimpleRetryPolicy set as the ClusterConfig's RetryPolicy in this package] CQL built at run time, not a constant`,
		`32 [] [not retried: nil retry policy] CQL reaches the driver through a wrapper: passOn passes its parameter stmt on, so its statements are at its callers`,
		`40 [write] [retried: gocql.SimpleRetryPolicy set as the ClusterConfig's RetryPolicy in this package] CQL in local variable cql: initialised to a constant ("SELECT n FROM c WHERE id = ?") and changed afterwards`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("not analysed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVetSchemaRuntimeTable: with a schema, a write to a table known only at run time
// is listed for the rules the schema's column kinds would decide.
func TestVetSchemaRuntimeTable(t *testing.T) {
	sch, err := vet.LoadSchema(filepath.Join(analysistest.TestData(), "src", "listschema", "schema.cql"))
	if err != nil {
		t.Fatal(err)
	}
	res := analysistest.Run(t, analysistest.TestData(), vet.New(sch), "listschema")
	var got []string
	for _, r := range res {
		for _, n := range r.Result.(*vet.Result).NotAnalysed {
			got = append(got, fmt.Sprintf("%d [%s] %s", r.Pass.Fset.Position(n.Pos).Line, n.Kind, n.Reason))
		}
	}
	const why = ` known only at run time: the schema's column kinds and keys do not apply to it, so the rules that depend on them (list assignments, collection and counter updates, nil bound to a key column) were not checked`
	want := []string{
		`47 [write] table {tbl}` + why,
		`51 [write] table {tbl}` + why,
		`55 [write] table {tbl}` + why,
		`59 [write] table {tbl}` + why,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("not analysed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVetClusterNoRetries: a package whose one ClusterConfig retries nothing says so
// (it said the package's ClusterConfigs do not agree).
func TestVetClusterNoRetries(t *testing.T) {
	res := analysistest.Run(t, analysistest.TestData(), vet.New(nil), "clusterzero")
	var got []string
	for _, r := range res {
		for _, n := range r.Result.(*vet.Result).NotAnalysed {
			got = append(got, fmt.Sprintf("%d [%s] %s", r.Pass.Fset.Position(n.Pos).Line, n.Retry, n.Reason))
		}
	}
	want := "14 [not retried: gocql.SimpleRetryPolicy with NumRetries 0 set as the ClusterConfig's RetryPolicy in this package] CQL reaches the driver through a wrapper: write passes its parameter cql on, so its statements are at its callers"
	if strings.Join(got, "\n") != want {
		t.Errorf("not analysed:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestVetForkDefault: on the ScyllaDB fork, whose default retry policy retries, a
// package that sets none does not say "not retried".
func TestVetForkDefault(t *testing.T) {
	res := analysistest.Run(t, filepath.Join(analysistest.TestData(), "fork"), vet.New(nil), "forkdefault")
	var got []string
	for _, r := range res {
		if r.Pass.Pkg.Path() != "forkdefault" {
			continue
		}
		for _, n := range r.Result.(*vet.Result).NotAnalysed {
			got = append(got, fmt.Sprintf("%d [%s]", r.Pass.Fset.Position(n.Pos).Line, n.Retry))
		}
	}
	want := "7 [not known: no RetryPolicy set in this package (the ScyllaDB fork's default is SimpleRetryPolicy{NumRetries: 3})]"
	if strings.Join(got, "\n") != want {
		t.Errorf("not analysed:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestVetQBNotes: a qb chain that is not read is listed with its kind (from the call
// it starts with) and, for a model's builder, the model's reason.
func TestVetQBNotes(t *testing.T) {
	res := analysistest.Run(t, analysistest.TestData(), vet.New(nil), "gocqlxmodel")
	var got []string
	for _, r := range res {
		for _, n := range r.Result.(*vet.Result).NotAnalysed {
			if strings.Contains(n.Reason, "qb builder chain") {
				got = append(got, fmt.Sprintf("%d [%s] %s", r.Pass.Fset.Position(n.Pos).Line, n.Kind, n.Reason))
			}
		}
	}
	want := []string{
		"94 [read] a gocqlx qb builder chain with an argument that is not a constant (only its table name may be)",
		"98 [write] a gocqlx qb builder chain from a table model: gocqlx table model s.table is a struct field: vet does not follow the value stored in it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("not analysed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVetForkBatch: on the ScyllaDB fork, Batch.Query returns the batch; its entries
// are judged as a batch's.
func TestVetForkBatch(t *testing.T) {
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "fork"), vet.New(nil), "forkbatch")
}
