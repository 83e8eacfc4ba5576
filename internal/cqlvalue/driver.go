package cqlvalue

import (
	"reflect"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	core "github.com/cqlsafe/cqlsafe/internal/core/table"
)

// ProtoVersion is the protocol version type infos are stamped with for client-side
// marshalling checks. Schema metadata leaves it unset, and gocql's collection
// marshalling panics without it.
const ProtoVersion = 4

// Driver is gocql v1.7 for core.Table.
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

// TypeOf is gocql v1.7's TypeInfo of a type tree (frozen or not: gocql does not say).
// gocql's own schema metadata leaves user-defined types as custom() and vectors as
// custom, which can be neither marshalled nor scanned; built from the tree they can.
func (Driver) TypeOf(t cqltype.Type) gocql.TypeInfo { return gocqlType(t) }

func gocqlType(t cqltype.Type) gocql.TypeInfo {
	native := func(typ gocql.Type) gocql.NativeType { return NativeType(ProtoVersion, typ, "") }
	switch t.Kind {
	case cqltype.List:
		return gocql.CollectionType{NativeType: native(gocql.TypeList), Elem: gocqlType(t.Params[0])}
	case cqltype.Set:
		return gocql.CollectionType{NativeType: native(gocql.TypeSet), Elem: gocqlType(t.Params[0])}
	case cqltype.Map:
		return gocql.CollectionType{NativeType: native(gocql.TypeMap), Key: gocqlType(t.Params[0]), Elem: gocqlType(t.Params[1])}
	case cqltype.Tuple:
		out := gocql.TupleTypeInfo{NativeType: native(gocql.TypeTuple)}
		for _, e := range t.Params {
			out.Elems = append(out.Elems, gocqlType(e))
		}
		return out
	case cqltype.Vector:
		return NewVectorType(ProtoVersion, gocqlType(t.Params[0]), t.Dim)
	case cqltype.UDT:
		out := gocql.UDTTypeInfo{NativeType: native(gocql.TypeUDT), KeySpace: t.Keyspace, Name: t.Name}
		for i, f := range t.Fields {
			out.Elements = append(out.Elements, gocql.UDTField{Name: f, Type: gocqlType(t.Params[i])})
		}
		return out
	}
	return native(nativeTypes[t.Name])
}

func (Driver) Unset() any { return gocql.UnsetValue }

// Marshal is gocql.Marshal that also encodes vectors and turns a panic inside gocql
// into an error.
func (Driver) Marshal(ti gocql.TypeInfo, v any) ([]byte, error) { return Marshal(ti, v) }

// Unmarshal decodes into the Go type gocql scans ti into (an empty blob as []byte{}, a
// vector as a slice: see Unmarshal), turning a panic inside gocql into an
// error.
func (Driver) Unmarshal(ti gocql.TypeInfo, b []byte) (any, error) { return Unmarshal(ti, b) }

func (d Driver) Fits(ti gocql.TypeInfo, native string, v any) error {
	if core.FastFits(native, v) {
		return nil
	}
	if _, ok := v.(gocql.UUID); ok && native == "uuid" {
		return nil
	}
	_, err := d.Marshal(ti, v)
	return err
}

// Bind: gocql v1.7.0 marshals a vector only through a Marshaler: bind its bytes.
func (d Driver) Bind(ti gocql.TypeInfo, v any) (any, error) {
	vt, ok := ti.(VectorType)
	if !ok {
		return v, nil
	}
	b, err := Marshal(vt, v)
	if err != nil {
		return nil, err
	}
	return Raw(b), nil
}

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

// WithProto returns ti with the protocol version set throughout.
func WithProto(ti gocql.TypeInfo) gocql.TypeInfo {
	switch t := ti.(type) {
	case gocql.NativeType:
		return NativeType(ProtoVersion, t.Type(), t.Custom())
	case gocql.CollectionType:
		out := gocql.CollectionType{NativeType: NativeType(ProtoVersion, t.Type(), t.Custom())}
		if t.Key != nil {
			out.Key = WithProto(t.Key)
		}
		if t.Elem != nil {
			out.Elem = WithProto(t.Elem)
		}
		return out
	case gocql.TupleTypeInfo:
		out := gocql.TupleTypeInfo{NativeType: NativeType(ProtoVersion, t.Type(), t.Custom())}
		for _, e := range t.Elems {
			out.Elems = append(out.Elems, WithProto(e))
		}
		return out
	case gocql.UDTTypeInfo:
		out := gocql.UDTTypeInfo{NativeType: NativeType(ProtoVersion, t.Type(), t.Custom()), KeySpace: t.KeySpace, Name: t.Name}
		for _, e := range t.Elements {
			out.Elements = append(out.Elements, gocql.UDTField{Name: e.Name, Type: WithProto(e.Type)})
		}
		return out
	}
	return ti
}

// TreeOf is the shape of gocql's own TypeInfo (for a type text that does not parse):
// collections, tuples and natives; Native{Name: ""} for what gocql calls custom (a UDT
// it was not told of, a vector).
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
	case nil:
		return cqltype.Type{}
	}
	for name, typ := range nativeTypes {
		if ti.Type() == typ {
			return cqltype.Type{Name: name}
		}
	}
	return cqltype.Type{}
}
