package table

import (
	"math/big"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

func keyTable(t *testing.T, typ string) *Table {
	t.Helper()
	id := cqlvalue.Column("id", gocql.ColumnPartitionKey, "int", nil)
	k := cqlvalue.Column("k", gocql.ColumnClusteringKey, typ, nil)
	udts := map[string]cqltype.UserType{
		"addr": {Fields: []string{"street", "born", "ip", "n"}, Types: []string{"text", "date", "inet", "varint"}},
	}
	tbl, err := fromMetadata(&gocql.TableMetadata{Keyspace: "ks", Name: "t",
		Columns:      map[string]*gocql.ColumnMetadata{"id": id, "k": k},
		PartitionKey: []*gocql.ColumnMetadata{id}, ClusteringColumns: []*gocql.ColumnMetadata{k}}, udts, "5.0.9")
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestTableDecodeKeyRoundTrip: keys holding a user type — fields left out, a zero date, a varint, an inet
// as text, a list of them — decode (the key checks refuse no key EncodeKey makes). Every
// other key type: integration/crossdriver's TestCrossDriverKeysRoundTrip, on both
// drivers (this needs the keyspace's user types, which only the package can give).
func TestTableDecodeKeyRoundTrip(t *testing.T) {
	for _, c := range []struct {
		typ string
		v   any
	}{
		{"frozen<addr>", map[string]any{"street": "x"}},
		{"frozen<addr>", map[string]any{"born": time.Time{}, "n": big.NewInt(0), "ip": "::1"}},
		{"frozen<list<frozen<addr>>>", []map[string]any{{"born": time.Time{}}, {}}},
	} {
		tbl := keyTable(t, c.typ)
		b, err := tbl.EncodeKey([]any{1, c.v})
		if err != nil {
			t.Errorf("%s %#v: EncodeKey: %v", c.typ, c.v, err)
			continue
		}
		if d, err := tbl.DecodeKey(b); err != nil {
			t.Errorf("%s %#v: DecodeKey(EncodeKey) = %v (%x)", c.typ, c.v, err, b)
		} else {
			t.Logf("%s: ok %#v", c.typ, d[1])
		}
	}
}
