package table

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// keyMeta is a table keyed by one column of each type a key commonly has: PRIMARY KEY
// ((t, b), i, ts, u, bl, f, tu).
func keyMeta() *gocql.TableMetadata {
	col := func(name string, kind gocql.ColumnKind, ti gocql.TypeInfo, v string) *gocql.ColumnMetadata {
		return cqlvalue.Column(name, kind, v, ti)
	}
	pk, ck := gocql.ColumnPartitionKey, gocql.ColumnClusteringKey
	key := []*gocql.ColumnMetadata{
		col("t", pk, native(gocql.TypeVarchar), "text"),
		col("b", pk, native(gocql.TypeBigInt), "bigint"),
		col("i", ck, native(gocql.TypeInt), "int"),
		col("ts", ck, native(gocql.TypeTimestamp), "timestamp"),
		col("u", ck, native(gocql.TypeUUID), "uuid"),
		col("bl", ck, native(gocql.TypeBlob), "blob"),
		col("f", ck, gocql.CollectionType{NativeType: native(gocql.TypeList), Elem: native(gocql.TypeInt)}, "frozen<list<int>>"),
		col("tu", ck, gocql.TupleTypeInfo{NativeType: native(gocql.TypeTuple), Elems: []gocql.TypeInfo{native(gocql.TypeVarchar), native(gocql.TypeBoolean)}}, "frozen<tuple<text, boolean>>"),
	}
	m := &gocql.TableMetadata{Keyspace: "ks", Name: "keys", Columns: map[string]*gocql.ColumnMetadata{}}
	for _, c := range key {
		m.Columns[c.Name] = c
		if c.Kind == pk {
			m.PartitionKey = append(m.PartitionKey, c)
		} else {
			m.ClusteringColumns = append(m.ClusteringColumns, c)
		}
	}
	m.Columns["v"] = col("v", gocql.ColumnRegular, native(gocql.TypeVarchar), "text")
	return m
}

// TestTableKeyRoundTrip: DecodeKey(EncodeKey(k)) gives k back, with values of the Go
// types gocql scans each column into.
func TestTableKeyRoundTrip(t *testing.T) {
	tbl := mustTable(t, keyMeta())
	u := gocql.MustRandomUUID()
	at := time.UnixMilli(1_763_700_000_123).UTC()
	for _, key := range [][]any{
		{"org", int64(7), 1, at, u, []byte{0, 1, 2}, []int{3, 4}, []any{"x", true}},
		// An empty blob decodes as []byte{} (a value; nil would bind NULL); an empty
		// frozen list as []int{}.
		{"", int64(-1), 0, time.UnixMilli(0).UTC(), gocql.UUID{}, []byte{}, []int{}, []any{"", false}},
		{"ünï\x00", int64(1<<63 - 1), -1 << 31, at, u, []byte("\x00\x00\x00\x04"), []int{-1}, []any{"y", true}},
	} {
		b, err := tbl.EncodeKey(key)
		if err != nil {
			t.Fatalf("EncodeKey(%v): %v", key, err)
		}
		got, err := tbl.DecodeKey(b)
		if err != nil {
			t.Fatalf("DecodeKey: %v", err)
		}
		if !reflect.DeepEqual(got, key) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, key)
		}
		again, err := tbl.EncodeKey(got)
		if err != nil || !bytes.Equal(again, b) {
			t.Errorf("re-encoding differs: %x vs %x (%v)", again, b, err)
		}
	}
}

func TestTableEncodeKey(t *testing.T) {
	tbl := mustTable(t, meta())
	b, err := tbl.EncodeKey([]any{1, int32(2)})
	want := []byte{0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2}
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("EncodeKey = %x, %v; want %x", b, err, want)
	}
	// The partition key's encoding is a prefix of the key's: its first column.
	p, err := tbl.EncodePartitionKey([]any{1})
	if err != nil || !bytes.Equal(p, want[:8]) {
		t.Fatalf("EncodePartitionKey = %x, %v", p, err)
	}
	for _, tc := range []struct {
		key  []any
		want error
	}{
		{[]any{1}, ErrMissingKey},
		{[]any{1, 2, 3}, ErrMissingKey},
		{[]any{1, nil}, ErrMissingKey},
		{[]any{1, gocql.UnsetValue}, ErrMissingKey},
		{[]any{(*int)(nil), 1}, ErrMissingKey},
		{[]any{1, any(nil)}, ErrMissingKey},
		{[]any{"x", 1}, ErrBadValue},
	} {
		_, err := tbl.EncodeKey(tc.key)
		var e *Error
		if !errors.Is(err, tc.want) || !errors.As(err, &e) {
			t.Errorf("EncodeKey(%v) = %v, want %v", tc.key, err, tc.want)
		}
	}
}

