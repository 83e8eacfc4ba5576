package table_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/table"
)

// reviewMeta is a table as gocql v1.7's KeyspaceMetadata has it, read without the
// keyspace's user types (FromMetadata): gocql parses the type texts itself, leaving the
// user type addr as custom. c is a tuple holding a UDT, l a non-frozen list of UDTs.
func reviewMeta() *gocql.TableMetadata {
	nt := func(t gocql.Type, custom string) gocql.NativeType { return cqlvalue.NativeType(4, t, custom) }
	addr := nt(gocql.TypeCustom, "addr")
	cols := map[string]*gocql.ColumnMetadata{
		"id": cqlvalue.Column("id", gocql.ColumnPartitionKey, "int", nt(gocql.TypeInt, "")),
		"c":  cqlvalue.Column("c", gocql.ColumnRegular, "tuple<int, frozen<addr>>", gocql.TupleTypeInfo{NativeType: nt(gocql.TypeTuple, ""), Elems: []gocql.TypeInfo{nt(gocql.TypeInt, ""), addr}}),
		"l":  cqlvalue.Column("l", gocql.ColumnRegular, "list<frozen<addr>>", gocql.CollectionType{NativeType: nt(gocql.TypeList, ""), Elem: addr}),
		"v":  cqlvalue.Column("v", gocql.ColumnRegular, "int", nt(gocql.TypeInt, "")),
	}
	return &gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols, PartitionKey: []*gocql.ColumnMetadata{cols["id"]}}
}

// rawUDT binds a user type's serialised form (what a caller without the keyspace's
// types can bind to custom()).
type rawUDT []byte

func (r rawUDT) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

// TestTableFromMetadataUnparsedTuple (found by review): a column whose type text does
// not parse (here a tuple holding a user type FromMetadata does not know) takes its
// shape from gocql's own TypeInfo (Driver.TreeOf) — a tuple literal "(?, ?)", left out
// of the INSERT when the row does not give it — not "?" (a tuple bound to one marker is
// what gocql v1.7.0 cannot bind).
func TestTableFromMetadataUnparsedTuple(t *testing.T) {
	if !cqlvalue.TypeInfos() {
		t.Skip("the driver's metadata has no TypeInfo to fall back on (the ScyllaDB fork)")
	}
	tbl, err := table.FromMetadata(reviewMeta())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tbl.Column("c")
	if c.Marker() != "(?, ?)" {
		t.Errorf("tuple<int, frozen<addr>>: marker %q, want \"(?, ?)\" as at 18b7f2c", c.Marker())
	}
	vals, err := tbl.Values(map[string]any{"id": 1, "v": 2})
	if err != nil {
		t.Fatal(err)
	}
	cql, args, err := tbl.InsertRow(table.UsingTimestamp, vals)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cql, `"c"`) {
		t.Errorf("a row without the tuple column: %s (%d args), want the tuple left out as at 18b7f2c", cql, len(args))
	}
}

// TestOverwriteFromMetadataUnparsedList (found by review): a non-frozen list whose
// element type does not parse (a user type FromMetadata does not know) is still a list
// (Driver.TreeOf): overwrite with WithTimestamp refuses it (ErrListNotRepeatable), where
// a re-application would append the list's elements a second time.
func TestOverwriteFromMetadataUnparsedList(t *testing.T) {
	if !cqlvalue.TypeInfos() {
		t.Skip("the driver's metadata has no TypeInfo to fall back on (the ScyllaDB fork)")
	}
	tbl, err := table.FromMetadata(reviewMeta())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tbl.Column("l")
	if !c.Collection {
		t.Fatalf("list<frozen<addr>> is a collection")
	}
	if !c.IsList() {
		t.Errorf("list<frozen<addr>>: IsList false")
	}
	row := map[string]any{"id": 1, "l": []rawUDT{{0, 0, 0, 1, 'x'}}}
	_, err = overwrite.Row(t.Context(), nil, tbl, row, overwrite.WithTimestamp(1_700_000_000_000_000))
	if !errors.Is(err, overwrite.ErrListNotRepeatable) {
		t.Fatalf("Row with WithTimestamp and a non-empty non-frozen list: %v, want ErrListNotRepeatable (as at 18b7f2c)", err)
	}
}
