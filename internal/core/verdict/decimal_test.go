package verdict_test

import (
	"math/big"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// dec is a test decimal: what decInspector reads as an unscaled integer and a scale.
type dec struct {
	n     int64
	scale int32
}

// decInspector is inspector with a DecimalInspector for dec.
type decInspector struct{ inspector }

func (decInspector) Decimal(v any) (*big.Int, int32, bool) {
	if d, ok := v.(dec); ok {
		return big.NewInt(d.n), d.scale, true
	}
	return nil, 0, false
}

// decSchema: table z (k text partition key, c decimal clustering, l a non-frozen list).
type decSchema struct{}

func (decSchema) ColumnKind(_, table, col string) verdict.ColumnKind {
	if table == "z" && col == "l" {
		return verdict.ColumnList
	}
	return verdict.ColumnScalar
}

func (decSchema) ColumnRole(_, table, col string) verdict.ColumnRole {
	switch {
	case table != "z":
		return verdict.RoleUnknown
	case col == "k":
		return verdict.RolePartitionKey
	case col == "c":
		return verdict.RoleClustering
	}
	return verdict.RoleRegular
}

func (decSchema) KeyType(_, table, col string) verdict.KeyType {
	switch table + "." + col {
	case "z.k":
		return verdict.KeyText
	case "z.c":
		return verdict.KeyDecimal
	}
	return verdict.KeyOther
}

// TestShadowedDecimalKeys: a decimal clustering key under a DELETE of the same batch —
// a literal, a JSON integer or string, a bound decimal read through a DecimalInspector;
// ordered by value in a slice (Cassandra: BigDecimal.compareTo), equal only with the
// same unscaled value and scale.
func TestShadowedDecimalKeys(t *testing.T) {
	b := func(stmts string) string { return "BEGIN UNLOGGED BATCH " + stmts + " APPLY BATCH" }
	app := func(c string) string { return "UPDATE z SET l = l + [1] WHERE k = 'a' AND c = " + c }
	for _, tc := range []struct {
		name   string
		cql    string
		values []any
		in     verdict.ValueInspector
		want   bool
	}{
		{"negative literal inside an inclusive range", b("DELETE FROM z WHERE k = 'a' AND c >= -938261; " + app("-938261")), nil, nil, true},
		{"fraction inside an open range", b("DELETE FROM z WHERE k = 'a' AND c > 1.5 AND c < 2; " + app("1.75")), nil, nil, true},
		{"equal value, another scale, inclusive bound", b("DELETE FROM z WHERE k = 'a' AND c >= 1.5; " + app("1.50")), nil, nil, true},
		{"equal value, exclusive bound", b("DELETE FROM z WHERE k = 'a' AND c > 1.5; " + app("1.50")), nil, nil, false},
		{"equality needs the same scale", b("DELETE FROM z WHERE k = 'a' AND c = 1.5; " + app("1.50")), nil, nil, false},
		{"equality, the same text", b("DELETE FROM z WHERE k = 'a' AND c = 1.5; " + app("1.5")), nil, nil, true},
		{"an exponent orders by value", b("DELETE FROM z WHERE k = 'a' AND c >= 1e3 AND c <= 1E3; " + app("1000")), nil, nil, true},
		{"an exponent beyond four digits", b("DELETE FROM z WHERE k = 'a' AND c <= 1e99999; " + app("1000")), nil, nil, false},
		{"a scale beyond 1000", b("DELETE FROM z WHERE k = 'a' AND c <= 1e2000; " + app("1000")), nil, nil, false},
		{"outside the range", b("DELETE FROM z WHERE k = 'a' AND c > 1.5 AND c < 2; " + app("2.0")), nil, nil, false},
		{"JSON integer under a range", b(`DELETE FROM z WHERE k = 'a' AND c >= -938261 AND c < 0; INSERT INTO z JSON '{"k": "a", "c": -938261, "l": [4]}'`), nil, nil, true},
		{"JSON string under a range", b(`DELETE FROM z WHERE k = 'a' AND c > 1 AND c < 2; INSERT INTO z JSON '{"k": "a", "c": "1.25", "l": [4]}'`), nil, nil, true},
		{"JSON integer -0: not read", b(`DELETE FROM z WHERE k = 'a' AND c >= 0 AND c <= 0; INSERT INTO z JSON '{"k": "a", "c": -0, "l": [4]}'`), nil, nil, false},
		{"JSON integer 0", b(`DELETE FROM z WHERE k = 'a' AND c >= 0 AND c <= 0; INSERT INTO z JSON '{"k": "a", "c": 0, "l": [4]}'`), nil, nil, true},
		{"JSON number with a fraction: not read", b(`DELETE FROM z WHERE k = 'a' AND c > 1 AND c < 2; INSERT INTO z JSON '{"k": "a", "c": 1.25, "l": [4]}'`), nil, nil, false},
		{"JSON number with an exponent: not read", b(`DELETE FROM z WHERE k = 'a' AND c > 1 AND c < 2000; INSERT INTO z JSON '{"k": "a", "c": 1e3, "l": [4]}'`), nil, nil, false},
		{"bound decimal inside a range", b("DELETE FROM z WHERE k = 'a' AND c > 1.5 AND c < 2; " + app("?")), []any{dec{175, 2}}, decInspector{}, true},
		{"bound decimal equal to a literal", b("DELETE FROM z WHERE k = 'a' AND c = 1.75; " + app("?")), []any{dec{175, 2}}, decInspector{}, true},
		{"bound decimal, another scale, equality", b("DELETE FROM z WHERE k = 'a' AND c = 1.75; " + app("?")), []any{dec{1750, 3}}, decInspector{}, false},
		{"bound decimals, delete and write", b("DELETE FROM z WHERE k = 'a' AND c <= ?; " + app("?")), []any{dec{2, 0}, dec{-5, 1}}, decInspector{}, true},
		{"bound decimal without a DecimalInspector", b("DELETE FROM z WHERE k = 'a' AND c > 1.5 AND c < 2; " + app("?")), []any{dec{175, 2}}, inspector{}, false},
		{"bound float64 into a decimal", b("DELETE FROM z WHERE k = 'a' AND c > 1.5 AND c < 2; " + app("?")), []any{1.75}, decInspector{}, false},
		{"bound decimal with a huge scale", b("DELETE FROM z WHERE k = 'a' AND c > 1.5 AND c < 2; " + app("?")), []any{dec{1, 100000}}, decInspector{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if in == nil {
				in = inspector{}
			}
			v := verdict.ClassifyWithSchema(tc.cql, decSchema{}).ForValues(tc.values, in)
			if v.Idempotent != tc.want {
				t.Errorf("%s %v\nidempotent = %v, want %v (reasons %q)", tc.cql, tc.values, v.Idempotent, tc.want, v.Reasons)
			}
		})
	}
}
