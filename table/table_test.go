package table

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

func native(t gocql.Type) gocql.NativeType { return cqlvalue.NativeType(0, t, "") }

// meta is a table with every role, a case-sensitive name, a non-frozen set and a frozen
// list: PRIMARY KEY (id, seq).
func meta() *gocql.TableMetadata {
	text, intT := native(gocql.TypeVarchar), native(gocql.TypeInt)
	cols := map[string]*gocql.ColumnMetadata{
		"id":     cqlvalue.Column("id", gocql.ColumnPartitionKey, "int", intT),
		"seq":    cqlvalue.Column("seq", gocql.ColumnClusteringKey, "int", intT),
		"Name":   cqlvalue.Column("Name", gocql.ColumnRegular, "text", text),
		"age":    cqlvalue.Column("age", gocql.ColumnRegular, "int", intT),
		"tier":   cqlvalue.Column("tier", gocql.ColumnStatic, "text", text),
		"tags":   cqlvalue.Column("tags", gocql.ColumnRegular, "set<text>", gocql.CollectionType{NativeType: native(gocql.TypeSet), Elem: text}),
		"frozen": cqlvalue.Column("frozen", gocql.ColumnRegular, "frozen<list<int>>", gocql.CollectionType{NativeType: native(gocql.TypeList), Elem: intT}),
	}
	return &gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols,
		PartitionKey: []*gocql.ColumnMetadata{cols["id"]}, ClusteringColumns: []*gocql.ColumnMetadata{cols["seq"]}}
}

// kvMeta is PRIMARY KEY ((a, "B")) with one regular column: a composite partition key,
// no clustering.
func kvMeta() *gocql.TableMetadata {
	cols := map[string]*gocql.ColumnMetadata{
		"a": cqlvalue.Column("a", gocql.ColumnPartitionKey, "text", native(gocql.TypeVarchar)),
		"B": cqlvalue.Column("B", gocql.ColumnPartitionKey, "bigint", native(gocql.TypeBigInt)),
		"v": cqlvalue.Column("v", gocql.ColumnRegular, "text", native(gocql.TypeVarchar)),
	}
	return &gocql.TableMetadata{Keyspace: "KS", Name: "kv", Columns: cols,
		PartitionKey: []*gocql.ColumnMetadata{cols["a"], cols["B"]}}
}

func mustTable(t testing.TB, m *gocql.TableMetadata) *Table {
	t.Helper()
	tbl, err := FromMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestTableColumns(t *testing.T) {
	tbl := mustTable(t, meta())
	var names []string
	for _, c := range tbl.Columns() {
		names = append(names, c.Name+":"+c.Role.String())
	}
	want := "id:partition key seq:clustering key tier:static Name:regular age:regular frozen:regular tags:regular"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("columns\n got %s\nwant %s", got, want)
	}
	if c, _ := tbl.Column("tags"); !c.Collection {
		t.Fatal("set<text> not marked as a non-frozen collection")
	}
	if c, _ := tbl.Column("frozen"); c.Collection {
		t.Fatal("frozen<list<int>> marked as non-frozen")
	}
	if _, ok := tbl.Column("name"); ok {
		t.Fatal("column names are case-sensitive")
	}
	if k := tbl.KeyColumns(); len(k) != 2 || k[0].Name != "id" || k[1].Name != "seq" {
		t.Fatalf("key columns %v", k)
	}
	if ColumnRole(9).String() != "unknown" {
		t.Fatal("out-of-range role")
	}
	if _, err := FromMetadata(&gocql.TableMetadata{Keyspace: "ks", Name: "t"}); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("no partition key: %v", err)
	}
	if _, err := FromMetadata(nil); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("nil metadata: %v", err)
	}
}

func TestTableCounterColumnsDescribed(t *testing.T) {
	m := meta()
	m.Columns["hits"] = cqlvalue.Column("hits", gocql.ColumnRegular, "counter", native(gocql.TypeCounter))
	tbl, err := FromMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := tbl.Column("hits"); !ok || c.Type.Type() != gocql.TypeCounter {
		t.Fatalf("counter column: %v %v", c, ok)
	}
}

