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
	for _, pkg := range []string{"notidempotent", "unpinned", "rollback", "nondeterminism", "lists", "ignore", "gocqlxuse", "v2driver", "mixeddrivers"} {
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
	if len(got) != 4 || !strings.HasPrefix(got[0], "15: CQL reaches the driver through a wrapper: (*Session).Query passes its parameter stmt on") ||
		!strings.HasPrefix(got[1], "19: CQL built at run time, not a constant") ||
		!strings.HasPrefix(got[2], "29: write executed outside this function (batch b is a parameter of fill: its callers execute it)") ||
		!strings.HasPrefix(got[3], "34: write executed outside this function (the query is passed to another function or returned)") {
		t.Errorf("not analysed:\n%s", strings.Join(got, "\n"))
	}
}
