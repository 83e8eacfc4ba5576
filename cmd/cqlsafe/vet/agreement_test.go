package vet_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/cqlsafe/cqlsafe/cmd/cqlsafe/vet"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// quiet collects analysistest's complaints (every diagnostic lacks a // want comment
// here): the test compares the diagnostics with the library's verdict itself.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}

// TestVetAgreesWithVerdict runs the idempotence oracle's statements (a committed sample:
// testdata/oracle, written by integration/oracle's TestOracleCorpus) through cqlsafe vet,
// each executed with a retrying gocql policy and a pinned timestamp, and through
// retry.Policy.Lint: vet must flag a statement exactly when the library judges it not
// repeatable — with the oracle's column types and without any.
func TestVetAgreesWithVerdict(t *testing.T) {
	dir := filepath.Join(analysistest.TestData(), "oracle")
	ddl, err := os.ReadFile(filepath.Join(dir, "schema.cql"))
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	f, err := os.Open(filepath.Join(dir, "statements.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct{ CQL string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, e.CQL)
	}
	if len(stmts) < 1000 {
		t.Fatalf("only %d statements in the corpus", len(stmts))
	}

	// A GOPATH-style tree: the fake gocql of testdata and one package calling it once
	// per statement, one call per line.
	root := t.TempDir()
	gocqlDir := filepath.Join(root, "src", "github.com", "gocql", "gocql")
	if err := os.MkdirAll(gocqlDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fake, err := os.ReadFile(filepath.Join(analysistest.TestData(), "src", "github.com", "gocql", "gocql", "gocql.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gocqlDir, "gocql.go"), fake, 0o644); err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	src.WriteString("package agree\n\nimport \"github.com/gocql/gocql\"\n\nfunc run(s *gocql.Session) {\n")
	const firstLine = 6
	for _, st := range stmts {
		fmt.Fprintf(&src, "\ts.Query(%s).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 3}).WithTimestamp(1).Exec()\n", strconv.Quote(st))
	}
	src.WriteString("}\n")
	pkgDir := filepath.Join(root, "src", "agree")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkgDir, "a.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "schema.cql"), ddl, 0o644); err != nil {
		t.Fatal(err)
	}

	cols, err := schema.ParseColumns(string(ddl))
	if err != nil {
		t.Fatal(err)
	}
	sch, err := vet.LoadSchema(filepath.Join(root, "schema.cql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, typed := range []bool{false, true} {
		t.Run(fmt.Sprintf("typed=%v", typed), func(t *testing.T) {
			policy := retry.NewPolicy()
			var vs *vet.Schema
			if typed {
				policy, vs = retry.NewPolicy(retry.WithSchema(cols)), sch
			}
			res := analysistest.Run(quiet{}, root, vet.New(vs), "agree")
			flagged := map[int][]string{}
			for _, r := range res {
				for _, d := range r.Diagnostics {
					if structural(d.Message) {
						continue
					}
					line := r.Pass.Fset.Position(d.Pos).Line
					flagged[line] = append(flagged[line], d.Message)
				}
			}
			bad, notRepeatable := 0, 0
			for i, st := range stmts {
				v := policy.Lint("oracle", st)
				got := flagged[firstLine+i]
				if !v.Idempotent {
					notRepeatable++
				}
				if v.Idempotent == (len(got) == 0) {
					continue
				}
				bad++
				if bad <= 10 {
					t.Errorf("statement %d: library says repeatable=%v %q, vet says %q\n%s", i, v.Idempotent, v.Reasons, got, st)
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d statements judged differently", bad, len(stmts))
			}
			t.Logf("%d statements, %d not repeatable, %d disagreements", len(stmts), notRepeatable, bad)
		})
	}
}

// structural: diagnostics about a batch's shape, not about repeating it (a counter
// update in a LOGGED batch, an UNLOGGED batch over several partitions).
func structural(msg string) bool {
	return strings.Contains(msg, "in a LOGGED batch") || strings.Contains(msg, "UNLOGGED batch writes")
}
