package verdict_test

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// roles is a schema that knows kinds and roles: t (k partition key, c clustering, l a
// non-frozen list, s a static non-frozen list, v a scalar).
type roles struct{ kinds }

func (roles) ColumnRole(_, table, col string) verdict.ColumnRole {
	if (table == "d" || table == "w" || table == "n") && col == "k" {
		return verdict.RolePartitionKey
	}
	if table != "t" && table != "d" && table != "w" && table != "n" && table != "x" && table != "y" {
		return verdict.RoleUnknown
	}
	switch col {
	case "k":
		return verdict.RolePartitionKey
	case "c":
		return verdict.RoleClustering
	case "s":
		return verdict.RoleStatic
	}
	return verdict.RoleRegular
}

// KeyType: t.k text, t.c int, d.k double, w.k uuid, n.k varint, x.k and x.c text, x.u uuid,
// x.f double, y.k text, y.c date; any other column an "other" type.
func (roles) KeyType(_, table, col string) verdict.KeyType {
	switch table + "." + col {
	case "t.k", "t.x":
		return verdict.KeyText
	case "t.c":
		return verdict.KeyInteger
	case "d.k":
		return verdict.KeyDouble
	case "w.k":
		return verdict.KeyUUID
	case "n.k":
		return verdict.KeyVarint
	case "x.k", "x.c", "y.k":
		return verdict.KeyText
	case "y.c":
		return verdict.KeyDate
	case "x.u":
		return verdict.KeyUUID
	case "x.f":
		return verdict.KeyDouble
	}
	return verdict.KeyOther
}

// ownString marshals itself: its bytes need not be the text's.
type ownString string

func (o ownString) MarshalCQL(any) ([]byte, error) { return []byte("x" + o), nil }

// plainRoles knows kinds and roles, not key types.
type plainRoles struct{ kinds }

func (p plainRoles) ColumnRole(ks, table, col string) verdict.ColumnRole {
	return roles(p).ColumnRole(ks, table, col)
}

var shadowSchema = roles{kinds{"t.l": verdict.ColumnList, "t.s": verdict.ColumnList, "t.v": verdict.ColumnScalar,
	"u.l": verdict.ColumnList, "d.l": verdict.ColumnList, "t.m": verdict.ColumnList, "w.l": verdict.ColumnList, "n.l": verdict.ColumnList, "x.l": verdict.ColumnList,
	"y.l": verdict.ColumnList}}

