package outbox

import (
	"errors"
	"math/big"

	"gopkg.in/inf.v0"
	"io"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	core "github.com/cqlsafe/cqlsafe/internal/core/outbox"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
)

// gocqlDriver is what the outbox's core needs of gocql v1.7: its batch types and values.
var gocqlDriver = &core.Driver[gocql.BatchType]{
	Values: core.Values{
		Unset: gocql.UnsetValue,
		Own: func(v any) (core.Value, bool, error) {
			switch x := v.(type) {
			case gocql.UUID:
				return core.Value{T: "uuid", V: x.String()}, true, nil
			case gocql.Duration:
				return core.CQLDuration(x.Months, x.Days, x.Nanoseconds), true, nil
			case *inf.Dec:
				if x == nil {
					v, err := core.Decimal(nil, 0, true)
					return v, true, err
				}
				v, err := core.Decimal(x.UnscaledBig(), int32(x.Scale()), false)
				return v, true, err
			case gocql.Marshaler:
				return core.Value{}, true, core.MarshalerError(v)
			}
			return core.Value{}, false, nil
		},
		UUID:     func(s string) (any, error) { return gocql.ParseUUID(s) },
		Duration: func(mo, d int32, ns int64) any { return gocql.Duration{Months: mo, Days: d, Nanoseconds: ns} },
		Decimal:  func(unscaled *big.Int, scale int32) any { return inf.NewDecBig(unscaled, inf.Scale(scale)) },
	},
	BatchTypes: map[gocql.BatchType]string{gocql.LoggedBatch: "logged", gocql.UnloggedBatch: "unlogged", gocql.CounterBatch: "counter"},
	Logged:     gocql.LoggedBatch, Unlogged: gocql.UnloggedBatch, Counter: gocql.CounterBatch,
	Rejected: func(err error) bool {
		code, _, ok := cqlvalue.RequestError(err) // the fork's untyped errors too
		var me gocql.MarshalError                 // a value the column's type (changed since) cannot take
		return ok && decision.Rejected(code) || errors.As(err, &me)
	},
}

// The core's names, as this package's tests use them.
type (
	outboxValue  = core.Value
	outboxRecord = core.Record
	outboxStmt   = core.Stmt
	rawRecord    = core.RawRecord
)

const (
	maxDepth    = core.MaxDepth
	outboxLocks = core.OutboxLocks
)

var batchTypeName = gocqlDriver.BatchTypes

func frame(payload []byte) []byte            { return core.Frame(payload) }
func encodeValue(v any) (outboxValue, error) { return gocqlDriver.EncodeValue(v) }
func decodeValue(v outboxValue) (any, error) { return gocqlDriver.DecodeValue(v) }
func decodeRecord(payload []byte) (*retry.OutcomeUnknownError, gocql.BatchType, error) {
	return gocqlDriver.DecodeRecord(payload)
}
func replayable(e *retry.OutcomeUnknownError, typ gocql.BatchType) error {
	return gocqlDriver.Replayable(e, typ)
}
func scanRecords(r io.ReaderAt, from, size int64) ([]rawRecord, int64, bool, error) {
	return core.ScanRecords(r, from, size)
}
