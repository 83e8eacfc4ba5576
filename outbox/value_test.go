package outbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"gopkg.in/inf.v0"
)

// TestOutboxValueRoundTrip: every value the outbox stores comes back as one gocql
// marshals to the same bytes, for the column type the original was bound to — what
// Cassandra receives on replay is what the first attempt sent.
func TestOutboxValueRoundTrip(t *testing.T) {
	nt := func(typ gocql.Type) gocql.TypeInfo { return cqlvalue.NativeType(4, typ, "") }
	coll := func(typ gocql.Type, key, elem gocql.TypeInfo) gocql.TypeInfo {
		return gocql.CollectionType{NativeType: nt(typ).(gocql.NativeType), Key: key, Elem: elem}
	}
	text, integer, bigint := nt(gocql.TypeText), nt(gocql.TypeInt), nt(gocql.TypeBigInt)
	nick := "ada"
	var noNick *string
	cases := []struct {
		name string
		typ  gocql.TypeInfo
		v    any
	}{
		{"map<text,int>", coll(gocql.TypeMap, text, integer), map[string]int{"A-1": 2, "B": 1}},
		{"map<int,text>", coll(gocql.TypeMap, integer, text), map[int]string{3: "c", 1: "a", 2: "b"}},
		{"empty map", coll(gocql.TypeMap, text, integer), map[string]int{}},
		{"nil map", coll(gocql.TypeMap, text, integer), map[string]int(nil)},
		{"set<text>", coll(gocql.TypeSet, nil, text), []string{"vip", "beta"}},
		{"list<bigint>", coll(gocql.TypeList, nil, bigint), []int64{3, 1, 2}},
		{"array list", coll(gocql.TypeList, nil, integer), [3]int32{1, 2, 3}},
		{"nil list", coll(gocql.TypeList, nil, text), []string(nil)},
		{"empty list", coll(gocql.TypeList, nil, text), []string{}},
		{"list<frozen<list<int>>>", coll(gocql.TypeList, nil, coll(gocql.TypeList, nil, integer)), [][]int{{1}, {2, 3}, {}}},
		{"map<text,frozen<set<uuid>>>", coll(gocql.TypeMap, text, coll(gocql.TypeSet, nil, nt(gocql.TypeUUID))),
			map[string][]gocql.UUID{"a": {gocql.TimeUUID()}}},
		{"tuple", gocql.TupleTypeInfo{NativeType: nt(gocql.TypeTuple).(gocql.NativeType), Elems: []gocql.TypeInfo{text, integer}},
			[]any{"x", 7}},
		{"udt", gocql.UDTTypeInfo{NativeType: nt(gocql.TypeUDT).(gocql.NativeType), Name: "addr",
			Elements: []gocql.UDTField{{Name: "street", Type: text}, {Name: "n", Type: integer}}},
			map[string]any{"street": "Main", "n": 5}},
		{"varint", nt(gocql.TypeVarint), big.NewInt(-12345678901234567)},
		{"varint huge", nt(gocql.TypeVarint), new(big.Int).Lsh(big.NewInt(3), 200)},
		{"decimal", nt(gocql.TypeDecimal), inf.NewDec(-12345, 3)},
		{"decimal negative scale", nt(gocql.TypeDecimal), inf.NewDec(7, -2)},
		{"duration", nt(gocql.TypeDuration), gocql.Duration{Months: -1, Days: -2, Nanoseconds: -3}},
		{"inet v4", nt(gocql.TypeInet), net.IPv4(10, 0, 0, 1).To4()},
		{"inet v4 in 16 bytes", nt(gocql.TypeInet), net.IPv4(10, 0, 0, 1)},
		{"inet v6", nt(gocql.TypeInet), net.ParseIP("2001:db8::1")},
		{"pointer", text, &nick},
		{"nil pointer", text, noNick},
		{"json.RawMessage blob", nt(gocql.TypeBlob), json.RawMessage(`{"a":1}`)},
		{"nil blob", nt(gocql.TypeBlob), []byte(nil)},
		{"empty blob", nt(gocql.TypeBlob), []byte{}},
		{"[16]byte uuid", nt(gocql.TypeUUID), [16]byte(gocql.TimeUUID())},
		{"time in a list", coll(gocql.TypeList, nil, nt(gocql.TypeTimestamp)), []time.Time{time.UnixMilli(1_700_000_000_123)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := gocql.Marshal(c.typ, c.v)
			if err != nil {
				t.Fatalf("the original does not marshal: %v", err)
			}
			ev, err := encodeValue(c.v)
			if err != nil {
				t.Fatal(err)
			}
			// Through the stored form, as Open reads it back.
			raw, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			var back outboxValue
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			dv, err := decodeValue(back)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gocql.Marshal(c.typ, dv)
			if err != nil {
				t.Fatalf("the decoded %T does not marshal: %v", dv, err)
			}
			if c.typ.Type() == gocql.TypeMap {
				// gocql writes a map's entries in Go's iteration order: compare them as a set.
				got, want = sortedEntries(t, got), sortedEntries(t, want)
			}
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("stored %s, decoded %#v: bytes %x (nil %v), want %x (nil %v)", raw, dv, got, got == nil, want, want == nil)
			}
			// And stored alike every time (map order).
			ev2, _ := encodeValue(c.v)
			raw2, _ := json.Marshal(ev2)
			if !bytes.Equal(raw, raw2) {
				t.Fatalf("stored differently twice: %s vs %s", raw, raw2)
			}
		})
	}
}

// sortedEntries returns a marshalled map (protocol v3+: int32 count, then int32-length
// prefixed keys and values) with its entries in byte order.
func sortedEntries(t *testing.T, b []byte) []byte {
	t.Helper()
	if b == nil {
		return nil
	}
	next := func() []byte {
		if len(b) < 4 {
			t.Fatalf("short map encoding")
		}
		n := int(int32(binary.BigEndian.Uint32(b)))
		if n < 0 {
			n = 0
		}
		item := b[:4+n]
		b = b[4+n:]
		return item
	}
	head := b[:4]
	n := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	entries := make([][]byte, n)
	for i := range entries {
		entries[i] = append(append([]byte(nil), next()...), next()...)
	}
	slices.SortFunc(entries, bytes.Compare)
	return append(append([]byte(nil), head...), bytes.Join(entries, nil)...)
}

type selfMarshaled struct{}

func (selfMarshaled) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return []byte{1}, nil }

// TestOutboxValueRefused: what the outbox cannot store faithfully is ErrValue.
func TestOutboxValueRefused(t *testing.T) {
	type status string
	type level int16
	deep := any(1)
	for range maxDepth + 1 {
		deep = []any{deep}
	}
	for name, v := range map[string]any{
		"struct":             struct{ A int }{1},
		"named string":       status("paid"),
		"named int":          level(-7),
		"nil inside a list":  []any{nil},
		"nil map inside":     []map[string]int{nil},
		"own MarshalCQL":     selfMarshaled{},
		"list of MarshalCQL": []any{selfMarshaled{}},
		"map keyed by list":  map[[2]int]int{{1, 2}: 3},
		"channel":            make(chan int),
		"[4]byte":            [4]byte{1, 2, 3, 4},
		"short IP":           net.IP{1, 2, 3},
		"too deep":           deep,
	} {
		if _, err := encodeValue(v); !errors.Is(err, ErrValue) {
			t.Errorf("%s: %v, want ErrValue", name, err)
		}
	}
}
