package cqlvalue

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"

	"github.com/gocql/gocql"
)

// VectorType is the type of a vector<elem, dim> column (Cassandra 5.0). gocql v1.7.0
// has none: it reports the column as custom and can neither marshal nor scan it. The
// serialised form of a vector of fixed-size elements is their encodings one after the
// other, without lengths. Values of float, double, int and bigint vectors are encoded
// and decoded here ([]float32, []float64, []int32/[]int, []int64); any vector can be
// bound and scanned as Raw.
type VectorType struct {
	gocql.NativeType // TypeCustom, with the Java class name as Custom()
	Elem             gocql.TypeInfo
	Dim              int
}

// NewVectorType returns the type of vector<elem, dim> stamped with protocol proto.
func NewVectorType(proto byte, elem gocql.TypeInfo, dim int) VectorType {
	class := "org.apache.cassandra.db.marshal.VectorType(" + javaClass(elem) + "," + fmt.Sprint(dim) + ")"
	return VectorType{NativeType: NativeType(proto, gocql.TypeCustom, class), Elem: elem, Dim: dim}
}

func javaClass(ti gocql.TypeInfo) string {
	switch ti.Type() {
	case gocql.TypeFloat:
		return "org.apache.cassandra.db.marshal.FloatType"
	case gocql.TypeDouble:
		return "org.apache.cassandra.db.marshal.DoubleType"
	case gocql.TypeInt:
		return "org.apache.cassandra.db.marshal.Int32Type"
	case gocql.TypeBigInt:
		return "org.apache.cassandra.db.marshal.LongType"
	}
	return fmt.Sprint(ti)
}

// NewWithError returns a *Raw: gocql scans a vector only through an Unmarshaler.
func (v VectorType) NewWithError() (any, error) { return new(Raw), nil }

// New is NewWithError without the error.
func (v VectorType) New() any { return new(Raw) }

func (v VectorType) String() string { return fmt.Sprintf("vector<%s, %d>", v.Elem, v.Dim) }

// elemSize is the encoded size of an element of a vector with a codec here, else 0.
func (v VectorType) elemSize() int {
	switch v.Elem.Type() {
	case gocql.TypeFloat, gocql.TypeInt:
		return 4
	case gocql.TypeDouble, gocql.TypeBigInt:
		return 8
	}
	return 0
}

func (v VectorType) encode(x any) ([]byte, error) {
	size := v.elemSize()
	rv := reflect.ValueOf(x)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, fmt.Errorf("can not marshal %T into %s: want a slice or array", x, v)
	}
	if size == 0 {
		return nil, fmt.Errorf("can not marshal %T into %s: no codec for %s elements (bind cqlvalue.Raw bytes)", x, v, v.Elem)
	}
	if rv.Len() != v.Dim {
		return nil, fmt.Errorf("can not marshal %d elements into %s", rv.Len(), v)
	}
	out := make([]byte, 0, size*v.Dim)
	for i := range rv.Len() {
		b, err := gocql.Marshal(v.Elem, rv.Index(i).Interface())
		if err != nil {
			return nil, err
		}
		if len(b) != size {
			return nil, fmt.Errorf("can not marshal element %d (%v) into %s", i, rv.Index(i).Interface(), v)
		}
		out = append(out, b...)
	}
	return out, nil
}

func (v VectorType) decode(b []byte) (any, error) {
	size := v.elemSize()
	if size == 0 {
		return Raw(append([]byte{}, b...)), nil
	}
	if len(b) != size*v.Dim {
		return nil, fmt.Errorf("%s: %d bytes, want %d", v, len(b), size*v.Dim)
	}
	switch v.Elem.Type() {
	case gocql.TypeFloat:
		out := make([]float32, v.Dim)
		for i := range out {
			out[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4*i:]))
		}
		return out, nil
	case gocql.TypeDouble:
		out := make([]float64, v.Dim)
		for i := range out {
			out[i] = math.Float64frombits(binary.BigEndian.Uint64(b[8*i:]))
		}
		return out, nil
	case gocql.TypeInt:
		out := make([]int, v.Dim)
		for i := range out {
			out[i] = int(int32(binary.BigEndian.Uint32(b[4*i:])))
		}
		return out, nil
	default: // bigint
		out := make([]int64, v.Dim)
		for i := range out {
			out[i] = int64(binary.BigEndian.Uint64(b[8*i:]))
		}
		return out, nil
	}
}
