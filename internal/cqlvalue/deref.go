// Package cqlvalue holds small helpers for values gocql v1.7 scans and marshals (the
// driver-neutral comparison is internal/core/value).
package cqlvalue

import (
	"fmt"
	"reflect"
	"time"

	"github.com/gocql/gocql"
)

// Deref returns the value a pointer from gocql.TypeInfo.New points to (common types
// without reflection), or p itself when it is not a non-nil pointer.
func Deref(p any) any {
	switch v := p.(type) {
	case *string:
		if v != nil {
			return *v
		}
	case *int:
		if v != nil {
			return *v
		}
	case *int64:
		if v != nil {
			return *v
		}
	case *bool:
		if v != nil {
			return *v
		}
	case *[]byte:
		if v != nil {
			return *v
		}
	case *time.Time:
		if v != nil {
			return *v
		}
	case *gocql.UUID:
		if v != nil {
			return *v
		}
	}
	rv := reflect.ValueOf(p)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return p
}

// New returns a pointer to a new zero value of the Go type gocql scans ti into
// (TypeInfo.NewWithError; gocql v1.7.0 deprecates TypeInfo.New).
func New(ti gocql.TypeInfo) (any, error) {
	p, err := ti.NewWithError()
	if err != nil {
		return nil, fmt.Errorf("no Go type for %v: %w", ti, err)
	}
	return p, nil
}
