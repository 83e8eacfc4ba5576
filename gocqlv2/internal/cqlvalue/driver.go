package cqlvalue

import (
	"reflect"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	core "github.com/cqlsafe/cqlsafe/internal/core/table"
)

// ProtoVersion is the protocol version type infos are made for.
const ProtoVersion = 4

// Driver is the Apache Cassandra Go driver v2 for core.Table.
type Driver struct{}

var _ core.Driver[gocql.TypeInfo] = Driver{}

var nativeTypes = map[string]gocql.Type{
	"ascii": gocql.TypeAscii, "bigint": gocql.TypeBigInt, "blob": gocql.TypeBlob, "boolean": gocql.TypeBoolean,
	"counter": gocql.TypeCounter, "date": gocql.TypeDate, "decimal": gocql.TypeDecimal, "double": gocql.TypeDouble,
	"duration": gocql.TypeDuration, "float": gocql.TypeFloat, "inet": gocql.TypeInet, "int": gocql.TypeInt,
	"smallint": gocql.TypeSmallInt, "text": gocql.TypeText, "varchar": gocql.TypeVarchar, "time": gocql.TypeTime,
	"timestamp": gocql.TypeTimestamp, "timeuuid": gocql.TypeTimeUUID, "tinyint": gocql.TypeTinyInt,
	"uuid": gocql.TypeUUID, "varint": gocql.TypeVarint,
}

// TypeOf is the v2 driver's TypeInfo of a type tree. The driver's own schema metadata
// cannot describe a user-defined type (it parses a type text without the keyspace's
// types); built from the tree it can. v2's CollectionType keeps its kind unexported:
// a collection is made from a type text of its kind and its key and element set.
func (Driver) TypeOf(t cqltype.Type) gocql.TypeInfo { return v2Type(t) }

func v2Type(t cqltype.Type) gocql.TypeInfo {
	switch t.Kind {
	case cqltype.List, cqltype.Set:
		kind := "list<int>"
		if t.Kind == cqltype.Set {
			kind = "set<int>"
		}
		ct := gocql.NewNativeType(ProtoVersion, gocql.TypeCustom, kind).(gocql.CollectionType)
		ct.Elem = v2Type(t.Params[0])
		return ct
	case cqltype.Map:
		ct := gocql.NewNativeType(ProtoVersion, gocql.TypeCustom, "map<int, int>").(gocql.CollectionType)
		ct.Key, ct.Elem = v2Type(t.Params[0]), v2Type(t.Params[1])
		return ct
	case cqltype.Tuple:
		out := gocql.TupleTypeInfo{}
		for _, e := range t.Params {
			out.Elems = append(out.Elems, v2Type(e))
		}
		return out
	case cqltype.Vector:
		return gocql.VectorType{SubType: v2Type(t.Params[0]), Dimensions: t.Dim}
	case cqltype.UDT:
		out := gocql.UDTTypeInfo{Keyspace: t.Keyspace, Name: t.Name}
		for i, f := range t.Fields {
			out.Elements = append(out.Elements, gocql.UDTField{Name: f, Type: v2Type(t.Params[i])})
		}
		return out
	}
	return gocql.NewNativeType(ProtoVersion, nativeTypes[t.Name], "")
}

func (Driver) Unset() any { return gocql.UnsetValue }

func (Driver) Marshal(ti gocql.TypeInfo, v any) ([]byte, error) { return Marshal(ti, v) }

func (Driver) Unmarshal(ti gocql.TypeInfo, b []byte) (any, error) { return Unmarshal(ti, b) }

func (Driver) Fits(ti gocql.TypeInfo, native string, v any) error {
	if core.FastFits(native, v) {
		return nil
	}
	if _, ok := v.(gocql.UUID); ok && native == "uuid" {
		return nil
	}
	_, err := Marshal(ti, v)
	return err
}

// Bind: the v2 driver marshals every type itself, vectors included.
func (Driver) Bind(_ gocql.TypeInfo, v any) (any, error) { return v, nil }

func (Driver) Marshaler(v any) bool {
	if _, ok := v.(gocql.Marshaler); !ok {
		return false
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() != reflect.Pointer || !rv.IsNil()
}

func (Driver) Raw(v any) ([]byte, bool) {
	r, ok := v.(Raw)
	return r, ok
}

func (Driver) RawOf(b []byte) any { return Raw(b) }

// TreeOf is the shape of the v2 driver's own TypeInfo (for a type text that does not
// parse): collections, tuples, vectors and natives; Native{Name: ""} for what the
// driver cannot describe (a user type it was not told of).
func (Driver) TreeOf(ti gocql.TypeInfo) cqltype.Type {
	switch t := ti.(type) {
	case gocql.CollectionType:
		switch t.Type() {
		case gocql.TypeList:
			return cqltype.Type{Kind: cqltype.List, Params: []cqltype.Type{Driver{}.TreeOf(t.Elem)}}
		case gocql.TypeSet:
			return cqltype.Type{Kind: cqltype.Set, Params: []cqltype.Type{Driver{}.TreeOf(t.Elem)}}
		case gocql.TypeMap:
			return cqltype.Type{Kind: cqltype.Map, Params: []cqltype.Type{Driver{}.TreeOf(t.Key), Driver{}.TreeOf(t.Elem)}}
		}
	case gocql.TupleTypeInfo:
		out := cqltype.Type{Kind: cqltype.Tuple}
		for _, e := range t.Elems {
			out.Params = append(out.Params, Driver{}.TreeOf(e))
		}
		return out
	case gocql.VectorType:
		return cqltype.Type{Kind: cqltype.Vector, Params: []cqltype.Type{Driver{}.TreeOf(t.SubType)}, Dim: t.Dimensions}
	case nil:
		return cqltype.Type{}
	}
	if ti.Type() == gocql.TypeCustom {
		return cqltype.Type{}
	}
	for name, typ := range nativeTypes {
		if ti.Type() == typ {
			return cqltype.Type{Name: name}
		}
	}
	return cqltype.Type{}
}
