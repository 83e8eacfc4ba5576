package retry

import (
	"errors"
	"fmt"
	"math"
)

// ExecOption adjusts one execution of Policy.Exec or Policy.ExecBatch (AtTimestamp,
// NotRepeatable, OnlyIfRepeatable, Operation). Options are plain values: passing them
// allocates nothing, which matters on a write path run millions of times. The zero
// ExecOption changes nothing.
type ExecOption struct {
	ts             int64  // AtTimestamp: 0 unset
	operation      string // Operation
	notRepeatable  string // NotRepeatable
	onlyRepeatable bool   // OnlyIfRepeatable
	err            error  // an invalid option: the execution returns it, nothing sent
}

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
	if ts == 0 || ts == math.MinInt64 {
		return ExecOption{err: fmt.Errorf("retry: timestamp %d is not a write timestamp", ts)}
	}
	return ExecOption{ts: ts}
}

// NotRepeatable makes this execution not repeatable whatever Classify says (reason
// says why): it is then retried only after errors that prove nothing was applied, and a
// may-have-applied failure is an *OutcomeUnknownError that no outbox keeps. For callers
// that know more than the statement text shows.
func NotRepeatable(reason string) ExecOption {
	if reason == "" {
		return ExecOption{err: errors.New("retry: NotRepeatable needs a reason")}
	}
	return ExecOption{notRepeatable: reason}
}

// OnlyIfRepeatable refuses to send an execution that is not repeatable: it returns an
// error matching ErrNotIdempotent, and nothing is sent. For code that re-sends writes
// (replays, re-submissions), where a repeat of a non-idempotent write is exactly what
// must not happen.
func OnlyIfRepeatable() ExecOption { return ExecOption{onlyRepeatable: true} }

// execOptions applies opts in order (a later AtTimestamp, Operation or NotRepeatable
// replaces an earlier one); the first invalid option is the error.
func execOptions(opts []ExecOption) (execConfig, error) {
	var c execConfig
	for _, o := range opts {
		if o.err != nil {
			return c, o.err
		}
		if o.ts != 0 {
			c.ts = o.ts
		}
		if o.operation != "" {
			c.operation = o.operation
		}
		if o.notRepeatable != "" {
			c.notRepeatable = o.notRepeatable
		}
		c.onlyRepeatable = c.onlyRepeatable || o.onlyRepeatable
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
