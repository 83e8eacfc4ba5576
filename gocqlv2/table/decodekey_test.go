package table

import (
	"encoding/binary"
	"errors"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/internal/cqlvalue"
)

// Found by review (cqlvalue.Unmarshal keeping a value the driver panics on as Raw):
// DecodeKey must still call bytes that are not a key's encoding ErrBadValue (its doc:
// "a value that does not decode as its column's type — are ErrBadValue"). A NULL tuple
// element inside a collection makes the v2 driver panic before it looks at the rest of
// the bytes: what follows the NULL is checked value by value (checkInside) and the
// framing by plausible (a collection's count met, nothing after the last element).

func be32(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

func listOfTuplesTable(t *testing.T) *Table {
	t.Helper()
	id := &gocql.ColumnMetadata{Name: "id", Kind: gocql.ColumnPartitionKey, Validator: "int"}
	k := &gocql.ColumnMetadata{Name: "k", Kind: gocql.ColumnClusteringKey, Validator: "frozen<list<frozen<tuple<int, int>>>>"}
	tbl, err := FromMetadata(&gocql.TableMetadata{Keyspace: "ks", Name: "t",
		Columns:      map[string]*gocql.ColumnMetadata{"id": id, "k": k},
		PartitionKey: []*gocql.ColumnMetadata{id}, ClusteringColumns: []*gocql.ColumnMetadata{k}})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// key is the EncodeKey framing of id 1 and a list column whose value is list (its bytes).
func key(list []byte) []byte {
	b := append(be32(4), 0, 0, 0, 1)
	b = append(b, be32(int32(len(list)))...)
	return append(b, list...)
}

func listOf(count int32, tuples ...[]byte) []byte {
	b := be32(count)
	for _, tp := range tuples {
		b = append(b, be32(int32(len(tp)))...)
		b = append(b, tp...)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestTableV2DecodeKeyRejectsCorruptAfterNullTupleElement(t *testing.T) {
	tbl := listOfTuplesTable(t)
	nullThen := func(second []byte) []byte { return cat(be32(-1), be32(int32(len(second))), second) }
	for name, b := range map[string][]byte{
		// (NULL, 0xdead): a 2-byte int. Without the NULL first the driver says
		// "expected 4 bytes decoding int".
		"2-byte int after a NULL element": key(listOf(1, nullThen([]byte{0xde, 0xad}))),
		// The list says 3 elements and holds 2: plausible() stops at the end of the bytes
		// without an error, the driver panics on the NULL, the bytes come back as Raw.
		"list count 3, two elements": key(listOf(3, nullThen([]byte{0, 0, 0, 1}), nullThen([]byte{0, 0, 0, 2}))),
	} {
		d, err := tbl.DecodeKey(b)
		if !errors.Is(err, ErrBadValue) {
			t.Errorf("%s: DecodeKey(%x) = %#v, %v; want ErrBadValue", name, b, d, err)
		}
	}
}

// TestTableV2RawInDecodedTupleKey: what is right — a Raw element of a decoded tuple key
// (a collection holding a tuple with a NULL element) re-encodes to the same bytes, and
// KeyArgs splits the tuple into elements that marshal, the Raw one as its bytes.
func TestTableV2RawInDecodedTupleKey(t *testing.T) {
	id := &gocql.ColumnMetadata{Name: "id", Kind: gocql.ColumnPartitionKey, Validator: "int"}
	k := &gocql.ColumnMetadata{Name: "k", Kind: gocql.ColumnClusteringKey, Validator: "frozen<tuple<int, frozen<list<frozen<tuple<int, int>>>>>>"}
	tbl, err := FromMetadata(&gocql.TableMetadata{Keyspace: "ks", Name: "t",
		Columns:      map[string]*gocql.ColumnMetadata{"id": id, "k": k},
		PartitionKey: []*gocql.ColumnMetadata{id}, ClusteringColumns: []*gocql.ColumnMetadata{k}})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := tbl.KeyValues(map[string]any{"id": 1, "k": []any{7, [][]any{{nil, 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tbl.EncodeKey(kv)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tbl.DecodeKey(e)
	if err != nil {
		t.Fatal(err)
	}
	tup, ok := d[1].([]any)
	if !ok || len(tup) != 2 {
		t.Fatalf("decoded %#v", d)
	}
	if _, raw := tup[1].(cqlvalue.Raw); !raw {
		t.Fatalf("element 1 decoded as %T, want Raw (the case under test)", tup[1])
	}
	if again, err := tbl.EncodeKey(d); err != nil || string(again) != string(e) {
		t.Fatalf("re-encoded %x %v, want %x", again, err, e)
	}
	args, err := tbl.KeyArgs(d)
	want, _ := tbl.KeyArgs(kv)
	if err != nil || len(args) != 3 || len(want) != 3 {
		t.Fatalf("KeyArgs %#v %v", args, err)
	}
	c, _ := tbl.Column("k")
	elems := c.Type.(gocql.TupleTypeInfo).Elems
	for i, ti := range map[int]gocql.TypeInfo{1: elems[0], 2: elems[1]} {
		got, err1 := gocql.Marshal(ti, args[i])
		exp, err2 := gocql.Marshal(ti, want[i])
		if err1 != nil || err2 != nil || string(got) != string(exp) {
			t.Errorf("arg %d: %x %v, want %x %v", i, got, err1, exp, err2)
		}
	}
}
