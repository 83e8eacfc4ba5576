package retry_test

import (
	"testing"

	"github.com/cqlsafe/cqlsafe/retry"
)

// lintSchema: l is a non-frozen list, fl a frozen one, s a set; other columns unknown.
type lintSchema struct{}

func (lintSchema) ColumnKind(_, _, column string) retry.ColumnKind {
	switch column {
	case "l":
		return retry.ColumnList
	case "s":
		return retry.ColumnSet
	case "fl", "v":
		return retry.ColumnScalar
	}
	return retry.ColumnUnknown
}

func TestLintVerdict(t *testing.T) {
	typed := retry.NewPolicy(retry.WithSchema(lintSchema{}))
	untyped := retry.NewPolicy()
	for _, tc := range []struct {
		cql                string
		typed, untyped     bool // repeatable
		listTyped, listAny int  // ListAssignments counts
	}{
		{"UPDATE t SET l = [] WHERE k = ?", true, true, 0, 0},
		{"UPDATE t SET l = [1] WHERE k = ?", false, false, 1, 1},
		{"UPDATE t SET l = ? WHERE k = ?", false, true, 1, 0},
		{"INSERT INTO t (k, l) VALUES (?, ?)", false, true, 1, 0},
		{"UPDATE t SET fl = [1], s = {1} WHERE k = ?", true, false, 0, 1},
		{"UPDATE t SET fl = ? WHERE k = ?", true, true, 0, 0},
		{"UPDATE t SET l = l + ? WHERE k = ?", false, false, 0, 0},
		{"UPDATE t SET v = 1 WHERE k = ? IF EXISTS", false, false, 0, 0},
		{"INSERT INTO t JSON '{\"k\": 1, \"l\": [1]}'", false, false, 1, 1},
	} {
		vt, vu := typed.Lint("ks", tc.cql), untyped.Lint("ks", tc.cql)
		if vt.Idempotent != tc.typed || vu.Idempotent != tc.untyped {
			t.Errorf("%s: repeatable typed %v untyped %v, want %v %v (%q / %q)", tc.cql, vt.Idempotent, vu.Idempotent, tc.typed, tc.untyped, vt.Reasons, vu.Reasons)
		}
		if len(vt.ListAssignments()) != tc.listTyped || len(vu.ListAssignments()) != tc.listAny {
			t.Errorf("%s: list assignments typed %q untyped %q, want %d %d", tc.cql, vt.ListAssignments(), vu.ListAssignments(), tc.listTyped, tc.listAny)
		}
		// Lint is the text-only Repeatable, plus markers known to be non-frozen lists.
		if r := typed.Repeatable("ks", tc.cql, nil); !r.Idempotent && vt.Idempotent {
			t.Errorf("%s: Lint accepts what Repeatable(nil) refuses", tc.cql)
		}
	}
}