// TestShadowedListWrite: a list write that a DELETE of the same batch deletes at the
// batch's timestamp is repeatable; every condition of the rule, broken, makes it not.
func TestShadowedListWrite(t *testing.T) {
	b := func(stmts string) string { return "BEGIN UNLOGGED BATCH " + stmts + " APPLY BATCH" }
	for _, tc := range []struct {
		name   string
		schema verdict.Schema
		cql    string
		values []any
		want   bool
	}{
		{"row delete, append, literal keys", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, true},
		{"row delete after the write", shadowSchema,
			b("UPDATE t SET l = [1] + l WHERE k = 'a' AND c = 0; DELETE FROM t WHERE k = 'a' AND c = 0"), nil, true},
		{"partition delete covers a row's list", shadowSchema,
			b("DELETE FROM t WHERE k = 'a'; UPDATE t SET l = l - [1] WHERE k = 'a' AND c = 3"), nil, true},
		{"column delete", shadowSchema,
			b("DELETE l FROM t WHERE k = 'a' AND c = 0; INSERT INTO t (k, c, l) VALUES ('a', 0, [1, 2])"), nil, true},
		{"bound keys, equal", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = ?; UPDATE t SET l = l + ? WHERE k = ? AND c = ?"),
			[]any{"a", 0, []int{1}, "a", 0}, true},
		{"bound list value, covered", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = ?; UPDATE t SET l = ? WHERE k = ? AND c = ?"),
			[]any{"a", 0, []int{1}, "a", 0}, true},
		{"literal delete, bound write", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + ? WHERE k = ? AND c = ?"),
			[]any{[]int{1}, "a", int64(0)}, true},
		{"bound delete, literal insert", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = ?; INSERT INTO t (k, c, l) VALUES ('a', 00, [1])"),
			[]any{"a", int16(0)}, true},
		{"bound double key against its literal", shadowSchema,
			b("DELETE FROM d WHERE k = 1.5; UPDATE d SET l = l + [1] WHERE k = ?"), []any{1.5}, true},
		{"uuid literal against a bound UUID", shadowSchema,
			b("DELETE FROM w WHERE k = 0F98C01C-a87f-4a94-95c2-e153d90de6fe; UPDATE w SET l = l + [1] WHERE k = ?"),
			[]any{[16]byte{0x0f, 0x98, 0xc0, 0x1c, 0xa8, 0x7f, 0x4a, 0x94, 0x95, 0xc2, 0xe1, 0x53, 0xd9, 0x0d, 0xe6, 0xfe}}, true},
		{"JSON uuid against a literal", shadowSchema,
			b(`DELETE FROM w WHERE k = 0f98c01c-a87f-4a94-95c2-e153d90de6fe; INSERT INTO w JSON '{"k": "0f98c01c-a87f-4a94-95c2-e153d90de6fe", "l": [1]}'`), nil, true},
		{"inclusive range delete met by the write's value", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c >= 3; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 3"), nil, true},
		{"inclusive range delete, a value above it", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c >= 3; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 4"), nil, true},
		{"two-sided range delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c >= 3 AND c <= 5; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 3"), nil, true},
		{"exclusive range delete, negative bound key", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c > -10 AND c < 10; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{int64(-9)}, true},
		{"exclusive range delete, bound bounds", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c > ?; INSERT INTO t (k, c, l) VALUES ('a', 7, [1])"), []any{"a", int16(6)}, true},
		{"text range, the key inside it (bytes order)", shadowSchema,
			b("DELETE FROM x WHERE k = 'a' AND c > 'B' AND c <= 'b'; UPDATE x SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{"a"}, true},
		{"static and regular column delete naming a row covers the partition's static list", shadowSchema,
			b("DELETE s, v FROM t WHERE k = 'a' AND c = 0; UPDATE t SET s = s + [1] WHERE k = 'a'"), nil, true},
		{"static column delete, bound keys, the write names another row", shadowSchema,
			b("DELETE v, s FROM t WHERE k = ? AND c = ?; UPDATE t SET s = [2] + s WHERE k = ? AND c = ?"), []any{"a", 9, "a", 1}, true},
		{"date key, literal against a midnight UTC", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = '2026-11-26'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(2026, 11, 26, 1, 0, 0, 0, time.FixedZone("CET", 3600))}, true},
		{"date key, bound string against a bound time", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = ?; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{"1969-12-31", time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)}, true},
		{"date key, a time before 1970 not at midnight, as gocql sends it", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = '1969-12-31'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(1969, 12, 30, 12, 0, 0, 0, time.UTC)}, true},
		{"date key, the same afternoon bound twice", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = ?; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(2026, 11, 26, 15, 4, 5, 0, time.UTC), time.Date(2026, 11, 26, 15, 4, 5, 0, time.UTC)}, true},
		{"date range containing the key", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c >= '2026-11-01' AND c < '2026-12-01'; INSERT INTO y (k, c, l) VALUES ('a', '2026-11-30', [1])"), nil, true},
		{"JSON insert under a range delete", shadowSchema,
			b(`DELETE FROM t WHERE k = 'a' AND c > 1; INSERT INTO t JSON '{"k": "a", "c": 3, "l": [1]}'`), nil, true},
		{"date key in a JSON insert", shadowSchema,
			b(`DELETE FROM y WHERE k = 'a' AND c = '2026-11-26'; INSERT INTO y JSON '{"k": "a", "c": "2026-11-26", "l": [1]}'`), nil, true},
		{"type hint of the column's type", shadowSchema,
			b("DELETE FROM w WHERE k = ?; UPDATE w SET l = l + [1] WHERE k = (timeuuid) ?"),
			[]any{[16]byte{1}, [16]byte{1}}, true},
		{"JSON insert under a literal delete", shadowSchema,
			b(`DELETE FROM t WHERE k = 'a' AND c = 0; INSERT INTO t JSON '{"k": "a", "c": 0, "l": [1], "v": 2}'`), nil, true},
		{"negative literal against a bound value", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = -22969; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{int32(-22969)}, true},
		{"negative literal in an INSERT against a bound delete", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = ?; INSERT INTO t (k, c, l) VALUES ('a', -7, [1])"), []any{"a", int64(-7)}, true},
		{"negative double literal against a bound value", shadowSchema,
			b("DELETE FROM d WHERE k = -1.5; UPDATE d SET l = l + [1] WHERE k = ?"), []any{-1.5}, true},
		{"bound *big.Int (varint) against its literal", shadowSchema,
			b("DELETE FROM n WHERE k = 123456789012345678901234567890; UPDATE n SET l = l + [1] WHERE k = ?"),
			[]any{bigInt("123456789012345678901234567890")}, true},
		{"negative bound *big.Int against a negative literal", shadowSchema,
			b("DELETE FROM n WHERE k = ?; UPDATE n SET l = l + [1] WHERE k = -98765432109876543210"),
			[]any{bigInt("-98765432109876543210")}, true},
		{"varint: a bound int against a literal", shadowSchema,
			b("DELETE FROM n WHERE k = -3; UPDATE n SET l = l + [1] WHERE k = ?"), []any{int64(-3)}, true},
		{"static list under a partition delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a'; UPDATE t SET s = s + [1] WHERE k = 'a'"), nil, true},

		{"no delete", shadowSchema, b("UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0; INSERT INTO t (k, c, v) VALUES ('a', 0, 1)"), nil, false},
		{"another row", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 1; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"another partition", shadowSchema,
			b("DELETE FROM t WHERE k = 'b'; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"another table", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE u SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"bound keys differ", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = ?; UPDATE t SET l = l + ? WHERE k = ? AND c = ?"),
			[]any{"a", 0, []int{1}, "a", 1}, false},
		{"bound keys of different Go types", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = ?; UPDATE t SET l = l + ? WHERE k = ? AND c = ?"),
			[]any{"a", int64(0), []int{1}, "a", 0}, false},
		{"bound against literal, types known", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), []any{"a"}, true},
		{"bound against literal, types unknown", plainRoles(shadowSchema),
			b("DELETE FROM t WHERE k = ? AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), []any{"a"}, false},
		{"same literal, types unknown", plainRoles(shadowSchema),
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, true},
		{"literal of another kind", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = a AND c = 0"), nil, false},
		{"delete with its own timestamp", shadowSchema,
			b("DELETE FROM t USING TIMESTAMP 5 WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"write with its own timestamp", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t USING TIMESTAMP 9 SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"conditional delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0 IF EXISTS; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"exclusive range delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c > 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"inclusive range delete, a value below it", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c >= 3; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 2"), nil, false},
		{"two-sided range delete, the key above it", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c >= 3 AND c <= 5; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 6"), nil, false},
		{"exclusive range, the key at its bound", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c < 3; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{int32(3)}, false},
		{"a bound unsigned key is not ordered (gocql wraps it)", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c > 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{uint32(4294967295)}, false},
		{"a bound uint8 is not ordered either", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c > 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{uint8(1)}, false},
		{"a static list under a range delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c > 0; UPDATE t SET s = s + [1] WHERE k = 'a' AND c = 5"), nil, false},
		{"a static list keyed by the partition under a range delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c > 0; UPDATE t SET s = s + [1] WHERE k = 'a'"), nil, false},
		{"a range over uuids is not ordered", shadowSchema,
			b("DELETE FROM x WHERE k = 'a' AND u > 00000000-0000-0000-0000-000000000000; UPDATE x SET l = l + [1] WHERE k = 'a' AND u = 0f98c01c-a87f-4a94-95c2-e153d90de6fe"), nil, false},
		{"a range over doubles is not ordered", shadowSchema,
			b("DELETE FROM x WHERE k = 'a' AND f > 0.5; UPDATE x SET l = l + [1] WHERE k = 'a' AND f = 1.5"), nil, false},
		{"text range, the key outside it", shadowSchema,
			b("DELETE FROM x WHERE k = 'a' AND c > 'b'; UPDATE x SET l = l + [1] WHERE k = 'a' AND c = 'B'"), nil, false},
		{"a range on the partition key", shadowSchema,
			b("DELETE FROM t WHERE k > 'a'; UPDATE t SET l = l + [1] WHERE k = 'b' AND c = 0"), nil, false},
		{"static column delete in another partition", shadowSchema,
			b("DELETE s, v FROM t WHERE k = 'b' AND c = 0; UPDATE t SET s = s + [1] WHERE k = 'a'"), nil, false},
		{"regular column delete naming another row", shadowSchema,
			b("DELETE l FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1"), nil, false},
		{"JSON insert outside a range delete", shadowSchema,
			b(`DELETE FROM t WHERE k = 'a' AND c > 3; INSERT INTO t JSON '{"k": "a", "c": 3, "l": [1]}'`), nil, false},
		{"JSON insert, a key as text under an integer range", shadowSchema,
			b(`DELETE FROM t WHERE k = 'a' AND c > 1; INSERT INTO t JSON '{"k": "a", "c": "3", "l": [1]}'`), nil, false},
		{"date key, another day", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = '2026-11-26'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}, false},
		{"date key, a time before 1970 not at midnight names the next day (gocql truncates toward zero)", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = '1969-12-30'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(1969, 12, 30, 12, 0, 0, 0, time.UTC)}, false},
		{"date key beyond int32 days wraps in gocql: not ordered (review)", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c > '2026-01-01'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(5881580, 7, 12, 0, 0, 0, 0, time.UTC)}, false},
		{"date key whose milliseconds overflow: not ordered (review)", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c > '2026-01-01'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(300000000, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"date key far before year 1 wraps: not ordered (review)", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c < '2026-01-01'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Date(-5877641, 6, 22, 0, 0, 0, 0, time.UTC)}, false},
		{"date key, the zero time (an empty value)", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = ?; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{time.Time{}, time.Time{}}, false},
		{"date key, another spelling not read", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c = '2026-1-2'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = '2026-01-02'"), nil, false},
		{"date range, the key at its exclusive bound", shadowSchema,
			b("DELETE FROM y WHERE k = 'a' AND c < '2026-12-01'; UPDATE y SET l = l + [1] WHERE k = 'a' AND c = ?"),
			[]any{"2026-12-01"}, false},
		{"integer type hint", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = (bigint) ?"), []any{0}, false},
		{"type hint of another type", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = (blob) ? AND c = 0"), []any{"a"}, false},
		{"IN delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c IN (0, 1); UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"another column deleted", shadowSchema,
			b("DELETE v FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"element delete is not a column delete", shadowSchema,
			b("DELETE l[0] FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"static list under a row delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET s = s + [1], v = 1 WHERE k = 'a' AND c = 0"), nil, false},
		{"row delete without roles", kinds{"t.l": verdict.ColumnList},
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"positional set stays", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l[0] = 1 WHERE k = 'a' AND c = 0"), nil, false},
		{"covered append beside an uncovered one with the same text", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1"), nil, false},
		{"covered bound list beside an uncovered one of the same column", shadowSchema,
			b("DELETE FROM t WHERE k = ? AND c = ?; UPDATE t SET l = ? WHERE k = ? AND c = ?; UPDATE t SET l = ? WHERE k = ? AND c = ?"),
			[]any{"a", 0, []int{1}, "a", 0, []int{1}, "a", 1}, false},
		{"covered append beside an uncovered bound list", shadowSchema,
			b("DELETE l FROM t WHERE k = ? AND c = ?; UPDATE t SET l = l + [1], s = ? WHERE k = ? AND c = ?"),
			[]any{"a", 0, []int{1}, "a", 0}, false},
		{"bound key of a type the rule does not know", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0 AND v = 1; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0 AND v = ?"),
			[]any{1}, false},
		{"bound string for an integer key", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{"0"}, false},
		{"negative literal against the positive bound value", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = -5; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{5}, false},
		{"a spaced minus is not judged a literal", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = - 5; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{-5}, false},
		{"a minus before a bind marker", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = -?; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{5, -5}, false},
		{"another *big.Int", shadowSchema,
			b("DELETE FROM n WHERE k = 123456789012345678901234567890; UPDATE n SET l = l + [1] WHERE k = ?"),
			[]any{bigInt("123456789012345678901234567891")}, false},
		{"nil *big.Int", shadowSchema,
			b("DELETE FROM n WHERE k = 0; UPDATE n SET l = l + [1] WHERE k = ?"), []any{(*big.Int)(nil)}, false},
		{"*big.Int for an int key (gocql does not marshal it so)", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 5; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = ?"), []any{big.NewInt(5)}, false},
		{"-0.0 is not 0.0", shadowSchema,
			b("DELETE FROM d WHERE k = -0.0; UPDATE d SET l = l + [1] WHERE k = ?"), []any{0.0}, false},
		{"bound -0.0 is not bound 0.0", shadowSchema,
			b("DELETE FROM d WHERE k = ?; UPDATE d SET l = l + [1] WHERE k = ?"), []any{math.Copysign(0, -1), 0.0}, false},
		{"another uuid", shadowSchema,
			b("DELETE FROM w WHERE k = 0f98c01c-a87f-4a94-95c2-e153d90de6ff; UPDATE w SET l = l + [1] WHERE k = ?"),
			[]any{[16]byte{0x0f, 0x98, 0xc0, 0x1c, 0xa8, 0x7f, 0x4a, 0x94, 0x95, 0xc2, 0xe1, 0x53, 0xd9, 0x0d, 0xe6, 0xfe}}, false},
		{"a value that marshals itself", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = ? AND c = 0"), []any{ownString("a")}, false},
		{"JSON insert of another key", shadowSchema,
			b(`DELETE FROM t WHERE k = 'a' AND c = 0; INSERT INTO t JSON '{"k": "b", "c": 0, "l": [1]}'`), nil, false},
		{"JSON insert of two lists, one deleted", shadowSchema,
			b(`DELETE l FROM t WHERE k = 'a' AND c = 0; INSERT INTO t JSON '{"k": "a", "c": 0, "l": [1], "m": [2]}'`), nil, false},
		{"JSON string for an integer key", shadowSchema,
			b(`DELETE FROM t WHERE k = 'a' AND c = 0; INSERT INTO t JSON '{"k": "a", "c": "0", "l": [1]}'`), nil, false},
		{"now() in a value under a row delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET v = now(), l = [uuid()] WHERE k = 'a' AND c = 0"), nil, true},
		{"now() as the clustering key under a partition delete", shadowSchema,
			b("DELETE FROM t WHERE k = ?; INSERT INTO t (k, c, v) VALUES (?, now(), 1)"), []any{"a", "a"}, true},
		{"now() as the clustering key under a row delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; INSERT INTO t (k, c, v) VALUES ('a', now(), 1)"), nil, false},
		{"now() in WHERE under a row delete", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET v = 1 WHERE k = 'a' AND c = now()"), nil, false},
		{"now() as the partition key", shadowSchema,
			b("DELETE FROM t WHERE k = 'a'; INSERT INTO t (k, c, v) VALUES (now(), 0, 1)"), nil, false},
		{"now() in a value of a column not deleted", shadowSchema,
			b("DELETE l FROM t WHERE k = 'a' AND c = 0; UPDATE t SET v = now(), l = [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"now() keying the DELETE itself", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = now(); UPDATE t SET l = [1] WHERE k = 'a' AND c = 0"), nil, false},
		{"now() in a delete's element", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; DELETE m[now()] FROM t WHERE k = 'a' AND c = 0"), nil, false},
		// Found by review: a reason's text shared with a statement that has no footprint.
		{"same append text in a statement with IN", shadowSchema,
			b("UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1; DELETE FROM t WHERE k = 'a' AND c = 1; UPDATE t SET l = l + [1] WHERE k = 'b' AND c IN (1)"), nil, false},
		{"same append text in a statement with its own timestamp", shadowSchema,
			b("UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1; DELETE FROM t WHERE k = 'a' AND c = 1; UPDATE t USING TIMESTAMP 1000 SET l = l + [1] WHERE k = 'b' AND c = 1"), nil, false},
		{"same bound list text in a statement with IN", shadowSchema,
			b("UPDATE t SET l = ? WHERE k = 'a' AND c = 1; DELETE FROM t WHERE k = 'a' AND c = 1; UPDATE t SET l = ? WHERE k = 'b' AND c IN (1)"),
			[]any{[]int{1}, []int{1}}, false},
		{"same now() text in a statement with its own timestamp", shadowSchema,
			b("UPDATE t SET v = now() WHERE k = 'a' AND c = 1; DELETE FROM t WHERE k = 'a' AND c = 1; INSERT INTO t (k, c, v) VALUES ('b', 1, now()) USING TIMESTAMP 1000"), nil, false},
		{"JSON keys that fold to one column", shadowSchema,
			b(`INSERT INTO t JSON '{"k": "a", "K": "b", "c": 1, "l": [1]}'; DELETE FROM t WHERE k = 'a' AND c = 1`), nil, false},
		{"JSON key with an escape", shadowSchema,
			b(`INSERT INTO t JSON '{"k": "\ud800", "c": 1, "l": [1]}'; DELETE FROM t WHERE k = '` + "\uFFFD" + `' AND c = 1`), nil, false},
		{"counter stays", roles{kinds{"t.v": verdict.ColumnCounter}},
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET v = v + 1 WHERE k = 'a' AND c = 0"), nil, false},
		{"a function in the key", shadowSchema,
			b("DELETE FROM t WHERE k = 'a' AND c = 0; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = blobAsInt(0x00)"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict.ClassifyWithSchema(tc.cql, tc.schema).ForValues(tc.values, inspector{})
			if v.Idempotent != tc.want {
				t.Errorf("%s\nidempotent = %v, want %v (reasons %q)", tc.cql, v.Idempotent, tc.want, v.Reasons)
			}
		})
	}
}

// protocolBatch judges a protocol batch of entries, each with its values (values nil:
// none known), executed at timestamp at (0: not known).
func protocolBatch(entries []verdict.Verdict, values [][]any, at int64) verdict.Verdict {
	judged := make([]verdict.Verdict, len(entries))
	for i, e := range entries {
		var vals []any
		if values != nil {
			vals = values[i]
		}
		judged[i] = e.ForValues(vals, inspector{})
	}
	var valuesOf func(int) []any
	if values != nil {
		valuesOf = func(i int) []any { return values[i] }
	}
	return verdict.BatchAt(judged, valuesOf, inspector{}, false, false, at)
}

// TestShadowedListWriteProtocolBatch: the same rule across the entries of a protocol
// batch, each with its own values.
func TestShadowedListWriteProtocolBatch(t *testing.T) {
	del := verdict.ClassifyWithSchema("DELETE FROM t WHERE k = ? AND c = ?", shadowSchema)
	app := verdict.ClassifyWithSchema("UPDATE t SET l = l + ? WHERE k = ? AND c = ?", shadowSchema)
	set := verdict.ClassifyWithSchema("UPDATE t SET l = ?, v = ? WHERE k = ? AND c = ?", shadowSchema)
	doc := verdict.ClassifyWithSchema("INSERT INTO t JSON ?", shadowSchema)
	cdel := verdict.ClassifyWithSchema("DELETE l FROM t WHERE k = ? AND c = ?", shadowSchema)
	docIf := verdict.ClassifyWithSchema("INSERT INTO t JSON ? USING TIMESTAMP 5", shadowSchema)
	for _, tc := range []struct {
		name    string
		entries []verdict.Verdict
		values  [][]any
		want    bool
	}{
		{"append under a row delete", []verdict.Verdict{del, app}, [][]any{{"a", 1}, {[]int{1}, "a", 1}}, true},
		{"bound list under a row delete", []verdict.Verdict{set, del}, [][]any{{[]int{1}, 2, "a", 1}, {"a", 1}}, true},
		{"another row", []verdict.Verdict{del, app}, [][]any{{"a", 2}, {[]int{1}, "a", 1}}, false},
		{"no values", []verdict.Verdict{del, app}, nil, false},
		{"no delete", []verdict.Verdict{app, app}, [][]any{{[]int{1}, "a", 1}, {[]int{1}, "a", 1}}, false},
		// A bound JSON document is keyed by its values, as a literal one is.
		{"bound JSON document under a row delete", []verdict.Verdict{del, doc},
			[][]any{{"a", 1}, {`{"k": "a", "c": 1, "l": [1, 2], "v": 3}`}}, true},
		{"bound JSON document as bytes, a quoted key", []verdict.Verdict{doc, del},
			[][]any{{[]byte(`{"\"k\"": "a", "C": 1, "l": [1]}`)}, {"a", 1}}, true},
		{"bound JSON document, another row", []verdict.Verdict{del, doc},
			[][]any{{"a", 1}, {`{"k": "a", "c": 2, "l": [1]}`}}, false},
		{"bound JSON document, a key of another type", []verdict.Verdict{del, doc},
			[][]any{{"a", 1}, {`{"k": "a", "c": "1", "l": [1]}`}}, false},
		{"bound JSON document, the column delete misses the static list", []verdict.Verdict{cdel, doc},
			[][]any{{"a", 1}, {`{"k": "a", "c": 1, "l": [1], "s": [2]}`}}, false},
		{"bound JSON document, both lists under a row delete: the static one stays", []verdict.Verdict{del, doc},
			[][]any{{"a", 1}, {`{"k": "a", "c": 1, "l": [1], "s": [2]}`}}, false},
		{"bound JSON document with its own timestamp", []verdict.Verdict{del, docIf},
			[][]any{{"a", 1}, {`{"k": "a", "c": 1, "l": [1]}`}}, false},
		{"bound JSON array, not an object", []verdict.Verdict{del, doc}, [][]any{{"a", 1}, {`[1]`}}, false},
		{"bound JSON document, no values for the delete", []verdict.Verdict{del, doc},
			[][]any{nil, {`{"k": "a", "c": 1, "l": [1]}`}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := protocolBatch(tc.entries, tc.values, 0)
			if v.Idempotent != tc.want {
				t.Errorf("idempotent = %v, want %v (reasons %q)", v.Idempotent, tc.want, v.Reasons)
			}
		})
	}
}

// TestTimestampLiteralNow: 'now' is the server's clock to a timestamp column, in a
// literal and in a JSON document (found by review: a repeat wrote a second row).
func TestTimestampLiteralNow(t *testing.T) {
	for _, tc := range []struct {
		cql    string
		values []any
		want   bool
	}{
		{"INSERT INTO u (k, ts, v) VALUES (1, 'now', 1)", nil, false},
		{"INSERT INTO u (k, ts, v) VALUES (1, ' NOW', 1)", nil, false},
		{"UPDATE u SET l = ['now'] WHERE k = 1", nil, false},
		{`INSERT INTO u JSON '{"k": 1, "ts": "now"}'`, nil, false},
		{"INSERT INTO u JSON ?", []any{`{"k": 1, "ts": "\u006eow"}`}, false},
		{"INSERT INTO t (k, c, x) VALUES ('a', 1, 'now')", nil, true}, // x is text
		{"INSERT INTO u (k, ts, v) VALUES (1, 'nowhere', 1)", nil, true},
		{"INSERT INTO u JSON ?", []any{`{"k": 1, "ts": "known"}`}, true},
	} {
		v := verdict.ClassifyWithSchema(tc.cql, shadowSchema).ForValues(tc.values, inspector{})
		if v.Idempotent != tc.want {
			t.Errorf("%s %v: idempotent %v, want %v (%q)", tc.cql, tc.values, v.Idempotent, tc.want, v.Reasons)
		}
	}
}

func bigInt(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return n
}
