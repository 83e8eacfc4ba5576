package overwrite

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

func meta() *gocql.TableMetadata {
	text := gocql.NewNativeType(0, gocql.TypeVarchar, "")
	intT := gocql.NewNativeType(0, gocql.TypeInt, "")
	cols := map[string]*gocql.ColumnMetadata{
		"id":     {Name: "id", Kind: gocql.ColumnPartitionKey, Type: intT, Validator: "int"},
		"seq":    {Name: "seq", Kind: gocql.ColumnClusteringKey, Type: intT, Validator: "int"},
		"Name":   {Name: "Name", Kind: gocql.ColumnRegular, Type: text, Validator: "text"},
		"age":    {Name: "age", Kind: gocql.ColumnRegular, Type: intT, Validator: "int"},
		"tier":   {Name: "tier", Kind: gocql.ColumnStatic, Type: text, Validator: "text"},
		"tags":   {Name: "tags", Kind: gocql.ColumnRegular, Type: gocql.CollectionType{NativeType: gocql.NewNativeType(0, gocql.TypeSet, ""), Elem: text}, Validator: "set<text>"},
		"frozen": {Name: "frozen", Kind: gocql.ColumnRegular, Type: gocql.CollectionType{NativeType: gocql.NewNativeType(0, gocql.TypeList, ""), Elem: intT}, Validator: "frozen<list<int>>"},
	}
	return &gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols,
		PartitionKey: []*gocql.ColumnMetadata{cols["id"]}, ClusteringColumns: []*gocql.ColumnMetadata{cols["seq"]}}
}

func TestOverwriteStatementsQuoted(t *testing.T) {
	tbl, err := fromMetadata(meta())
	if err != nil {
		t.Fatal(err)
	}
	want := `INSERT INTO "ks"."t" ("id", "seq", "tier", "Name", "age", "frozen", "tags") VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?`
	if tbl.insertCQL != want {
		t.Fatalf("insert:\n got %s\nwant %s", tbl.insertCQL, want)
	}
	if tbl.deleteRowCQL != `DELETE FROM "ks"."t" USING TIMESTAMP ? WHERE "id" = ? AND "seq" = ?` {
		t.Fatalf("row delete: %s", tbl.deleteRowCQL)
	}
	if tbl.deletePartitionCQL != `DELETE FROM "ks"."t" USING TIMESTAMP ? WHERE "id" = ?` {
		t.Fatalf("partition delete: %s", tbl.deletePartitionCQL)
	}
	if c, _ := tbl.Column("tags"); !c.Collection {
		t.Fatal("set<text> not marked as a non-frozen collection")
	}
	if c, _ := tbl.Column("frozen"); c.Collection {
		t.Fatal("frozen<list<int>> marked as non-frozen")
	}
}

func TestOverwriteCounterTableRejected(t *testing.T) {
	m := meta()
	m.Columns["hits"] = &gocql.ColumnMetadata{Name: "hits", Kind: gocql.ColumnRegular, Type: gocql.NewNativeType(0, gocql.TypeCounter, ""), Validator: "counter"}
	if _, err := fromMetadata(m); !errors.Is(err, ErrCounterTable) {
		t.Fatalf("err = %v", err)
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

func TestOverwriteRowValues(t *testing.T) {
	tbl, _ := fromMetadata(meta())
	idx := func(name string) int { c, _ := tbl.Column(name); return c.index }
	vals, err := tbl.rowValues(&person{ID: 1, Seq: 2, embedded: embedded{Age: 0}, Tags: []string{}}, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if vals[idx("id")] != 1 || vals[idx("seq")] != 2 || vals[idx("age")] != 0 || vals[idx("tier")] != "" {
		t.Fatalf("values %v", vals)
	}
	if vals[idx("Name")] != gocql.UnsetValue || vals[idx("tags")] != gocql.UnsetValue || vals[idx("frozen")] != gocql.UnsetValue {
		t.Fatalf("nil pointer, empty non-frozen collection and missing field must be unset: %v", vals)
	}
	for _, tc := range []struct {
		row  any
		want error
	}{
		{map[string]any{"seq": 1}, ErrMissingKey},
		{map[string]any{"id": 1}, ErrMissingKey},
		{map[string]any{"id": 1, "seq": gocql.UnsetValue}, ErrMissingKey},
		{map[string]any{"id": 1, "seq": 1, "name": "lower-case is another column"}, ErrUnknownColumn},
		{map[string]any{"id": 1, "seq": 1, "age": "x"}, ErrBadValue},
		{map[string]any{"id": "one", "seq": 1}, ErrBadValue},
		{map[string]any{"id": 1, "seq": 1, "tags": 5}, ErrBadValue},
		{[]int{1}, ErrNotARow},
		{"row", ErrNotARow},
		{(*person)(nil), ErrNotARow},
		{nil, ErrNotARow},
	} {
		_, err := tbl.rowValues(tc.row, -1, nil)
		var oe *Error
		if !errors.Is(err, tc.want) || !errors.As(err, &oe) {
			t.Errorf("rowValues(%#v) = %v, want %v", tc.row, err, tc.want)
		}
	}
}

func TestOverwriteSnakeCase(t *testing.T) {
	for in, want := range map[string]string{"UserID": "user_id", "FirstName": "first_name", "ID": "id",
		"HTTPServer": "http_server", "A": "a", "Größe": "größe", "Already_Snake": "already_snake"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOverwriteOptionsRejectBadValues(t *testing.T) {
	for _, o := range []Option{WithTimestamp(0), WithTimestamp(-1), WithTTL(0), WithRetryPolicy(nil), WithRetryPolicy(retry.NewPolicy(retry.WithMaxAttempts(0))), WithMaxBatchBytes(1)} {
		if _, err := buildOptions(nil, []Option{o}); err == nil {
			t.Error("bad option accepted")
		}
	}
	if _, err := Row(context.TODO(), nil, nil, nil); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("nil table: %v", err)
	}
	tbl, _ := fromMetadata(meta())
	if _, err := Row(context.TODO(), nil, tbl, map[string]any{"id": 1, "seq": 1}, WithTTL(-5)); err == nil || !strings.Contains(err.Error(), "TTL") {
		t.Fatalf("bad TTL: %v", err)
	}
}
