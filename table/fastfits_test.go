package table

import (
	"errors"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// TestTableUDTNamedLikeNative (found by review): Values once passed the parsed tree's
// Name to Driver.Fits whatever its Kind (internal/core/table/values.go), so for a UDT
// whose name is a native type's ("text", "int": Cassandra accepts CREATE TYPE "text") the
// fast path takes the user type for the native one: a string (an int, a []byte, …) is
// accepted for the user type column, where 18b7f2c marshalled it for the UDT and
// returned ErrBadValue before anything was sent. Reached with a type text that quotes
// the name (frozen<"text">); Cassandra 5.0.9 itself writes it unquoted; the
// parser then reads it as native text, a limit of the stored form left as it is.
func TestTableUDTNamedLikeNative(t *testing.T) {
	cols := map[string]*gocql.ColumnMetadata{
		"id": cqlvalue.Column("id", gocql.ColumnPartitionKey, "int", cqlvalue.NativeType(4, gocql.TypeInt, "")),
		"u":  cqlvalue.Column("u", gocql.ColumnRegular, `frozen<"text">`, cqlvalue.NativeType(4, gocql.TypeCustom, "text")),
		"w":  cqlvalue.Column("w", gocql.ColumnRegular, `frozen<"int">`, cqlvalue.NativeType(4, gocql.TypeCustom, "int")),
	}
	tm := &gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols, PartitionKey: []*gocql.ColumnMetadata{cols["id"]}}
	udts := map[string]cqltype.UserType{"text": {Fields: []string{"a"}, Types: []string{"int"}}, "int": {Fields: []string{"a"}, Types: []string{"text"}}}
	tbl, err := fromMetadata(tm, udts, "5.0.9")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := tbl.Column("u"); c.Type.Type() != gocql.TypeUDT {
		t.Fatalf("u is %v, want the user type", c.Type)
	}
	for name, v := range map[string]any{"u": "not a UDT", "w": 42} {
		if _, err := tbl.Values(map[string]any{"id": 1, name: v}); !errors.Is(err, ErrBadValue) {
			t.Errorf("%T for user type column %s: %v, want ErrBadValue (as at 18b7f2c)", v, name, err)
		}
	}
}
