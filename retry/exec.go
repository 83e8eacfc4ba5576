package retry

import (
	"errors"
	"fmt"
	"math"
)

// ExecOption adjusts one execution of Policy.Exec or Policy.ExecBatch.
type ExecOption func(*execConfig) error

type execConfig struct {
	ts             int64  // pinned timestamp; 0: drawn from the Policy's clock
	operation      string // the execution's name for a Tracer
	notRepeatable  string // why this execution must not be repeated, whatever its text says
	onlyRepeatable bool   // refuse to send an execution that is not repeatable
}

// AtTimestamp pins ts (µs since the epoch) instead of drawing a timestamp from the
// Policy's clock: to re-apply a write with its original timestamp, or when the caller
// reserved timestamps itself. It is the one way to bring your own timestamp.
func AtTimestamp(ts int64) ExecOption {
	return func(c *execConfig) error {
		if ts == 0 || ts == math.MinInt64 {
			return fmt.Errorf("retry: timestamp %d is not a write timestamp", ts)
		}
		c.ts = ts
		return nil
	}
}

// NotRepeatable makes this execution not repeatable whatever Classify says (reason
// says why): it is then retried only after errors that prove nothing was applied, and a
// may-have-applied failure is an *OutcomeUnknownError that no outbox keeps. For callers
// that know more than the statement text shows.
func NotRepeatable(reason string) ExecOption {
	return func(c *execConfig) error {
		if reason == "" {
			return errors.New("retry: NotRepeatable needs a reason")
		}
		c.notRepeatable = reason
		return nil
	}
}

// OnlyIfRepeatable refuses to send an execution that is not repeatable: it returns an
// error matching ErrNotIdempotent, and nothing is sent. For code that re-sends writes
// (replays, re-submissions), where a repeat of a non-idempotent write is exactly what
// must not happen.
func OnlyIfRepeatable() ExecOption {
	return func(c *execConfig) error { c.onlyRepeatable = true; return nil }
}

func execOptions(opts []ExecOption) (execConfig, error) {
	var c execConfig
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// apply refines a verdict with the execution's options.
func (c execConfig) apply(v Verdict) (Verdict, error) {
	if c.notRepeatable != "" {
		v = v.WithReason(c.notRepeatable)
	}
	if c.onlyRepeatable && !v.Idempotent {
		return v, fmt.Errorf("%w: %v (nothing sent)", ErrNotIdempotent, v.Reasons)
	}
	return v, nil
}
