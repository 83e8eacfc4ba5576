// Package cqlvalue holds small helpers for values the Apache Cassandra Go driver v2
// scans and marshals (gocql v1.7's are in the root module's internal/cqlvalue).
package cqlvalue

import (
	"fmt"
	"reflect"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// Raw is a value in its serialised form (the native protocol's bytes for its column
// type), bound and scanned as is: an empty blob stays empty, nil is NULL.
type Raw []byte

// MarshalCQL returns the bytes unchanged.
func (r Raw) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

// UnmarshalCQL keeps a copy of the bytes; an empty value stays non-nil (not NULL).
func (r *Raw) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if data == nil {
		*r = nil
		return nil
	}
	*r = append(make(Raw, 0, len(data)), data...)
	return nil
}

// Marshal is gocql.Marshal that turns a panic inside the driver into an error.
func Marshal(ti gocql.TypeInfo, v any) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gocql cannot marshal %T: %v", v, r)
		}
	}()
	return gocql.Marshal(ti, v)
}

// Unmarshal decodes b (ti's serialised form) into the Go value the driver scans ti into
// (the type of ti.Zero()), an empty blob as []byte{} (a value), not nil (NULL); nil b
// is nil. A panic inside the driver is an error.
func Unmarshal(ti gocql.TypeInfo, b []byte) (v any, err error) {
	if b == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gocql cannot unmarshal %v: %v", ti, r)
		}
	}()
	if ti.Type() == gocql.TypeBlob {
		return append([]byte{}, b...), nil
	}
	z := ti.Zero()
	if z == nil {
		return nil, fmt.Errorf("no Go type for %v", ti)
	}
	p := reflect.New(reflect.TypeOf(z))
	if err := gocql.Unmarshal(ti, b, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface(), nil
}
