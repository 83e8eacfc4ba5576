package outbox

import (
	"path/filepath"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// A row whose tuple column is NULL (or has a NULL element), bound as Table.InsertRow
// binds it (what overwrite sends through retry), must be recordable in the outbox as it
// was before 7efd743 (found by review).
func TestOutboxTupleNullElement(t *testing.T) {
	intT := cqlvalue.NativeType(4, gocql.TypeInt, "")
	text := cqlvalue.NativeType(4, gocql.TypeVarchar, "")
	tt := gocql.TupleTypeInfo{NativeType: cqlvalue.NativeType(4, gocql.TypeTuple, ""), Elems: []gocql.TypeInfo{intT, text}}
	cols := map[string]*gocql.ColumnMetadata{
		"id": cqlvalue.Column("id", gocql.ColumnPartitionKey, "int", intT),
		"tp": cqlvalue.Column("tp", gocql.ColumnRegular, "frozen<tuple<int, text>>", tt),
	}
	tbl, err := table.FromMetadata(&gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols,
		PartitionKey: []*gocql.ColumnMetadata{cols["id"]}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, tp := range []any{[]any{4, nil}, nil} {
		vals, err := tbl.Values(map[string]any{"id": 1, "tp": tp})
		if err != nil {
			t.Fatal(err)
		}
		ins, args, err := tbl.InsertRow(table.UsingTimestamp, vals)
		if err != nil {
			t.Fatal(err)
		}
		e := &retry.OutcomeUnknownError{Idempotent: true, Timestamp: 5,
			Statements: []retry.Statement{{CQL: ins, Values: append(args, int64(5))}}}
		if err := o.Append(e); err != nil {
			t.Errorf("tp=%v: args %#v: %v", tp, args, err)
		}
	}
}
