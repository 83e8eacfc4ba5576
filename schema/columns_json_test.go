package schema_test

import (
	"testing"

	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// TestSchemaColumnsJSONUnknownColumn: a column the schema file does not define is
// ColumnUnknown, and the verdict stays conservative for it in INSERT JSON as in UPDATE
// (a file older than the cluster may lack a list column added later). A list of the
// table's list columns, once kept for files, called such a key "not a list".
func TestSchemaColumnsJSONUnknownColumn(t *testing.T) {
	cols, err := schema.ParseColumns("CREATE TABLE ks.users (id text PRIMARY KEY, name text)")
	if err != nil {
		t.Fatal(err)
	}
	upd := retry.ClassifyWithSchema("UPDATE ks.users SET tags = ['x'] WHERE id = 'a'", cols)
	js := retry.ClassifyWithSchema(`INSERT INTO ks.users JSON '{"id": "a", "tags": ["x"]}'`, cols)
	if upd.Idempotent {
		t.Fatalf("UPDATE of an unknown column judged repeatable: %+v", upd)
	}
	if js.Idempotent {
		t.Errorf("INSERT JSON of the same unknown column judged repeatable (UPDATE: %v)", upd.Reasons)
	}
}
