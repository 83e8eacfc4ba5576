package oracle

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOracleCorpus writes the generator's statements, with the DDL of their tables, for
// checks that need no Cassandra: cqlsafe vet's agreement test reads them
// (cmd/cqlsafe/vet/testdata/oracle). It runs only when CQLSAFE_ORACLE_CORPUS names the
// directory to write; CQLSAFE_ORACLE_SEED and CQLSAFE_ORACLE_CASES pick the statements.
//
//	CQLSAFE_ORACLE_CORPUS=$PWD/cmd/cqlsafe/vet/testdata/oracle CQLSAFE_ORACLE_CASES=3000 \
//	  go test -run TestOracleCorpus ./integration/oracle
func TestOracleCorpus(t *testing.T) {
	dir := os.Getenv("CQLSAFE_ORACLE_CORPUS")
	if dir == "" {
		t.Skip("CQLSAFE_ORACLE_CORPUS is not set")
	}
	seed := envUint(t, "CQLSAFE_ORACLE_SEED", defaultSeed)
	n := int(envUint(t, "CQLSAFE_ORACLE_CASES", defaultCases))
	const ks = "oracle"
	tables := generateSchemas(rand.New(rand.NewPCG(seed, 1<<62)))
	var ddl []string
	seen := map[string]bool{}
	for _, tb := range tables {
		for _, q := range tb.ddl(ks) {
			if !seen[q] {
				seen[q] = true
				ddl = append(ddl, q+";")
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schema.cql"), []byte(strings.Join(ddl, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Case int    `json:"case"`
		Kind string `json:"kind"`
		CQL  string `json:"cql"`
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for idx := range n {
		c := genCase(seed, idx, tables, base)
		text, values := c.st.text()
		text, _ = bindKey(text, values, partitionKey(c.tb, c.idx, 0, 0))
		if err := enc.Encode(entry{Case: idx, Kind: c.st.kind, CQL: text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "statements.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d statements (seed %d) and %d DDL statements to %s", n, seed, len(ddl), dir)
}