func TestTableDecodeKeyCorrupt(t *testing.T) {
	tbl := mustTable(t, meta())
	good, _ := tbl.EncodeKey([]any{1, 2})
	for name, b := range map[string][]byte{
		"empty":           nil,
		"short length":    {0, 0, 0},
		"length too long": {0, 0, 0, 9, 0, 0, 0, 1},
		"huge length":     {0xff, 0xff, 0xff, 0xff, 0},
		"second missing":  good[:8],
		"second cut":      good[:len(good)-1],
		"trailing bytes":  append(append([]byte(nil), good...), 0),
	} {
		vals, err := tbl.DecodeKey(b)
		var e *Error
		if !errors.Is(err, ErrBadValue) || !errors.As(err, &e) || vals != nil {
			t.Errorf("%s: DecodeKey(%x) = %v, %v; want ErrBadValue", name, b, vals, err)
		}
	}
	// Values that do not decode as their column's type, and a collection count no
	// bytes could hold (gocql would allocate by it).
	keys := mustTable(t, keyMeta())
	enc := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
			out = append(out, p...)
		}
		return out
	}
	head := [][]byte{[]byte("org"), make([]byte, 8), make([]byte, 4), make([]byte, 8)}
	uuid, tuple := make([]byte, 16), []byte{0, 0, 0, 1, 'x', 0, 0, 0, 1, 1}
	for name, b := range map[string][]byte{
		"uuid of 3 bytes":   enc(append(head, []byte{1, 2, 3}, nil, []byte{0, 0, 0, 0}, tuple)...),
		"list count 1<<30":  enc(append(head, uuid, nil, []byte{0x40, 0, 0, 0, 0, 0, 0, 4}, tuple)...),
		"list count -1":     enc(append(head, uuid, nil, []byte{0xff, 0xff, 0xff, 0xff}, tuple)...),
		"tuple element cut": enc(append(head, uuid, nil, []byte{0, 0, 0, 0}, []byte{0, 0, 0, 9, 'x'})...),
	} {
		if _, err := keys.DecodeKey(b); !errors.Is(err, ErrBadValue) {
			t.Errorf("%s: DecodeKey = %v; want ErrBadValue", name, err)
		}
	}
	if _, err := keys.DecodeKey(enc(append(head, uuid, nil, []byte{0, 0, 0, 0}, tuple)...)); err != nil {
		t.Fatalf("the well-formed control does not decode: %v", err)
	}
}

// FuzzTableDecodeKey: DecodeKey never panics, and what it decodes encodes again to a
// key that decodes to the same values (a fixed point after one round).
func FuzzTableDecodeKey(f *testing.F) {
	tbl := mustTable(f, keyMeta())
	u := gocql.UUID{1, 2, 3}
	seed, err := tbl.EncodeKey([]any{"org", int64(7), 1, time.UnixMilli(5).UTC(), u, []byte{9}, []int{3, 4}, []any{"x", true}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add(binary.BigEndian.AppendUint32(nil, 0xffffffff))
	f.Add(seed[:len(seed)-3])
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, err := tbl.DecodeKey(b)
		if err != nil {
			if !errors.Is(err, ErrBadValue) {
				t.Fatalf("DecodeKey error %v is not ErrBadValue", err)
			}
			return
		}
		enc, err := tbl.EncodeKey(vals)
		if err != nil {
			t.Fatalf("decoded %#v does not encode: %v", vals, err)
		}
		again, err := tbl.DecodeKey(enc)
		if err != nil {
			t.Fatalf("re-encoded key does not decode: %v", err)
		}
		enc2, err := tbl.EncodeKey(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("not a fixed point: %x then %x (%v)", enc, enc2, err)
		}
	})
}
