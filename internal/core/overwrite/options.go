package overwrite

import (
	"errors"
	"fmt"
	"time"
)

// Option is one overwrite option over a driver's consistency type C, serial
// consistency type S and retry policy P (each adapter names its instantiation Option).
// Options are plain values: passing them allocates nothing; the zero Option changes
// nothing.
type Option[C, S comparable, P any] struct {
	set Options[C, S, P] // the fields this option gives; the others are zero
	err error            // an invalid option: Row and Partition return it, nothing sent
}

// Options are the options in force.
type Options[C, S comparable, P any] struct {
	TS             int64
	TTL            int
	Consistency    C
	ConsistencySet bool // ANY is the zero consistency: "set" is tracked apart
	Serial         S
	Policy         *P
	MaxBytes       int
}

// Invalid is an option that makes Row and Partition return err, sending nothing.
func Invalid[C, S comparable, P any](err error) Option[C, S, P] { return Option[C, S, P]{err: err} }

// Timestamp pins N.
func Timestamp[C, S comparable, P any](n int64) Option[C, S, P] {
	if err := CheckTimestamp(n); err != nil {
		return Invalid[C, S, P](err)
	}
	return Option[C, S, P]{set: Options[C, S, P]{TS: n}}
}

// TTL gives the written cells a time to live.
func TTL[C, S comparable, P any](d time.Duration) Option[C, S, P] {
	ttl, err := CheckTTL(d)
	if err != nil {
		return Invalid[C, S, P](err)
	}
	return Option[C, S, P]{set: Options[C, S, P]{TTL: ttl}}
}

// Consistency sets the batch's consistency level; ok says the driver knows c.
func Consistency[C, S comparable, P any](c C, ok bool) Option[C, S, P] {
	if !ok {
		return Invalid[C, S, P](fmt.Errorf("overwrite: consistency %v out of range", c))
	}
	return Option[C, S, P]{set: Options[C, S, P]{Consistency: c, ConsistencySet: true}}
}

// Serial sets the batch's serial consistency; ok says c is SERIAL or LOCAL_SERIAL.
func Serial[C, S comparable, P any](c S, ok bool) Option[C, S, P] {
	if !ok {
		return Invalid[C, S, P](fmt.Errorf("overwrite: serial consistency %v: want SERIAL or LOCAL_SERIAL", c))
	}
	return Option[C, S, P]{set: Options[C, S, P]{Serial: c}}
}

// Policy retries through p; perr is p's own error (an invalid policy).
func Policy[C, S comparable, P any](p *P, perr func() error) Option[C, S, P] {
	if p == nil {
		return Invalid[C, S, P](errors.New("overwrite: nil retry policy"))
	}
	if err := perr(); err != nil {
		return Invalid[C, S, P](fmt.Errorf("overwrite: %w", err))
	}
	return Option[C, S, P]{set: Options[C, S, P]{Policy: p}}
}

// MaxBatchBytes bounds the values in one batch of Partition.
func MaxBatchBytes[C, S comparable, P any](n int) Option[C, S, P] {
	if err := CheckMaxBatchBytes(n); err != nil {
		return Invalid[C, S, P](err)
	}
	return Option[C, S, P]{set: Options[C, S, P]{MaxBytes: n}}
}

// Apply applies opts in order over the defaults — N from the policy's clock, no TTL,
// the session's consistency, batches split above DefaultMaxBatchBytes — a later option
// of a kind replacing an earlier one; the first invalid option is the error. Without
// WithRetryPolicy the policy is policy() (the table's default).
func Apply[C, S comparable, P any](opts []Option[C, S, P], policy func() *P) (Options[C, S, P], error) {
	o := Options[C, S, P]{MaxBytes: DefaultMaxBatchBytes}
	var zeroS S
	for _, opt := range opts {
		if opt.err != nil {
			return o, opt.err
		}
		x := opt.set
		if x.TS != 0 {
			o.TS = x.TS
		}
		if x.TTL != 0 {
			o.TTL = x.TTL
		}
		if x.ConsistencySet {
			o.Consistency, o.ConsistencySet = x.Consistency, true
		}
		if x.Serial != zeroS {
			o.Serial = x.Serial
		}
		if x.Policy != nil {
			o.Policy = x.Policy
		}
		if x.MaxBytes != 0 {
			o.MaxBytes = x.MaxBytes
		}
	}
	if o.Policy == nil && policy != nil {
		o.Policy = policy()
	}
	return o, nil
}

// TTLValue is what the INSERT binds to USING TTL ?: the TTL, else unset (the driver's
// UnsetValue) so the table's default_time_to_live applies (an explicit 0 would
// override it).
func (o *Options[C, S, P]) TTLValue(unset any) any {
	if o.TTL == 0 {
		return unset
	}
	return o.TTL
}
