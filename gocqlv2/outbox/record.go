package outbox

import (
	"errors"
	"math/big"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"gopkg.in/inf.v0"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	core "github.com/cqlsafe/cqlsafe/internal/core/outbox"
)

// gocqlDriver is what the outbox's core needs of the Apache driver v2: its batch types and values.
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
		var re gocql.RequestError
		var me gocql.MarshalError // a value the column's type (changed since) cannot take
		return errors.As(err, &re) && decision.Rejected(re.Code()) || errors.As(err, &me)
	},
}
