package table

import "github.com/cqlsafe/cqlsafe/internal/core/cqltype"

// Driver is what a Table needs of a Go driver, for its type description TI (gocql
// v1.7's TypeInfo structs, the v2 driver's TypeInfo interface). Everything else — the
// row mapping, the key encoding's framing, tuples, the statements, the version rules —
// is the Table's, the same for every driver.
type Driver[TI any] interface {
	// TypeOf is the driver's description of a parsed column type.
	TypeOf(t cqltype.Type) TI
	// TreeOf is the type tree of the driver's own description, for a type text that
	// does not parse (a user type not given): what the driver knows of its shape —
	// list, set, map, tuple — with Native{Name: ""} where it knows nothing.
	TreeOf(ti TI) cqltype.Type
	// Unset is the value that binds as UNSET.
	Unset() any
	// Marshal encodes v as ti in the native protocol; v that does not fit is an error,
	// never a panic.
	Marshal(ti TI, v any) ([]byte, error)
	// Unmarshal decodes b (not nil) into the Go type the driver scans ti into.
	Unmarshal(ti TI, b []byte) (any, error)
	// Fits reports whether v can be bound to ti (Marshal is the slow answer; the native
	// name, cqltype.Type.Name of a native column, allows fast ones).
	Fits(ti TI, native string, v any) error
	// Bind is what to bind for a value that fits ti: v, or its bytes where the driver
	// cannot marshal it itself (gocql v1.7 and vectors).
	Bind(ti TI, v any) (any, error)
	// Marshaler reports whether v is a non-nil driver Marshaler: it says itself what it
	// binds.
	Marshaler(v any) bool
	// Raw reports whether v is a value in serialised form and returns its bytes; RawOf
	// wraps bytes so (nil: NULL).
	Raw(v any) ([]byte, bool)
	RawOf(b []byte) any
}

// FastFits reports the common pairs that fit without marshalling: string to text, an
// int to int or bigint, …; false says nothing (marshal to know).
func FastFits(native string, v any) bool {
	switch x := v.(type) {
	case string:
		return native == "text" || native == "varchar" || native == "ascii" && isASCII(x)
	case int32, int16, int8:
		return native == "int" || native == "bigint"
	case int:
		return native == "bigint" || native == "int" && int(int32(x)) == x
	case int64:
		return native == "bigint"
	case bool:
		return native == "boolean"
	case []byte:
		return native == "blob"
	case float64:
		return native == "double"
	case float32:
		return native == "float"
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