func TestTableStatements(t *testing.T) {
	tbl, kv := mustTable(t, meta()), mustTable(t, kvMeta())
	must := func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const all = CellValue | CellWriteTime | CellTTL
	for _, tc := range []struct{ name, got, want string }{
		{"insert", tbl.Insert(0), `INSERT INTO "ks"."t" ("id", "seq", "tier", "Name", "age", "frozen", "tags") VALUES (?, ?, ?, ?, ?, ?, ?)`},
		{"insert ttl", tbl.Insert(UsingTTL), `INSERT INTO "ks"."t" ("id", "seq", "tier", "Name", "age", "frozen", "tags") VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ?`},
		{"insert timestamp", tbl.Insert(UsingTimestamp), `INSERT INTO "ks"."t" ("id", "seq", "tier", "Name", "age", "frozen", "tags") VALUES (?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?`},
		{"insert both", tbl.Insert(UsingTTL | UsingTimestamp), `INSERT INTO "ks"."t" ("id", "seq", "tier", "Name", "age", "frozen", "tags") VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?`},
		{"insert unknown bits", tbl.Insert(UsingTimestamp | 0x80), tbl.Insert(UsingTimestamp)},
		{"delete row", tbl.DeleteRow(), `DELETE FROM "ks"."t" USING TIMESTAMP ? WHERE "id" = ? AND "seq" = ?`},
		{"delete partition", tbl.DeletePartition(), `DELETE FROM "ks"."t" USING TIMESTAMP ? WHERE "id" = ?`},
		{"delete row without clustering", kv.DeleteRow(), `DELETE FROM "KS"."kv" USING TIMESTAMP ? WHERE "a" = ? AND "B" = ?`},
		{"delete partition composite", kv.DeletePartition(), kv.DeleteRow()},
		{"count range", kv.CountRange(), `SELECT COUNT(*) FROM "KS"."kv" WHERE token("a", "B") > ? AND token("a", "B") <= ?`},
		{"select values", must(tbl.SelectByKey(CellValue, "Name", "age")), `SELECT "Name", "age" FROM "ks"."t" WHERE "id" = ? AND "seq" = ?`},
		{"select zero cells", must(tbl.SelectByKey(0, "Name")), `SELECT "Name" FROM "ks"."t" WHERE "id" = ? AND "seq" = ?`},
		{"select static by partition", must(tbl.SelectByPartitionKey(CellWriteTime, "Name")), `SELECT WRITETIME("Name") FROM "ks"."t" WHERE "id" = ? LIMIT 1`},
		{"select cells", must(tbl.SelectByKey(all, "Name", "tags")), `SELECT "Name", WRITETIME("Name"), TTL("Name"), "tags", MAXWRITETIME("tags"), TTL("tags") FROM "ks"."t" WHERE "id" = ? AND "seq" = ?`},
		{"select write time", must(tbl.SelectByKey(CellWriteTime, "tags", "frozen")), `SELECT MAXWRITETIME("tags"), WRITETIME("frozen") FROM "ks"."t" WHERE "id" = ? AND "seq" = ?`},
		{"select key columns by value", must(tbl.SelectByKey(CellWriteTime, "seq", "tier")), `SELECT "seq", WRITETIME("tier") FROM "ks"."t" WHERE "id" = ? AND "seq" = ?`},
		{"select nothing", must(tbl.SelectByKey(all)), `SELECT "id" FROM "ks"."t" WHERE "id" = ? AND "seq" = ?`},
		{"scan", must(kv.ScanRange(all, "a", "B", "v")), `SELECT "a", "B", "v", WRITETIME("v"), TTL("v") FROM "KS"."kv" WHERE token("a", "B") > ? AND token("a", "B") <= ?`},
		{"update", must(tbl.Update(UsingTTL, "age", "Name")), `UPDATE "ks"."t" USING TTL ? SET "age" = ?, "Name" = ? WHERE "id" = ? AND "seq" = ?`},
		{"update static", must(tbl.Update(0, "tier")), `UPDATE "ks"."t" SET "tier" = ? WHERE "id" = ? AND "seq" = ?`},
		{"update both", must(kv.Update(UsingTTL|UsingTimestamp, "v")), `UPDATE "KS"."kv" USING TTL ? AND TIMESTAMP ? SET "v" = ? WHERE "a" = ? AND "B" = ?`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestTableStatementsQuoteNames(t *testing.T) {
	m := kvMeta()
	m.Keyspace, m.Name = `k"s`, "select"
	m.Columns["v"].Name = `v"; DROP`
	m.Columns[`v"; DROP`] = m.Columns["v"]
	delete(m.Columns, "v")
	tbl := mustTable(t, m)
	want := `INSERT INTO "k""s"."select" ("a", "B", "v""; DROP") VALUES (?, ?, ?)`
	if got := tbl.Insert(0); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if got, _ := tbl.SelectByKey(CellWriteTime, `v"; DROP`); got != `SELECT WRITETIME("v""; DROP") FROM "k""s"."select" WHERE "a" = ? AND "B" = ?` {
		t.Fatalf("select: %s", got)
	}
}

func TestTableBuilderErrors(t *testing.T) {
	tbl := mustTable(t, meta())
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"select unknown", second(tbl.SelectByKey(CellValue, "nope")), ErrUnknownColumn},
		{"select case", second(tbl.SelectByKey(CellValue, "name")), ErrUnknownColumn},
		{"scan unknown", second(tbl.ScanRange(CellValue, "id", "nope")), ErrUnknownColumn},
		{"update none", second(tbl.Update(UsingTTL)), ErrUnknownColumn},
		{"update unknown", second(tbl.Update(UsingTTL, "nope")), ErrUnknownColumn},
		{"update key", second(tbl.Update(0, "age", "seq")), ErrUnknownColumn},
		{"undescribed table", second((&Table{}).SelectByKey(CellValue)), ErrUnknownTable},
	} {
		var e *Error
		if !errors.Is(tc.err, tc.want) || !errors.As(tc.err, &e) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

func second(_ string, err error) error { return err }

// TestTableStatementsMemoized: a statement built from chosen columns is built once.
func TestTableStatementsMemoized(t *testing.T) {
	tbl := mustTable(t, meta())
	a, _ := tbl.SelectByKey(CellValue|CellWriteTime, "Name", "age")
	allocs := testing.AllocsPerRun(100, func() { tbl.SelectByKey(CellValue|CellWriteTime, "Name", "age") })
	b, _ := tbl.SelectByKey(CellValue|CellWriteTime, "Name", "age")
	if a != b || allocs > 3 {
		t.Fatalf("%v allocations per call after the first", allocs)
	}
	// Same columns, other cells or another order: another statement.
	c, _ := tbl.SelectByKey(CellValue, "Name", "age")
	d, _ := tbl.SelectByKey(CellValue|CellWriteTime, "age", "Name")
	if c == a || d == a {
		t.Fatal("memo mixed up statements")
	}
}

type embedded struct {
	Age int
}

type person struct {
	embedded
	ID   int      `db:"id"`
	Seq  int      `db:"seq"`
	Name *string  `db:"Name"`
	Tier string   `db:"tier,omitempty"`
	Tags []string `db:"tags"`
	Skip string   `db:"-"`
	//lint:ignore U1000 present to show unexported fields are not columns
	hidden int
}

func TestTableValues(t *testing.T) {
	tbl := mustTable(t, meta())
	idx := func(name string) int {
		for i, c := range tbl.Columns() {
			if c.Name == name {
				return i
			}
		}
		return -1
	}
	vals, err := tbl.Values(&person{ID: 1, Seq: 2, embedded: embedded{Age: 0}, Tags: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != len(tbl.Columns()) || cap(vals) < len(vals)+2 {
		t.Fatalf("len %d cap %d: one value per column, room for TTL and timestamp", len(vals), cap(vals))
	}
	if vals[idx("id")] != 1 || vals[idx("seq")] != 2 || vals[idx("age")] != 0 || vals[idx("tier")] != "" {
		t.Fatalf("values %v", vals)
	}
	if vals[idx("Name")] != gocql.UnsetValue || vals[idx("tags")] != gocql.UnsetValue || vals[idx("frozen")] != gocql.UnsetValue {
		t.Fatalf("nil pointer, empty non-frozen collection and missing field must be unset: %v", vals)
	}
	// An empty frozen collection is a value, not NULL.
	vals, err = tbl.Values(map[string]any{"id": 1, "seq": 2, "frozen": []int{}, "tags": []string{"a"}})
	if err != nil || vals[idx("frozen")] == gocql.UnsetValue || vals[idx("tags")] == gocql.UnsetValue {
		t.Fatalf("frozen empty list / set: %v %v", vals, err)
	}
	key, err := tbl.KeyValues(map[string]any{"seq": 2, "id": 1, "age": 5})
	if err != nil || len(key) != 2 || key[0] != 1 || key[1] != 2 {
		t.Fatalf("KeyValues = %v, %v", key, err)
	}
	for _, tc := range []struct {
		row  any
		want error
	}{
		{map[string]any{"seq": 1}, ErrMissingKey},
		{map[string]any{"id": 1}, ErrMissingKey},
		{map[string]any{"id": 1, "seq": gocql.UnsetValue}, ErrMissingKey},
		{map[string]any{"id": 1, "seq": (*int)(nil)}, ErrMissingKey},
		{map[string]any{"id": 1, "seq": 1, "name": "lower-case is another column"}, ErrUnknownColumn},
		{map[string]any{"id": 1, "seq": 1, "age": "x"}, ErrBadValue},
		{map[string]any{"id": "one", "seq": 1}, ErrBadValue},
		{map[string]any{"id": 1, "seq": 1, "tags": 5}, ErrBadValue},
		{map[string]any{"id": 1 << 40, "seq": 1}, ErrBadValue},
		{[]int{1}, ErrNotARow},
		{"row", ErrNotARow},
		{(*person)(nil), ErrNotARow},
		{nil, ErrNotARow},
	} {
		_, err := tbl.Values(tc.row)
		var e *Error
		if !errors.Is(err, tc.want) || !errors.As(err, &e) || e.Row != -1 || e.Table != "t" {
			t.Errorf("Values(%#v) = %v, want %v", tc.row, err, tc.want)
		}
		if _, kerr := tbl.KeyValues(tc.row); !errors.Is(kerr, tc.want) {
			t.Errorf("KeyValues(%#v) = %v, want %v", tc.row, kerr, tc.want)
		}
	}
}

func TestTableDescribeRejectsBeforeSending(t *testing.T) {
	ctx := context.Background()
	for _, tc := range [][2]string{{"", "t"}, {"ks", ""}, {"ks", `t"; DROP TABLE t; --`}, {"ks", strings.Repeat("x", 223)}, {strings.Repeat("k", 49), "t"}} {
		if _, err := Describe(ctx, nil, tc[0], tc[1]); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Describe(%q, %q) = %v", tc[0], tc[1], err)
		}
	}
	if _, err := Describe(ctx, nil, "ks", "t"); err == nil {
		t.Error("nil session accepted")
	}
}

func TestTableErrorMessage(t *testing.T) {
	e := &Error{Err: ErrBadValue, Keyspace: "ks", Table: "t", Column: "age", Row: 3, Detail: "string for int"}
	if got := e.Error(); got != `table: value does not fit the column type: table ks.t row 3 column "age": string for int` {
		t.Fatal(got)
	}
}

func BenchmarkTableValues(b *testing.B) {
	tbl := mustTable(b, meta())
	name := "Ada"
	row := &person{ID: 1, Seq: 2, Name: &name, Tags: []string{"x"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tbl.Values(row); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTableSelectByKey(b *testing.B) {
	tbl := mustTable(b, meta())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tbl.SelectByKey(CellValue|CellWriteTime|CellTTL, "Name", "age", "frozen", "tags"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTableCellTimesBefore50: before Cassandra 5.0 a write time or TTL of a non-frozen
// collection is an *UnsupportedError naming the column and version (the server would
// refuse WRITETIME(set) and know no MAXWRITETIME); every other column reads as on 5.0.
func TestTableCellTimesBefore50(t *testing.T) {
	tbl, err := fromMetadata(meta(), nil, "4.1.10")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.SelectByKey(CellValue|CellWriteTime|CellTTL, "Name", "frozen", "tier")
	if want := `SELECT "Name", WRITETIME("Name"), TTL("Name"), "frozen", WRITETIME("frozen"), TTL("frozen"), "tier", WRITETIME("tier"), TTL("tier") FROM "ks"."t" WHERE "id" = ? AND "seq" = ?`; err != nil || got != want {
		t.Fatalf("scalars and frozen on 4.1:\n got %s %v\nwant %s", got, err, want)
	}
	if got, err := tbl.ScanRange(CellValue, "tags"); err != nil || !strings.HasPrefix(got, `SELECT "tags" FROM`) {
		t.Fatalf("a collection's value on 4.1: %s %v", got, err)
	}
	for _, cells := range []Cell{CellWriteTime, CellTTL, CellValue | CellWriteTime | CellTTL} {
		for _, build := range []func(Cell, ...string) (string, error){tbl.SelectByKey, tbl.ScanRange} {
			q, err := build(cells, "Name", "tags")
			var ue *UnsupportedError
			if !errors.Is(err, ErrUnsupported) || !errors.As(err, &ue) || ue.Column != "tags" || ue.Version != "4.1.10" || ue.Needs != "5.0" || q != "" {
				t.Fatalf("cells %b: %q %v, want an UnsupportedError for tags", cells, q, err)
			}
			if msg := err.Error(); !strings.Contains(msg, `"tags"`) || !strings.Contains(msg, "4.1.10") || !strings.HasPrefix(msg, "table: ") {
				t.Fatalf("message %q", msg)
			}
		}
	}
	on50, err := fromMetadata(meta(), nil, "5.0.9")
	if err != nil {
		t.Fatal(err)
	}
	if q, err := on50.SelectByKey(CellWriteTime, "tags"); err != nil || !strings.Contains(q, `MAXWRITETIME("tags")`) {
		t.Fatalf("5.0: %s %v", q, err)
	}
}
