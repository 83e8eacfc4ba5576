package table

import (
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

func keyTable(t *testing.T, typ string) *Table {
	t.Helper()
	id := &gocql.ColumnMetadata{Name: "id", Kind: gocql.ColumnPartitionKey, Validator: "int"}
	k := &gocql.ColumnMetadata{Name: "k", Kind: gocql.ColumnClusteringKey, Validator: typ}
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

// TestTableDecodeKeyRoundTrip: every key EncodeKey produces decodes.
func TestTableDecodeKeyRoundTrip(t *testing.T) {
	now := time.UnixMilli(1_763_700_000_123).UTC()
	for _, c := range []struct {
		typ string
		v   any
	}{
		{"date", time.Time{}},
		{"timestamp", time.Time{}},
		{"int", ""},
		{"inet", net.IP{}},
		{"inet", net.IP{1, 2, 3}},
		{"frozen<list<date>>", []time.Time{{}, now}},
		{"frozen<list<date>>", []string{""}},
		{"frozen<list<timestamp>>", []time.Time{{}, now}},
		{"frozen<list<time>>", []time.Duration{0, time.Hour}},
		{"frozen<list<inet>>", []net.IP{net.ParseIP("1.2.3.4"), net.ParseIP("::1"), {}}},
		{"frozen<list<inet>>", []string{"1.2.3.4", "::1"}},
		{"frozen<list<varint>>", []*big.Int{big.NewInt(0), big.NewInt(-1), new(big.Int).Lsh(big.NewInt(1), 100)}},
		{"frozen<list<varint>>", []int64{0, -1}},
		{"frozen<list<decimal>>", []*inf.Dec{inf.NewDec(0, 0), inf.NewDec(-12345, 3)}},
		{"frozen<list<text>>", []string{"", "\xff\xfe"}},
		{"frozen<list<ascii>>", []string{"", "é"}},
		{"frozen<list<blob>>", [][]byte{{}, {1}, nil}},
		{"frozen<list<int>>", []string{"12", ""}},
		{"frozen<list<smallint>>", []int16{1}},
		{"frozen<list<tinyint>>", []int8{1}},
		{"frozen<list<float>>", []float32{1}},
		{"frozen<list<double>>", []float64{1}},
		{"frozen<list<uuid>>", []gocql.UUID{{}}},
		{"frozen<list<boolean>>", []bool{true}},
		{"frozen<set<frozen<list<int>>>>", [][]int{{}, {1}}},
		{"frozen<map<inet, frozen<tuple<int, date>>>>", map[string][]any{"::1": {nil, time.Time{}}}},
		{"frozen<tuple<date, timestamp, inet, varint>>", []any{time.Time{}, time.Time{}, nil, nil}},
		{"frozen<addr>", map[string]any{"street": "x"}},
		{"frozen<addr>", map[string]any{"born": time.Time{}, "n": big.NewInt(0), "ip": "::1"}},
		{"frozen<list<frozen<addr>>>", []map[string]any{{"born": time.Time{}}, {}}},
		{"vector<float, 2>", []float32{1, 2}},
		{"frozen<list<frozen<tuple<int, frozen<list<date>>>>>>", [][]any{{nil, []time.Time{{}}}}},
	} {
		tbl := keyTable(t, c.typ)
		b, err := tbl.EncodeKey([]any{1, c.v})
		if err != nil {
			t.Logf("%s %#v: EncodeKey refuses: %v", c.typ, c.v, err)
			continue
		}
		if d, err := tbl.DecodeKey(b); err != nil {
			t.Errorf("%s %#v: DecodeKey(EncodeKey) = %v (%x)", c.typ, c.v, err, b)
		} else {
			t.Logf("%s: ok %#v", c.typ, d[1])
		}
	}
}
