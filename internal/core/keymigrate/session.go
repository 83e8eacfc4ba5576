package keymigrate

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// Stmt is one statement of a batch, with its values.
type Stmt struct {
	CQL  string
	Args []any
}

// Session is what a Migration needs of a driver's session and retry policy. Reads hand
// back each column's serialised bytes (nil: NULL; a tuple rebuilt from its elements,
// value.JoinTuple, so a NULL tuple reads as one of NULL elements).
type Session interface {
	// Iter runs q, paged by pageSize, and calls row with each row's n columns until
	// it returns false; it returns the read's error.
	Iter(ctx context.Context, q string, args []any, pageSize, n int, row func([][]byte) bool) error
	// Row returns the first row of q (serial: read at SERIAL); found false: no row.
	Row(ctx context.Context, q string, args []any, n int, serial bool) (cells [][]byte, found bool, err error)
	// Exec runs a statement once, outside the retry policy (the lease table's CREATE).
	Exec(ctx context.Context, q string, args []any) error
	// HasTable reports whether the driver's schema metadata has keyspace.name.
	HasTable(keyspace, name string) bool
	// AwaitSchemaAgreement waits until the cluster agrees on the schema.
	AwaitSchemaAgreement(ctx context.Context) error
	// Write runs one statement through the retry policy, pinned at ts (0: the policy's
	// choice), not repeatable with reason notRepeatable when not "".
	Write(ctx context.Context, q string, args []any, ts int64, notRepeatable string) error
	// Batch runs stmts as one logged batch through the retry policy, pinned at ts.
	Batch(ctx context.Context, stmts []Stmt, ts int64, notRepeatable string) error
	// CAS runs a lightweight transaction once: applied as Cassandra answered.
	CAS(ctx context.Context, q string, args []any) (applied bool, err error)
	// SettleLWT settles a lightweight transaction whose outcome is unknown, after the
	// wait (the adapter's settle.LWT).
	SettleLWT(ctx context.Context, q string, args []any, after time.Duration) (settle.LWTOutcome, error)
	// Class is the retry policy's class of a driver error.
	Class(err error) decision.ErrorClass
	// RequestError is err's server error code and message (ok false: not one).
	RequestError(err error) (code int, msg string, ok bool)
	// Clock is the retry policy's clock.
	Clock() *clientid.Clock
}

// Server error codes RequestError reports.
const (
	codeServer  = 0x0000
	codeInvalid = 0x2200
)

func decodeInt(b []byte) (int, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("int of %d bytes", len(b))
	}
	return int(int32(binary.BigEndian.Uint32(b))), nil
}

func decodeBigint(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("bigint of %d bytes", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// decodeTimestamp decodes a CQL timestamp (ms since the epoch) in UTC.
func decodeTimestamp(b []byte) (time.Time, error) {
	ms, err := decodeBigint(b)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms).UTC(), nil
}

// optBigint decodes a nullable bigint (nil: NULL).
func optBigint(b []byte) (*int64, error) {
	if b == nil {
		return nil, nil
	}
	v, err := decodeBigint(b)
	return &v, err
}

// optInt decodes a nullable int (nil: NULL).
func optInt(b []byte) (*int, error) {
	if b == nil {
		return nil, nil
	}
	v, err := decodeInt(b)
	return &v, err
}

// intList decodes a list<int> whose elements may be NULL (nil).
func intList(b []byte) ([]*int, error) {
	if b == nil {
		return nil, nil
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("list of %d bytes", len(b))
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	rest := b[4:]
	out := make([]*int, 0, max(n, 0))
	for range max(n, 0) {
		if len(rest) < 4 {
			return nil, fmt.Errorf("list cut short")
		}
		l := int(int32(binary.BigEndian.Uint32(rest)))
		rest = rest[4:]
		if l < 0 {
			out = append(out, nil)
			continue
		}
		if l > len(rest) {
			return nil, fmt.Errorf("list cut short")
		}
		v, err := decodeInt(rest[:l])
		if err != nil {
			return nil, err
		}
		out = append(out, &v)
		rest = rest[l:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the list", len(rest))
	}
	return out, nil
}
