package vet_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/cqlsafe/cqlsafe/cmd/cqlsafe/vet"
	"github.com/cqlsafe/cqlsafe/retry"
)

// listSchema: one table with a non-frozen list, a frozen list and a set.
const listSchema = `CREATE TABLE users (id text PRIMARY KEY, tags list<text>, frozen_tags frozen<list<text>>, names set<text>, name text);`

// listSrc has no "want" comments: every line is repeatable by the library's own verdict
// for the values bound there (Policy.Repeatable), so any list-assignment is a false positive.
const listSrc = `package rvlist

import "github.com/gocql/gocql"

// The fix null-not-unset suggests (bind gocql.UnsetValue) leaves the column untouched.
func unset(s *gocql.Session) error {
	return s.Query("UPDATE users SET tags = ? WHERE id = ?", gocql.UnsetValue, "a").Exec()
}

func empty(s *gocql.Session) error {
	return s.Query("UPDATE users SET tags = ? WHERE id = ?", []string{}, "a").Exec()
}

// A JSON array is how a frozen list and a set are written in INSERT JSON.
func jsonFrozen(s *gocql.Session) error {
	return s.Query(` + "`" + `INSERT INTO users JSON '{"id": "a", "frozen_tags": ["x"]}'` + "`" + `).Exec()
}

func jsonSet(s *gocql.Session) error {
	return s.Query(` + "`" + `INSERT INTO users JSON '{"id": "a", "names": ["x"]}'` + "`" + `).Exec()
}
`

// TestVetListVerdictWithValues: with -schema, vet does not report list-assignment where
// the library calls the statement repeatable for the values the code binds (UnsetValue,
// an empty slice), nor on INSERT JSON of a frozen list or a set.
func TestVetListVerdictWithValues(t *testing.T) {
	dir := t.TempDir()
	stub, err := os.ReadFile(filepath.Join(analysistest.TestData(), "src", "github.com", "gocql", "gocql", "gocql.go"))
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{
		"src/github.com/gocql/gocql/gocql.go": string(stub),
		"src/rvlist/a.go":                     listSrc,
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := vet.ParseSchema(listSchema)
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, vet.New(sch), "rvlist")
}

// TestVetJSONColumnKindSchema: a schema that answers only column by column (no list of
// the table's list columns) still decides INSERT JSON: an array for a frozen list or a
// set is repeatable.
func TestVetJSONColumnKindSchema(t *testing.T) {
	sch := kinds{"id": retry.ColumnScalar, "frozen_tags": retry.ColumnScalar, "names": retry.ColumnSet}
	v := retry.ClassifyWithSchema(`INSERT INTO users JSON '{"id": "a", "frozen_tags": ["x"], "names": ["y"]}'`, sch)
	if !v.Idempotent {
		t.Errorf("INSERT JSON of a frozen list and a set, schema given: not idempotent: %q", v.Reasons)
	}
}

type kinds map[string]retry.ColumnKind

func (k kinds) ColumnKind(keyspace, table, column string) retry.ColumnKind { return k[column] }
