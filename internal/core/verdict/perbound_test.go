package verdict_test

import (
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// keySchema knows table r: PRIMARY KEY ((k, slot), c0, c1), and table p: PRIMARY KEY
// (k) — roles and clustering columns, as a session's metadata does.
type keySchema struct{}

func (keySchema) ColumnKind(_, table, col string) verdict.ColumnKind { return verdict.ColumnScalar }

func (keySchema) ColumnRole(_, table, col string) verdict.ColumnRole {
	switch {
	case col == "k" || table == "r" && col == "slot":
		return verdict.RolePartitionKey
	case table == "r" && (col == "c0" || col == "c1"):
		return verdict.RoleClustering
	}
	return verdict.RoleRegular
}

type clusteringSchema struct{ keySchema }

func (clusteringSchema) ClusteringColumns(_, table string) ([]string, bool) {
	switch table {
	case "r":
		return []string{"c0", "c1"}, true
	case "p":
		return nil, true
	}
	return nil, false
}

// TestVerdictDeleteFunctionPerBound: Cassandra 4.1 and 5.0 evaluate a function in a
// clustering equality once per bound of a range DELETE (createSlices), so `c0 = uuid()`
// followed by a slice on c1 — or by nothing, a prefix — deletes every row whose c0 lies
// between two random values: not repeatable, and a hazard even run once (oracle seed
// 20261206, case 743). Equality on every clustering column, or a partition key column,
// is evaluated once (createClustering, buildPartitionKeyNames): repeatable.
func TestVerdictDeleteFunctionPerBound(t *testing.T) {
	full := clusteringSchema{}
	for _, tc := range []struct {
		cql    string
		schema verdict.Schema
		want   bool // repeatable
		hazard bool
	}{
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 > ? AND c1 <= ?", full, false, true},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = now() AND c1 >= ? AND c1 <= ?", full, false, true},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 > 10 AND c1 <= -5", full, false, true},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = currentTimeUUID()", full, false, true}, // a prefix: a range
		{"DELETE FROM r WHERE k = ? AND slot = ? AND (c0, c1) > (uuid(), 1)", full, false, false},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 IN (1, 2)", full, false, false},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 > ?", nil, false, true}, // no schema: flagged
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 > ?", keySchema{}, false, true},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 = ?", keySchema{}, false, false}, // clustering not known
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 = ?", nil, false, false},
		// Proved once: controls.
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = uuid() AND c1 = ?", full, true, false},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c1 = ? AND c0 = now()", full, true, false},
		{"DELETE FROM p WHERE k = uuid()", full, true, false},
		{"DELETE FROM r WHERE k = uuid() AND slot = 1 AND c0 > ?", full, true, false},
		{"DELETE FROM r WHERE k = ? AND slot = ? AND c0 = ? AND c1 = uuid()", full, true, false},
	} {
		v := verdict.ClassifyWithSchema(tc.cql, tc.schema)
		if v.Idempotent != tc.want || (len(v.Hazards) > 0) != tc.hazard {
			t.Errorf("%s (schema %T): repeatable %v hazards %q; want %v, hazard %v", tc.cql, tc.schema, v.Idempotent, v.Hazards, tc.want, tc.hazard)
		}
		for _, h := range v.Hazards {
			if strings.Contains(h, "\n") || len(h) > 300 {
				t.Errorf("hazard is not one line: %q", h)
			}
		}
	}
	// In a batch the hazard names its statement.
	b := verdict.Batch([]verdict.Verdict{
		verdict.ClassifyWithSchema("INSERT INTO p (k) VALUES (1)", full),
		verdict.ClassifyWithSchema("DELETE FROM r WHERE k = 1 AND slot = 1 AND c0 = uuid() AND c1 >= ? AND c1 <= ?", full),
	}, nil, nil, false, false)
	if b.Idempotent || len(b.Hazards) != 1 || !strings.HasPrefix(b.Hazards[0], "statement 2: ") {
		t.Errorf("batch: repeatable %v hazards %q", b.Idempotent, b.Hazards)
	}
}
