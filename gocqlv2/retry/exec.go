package retry

import "github.com/cqlsafe/cqlsafe/internal/core/engine"

// ExecOption adjusts one execution of Policy.Exec or Policy.ExecBatch (AtTimestamp,
// NotRepeatable, OnlyIfRepeatable, Operation). Options are plain values: passing them
// allocates nothing, which matters on a write path run millions of times. The zero
// ExecOption changes nothing.
type ExecOption = engine.ExecOption

type execConfig = engine.ExecConfig

// AtTimestamp pins ts (µs since the epoch) instead of drawing a timestamp from the
// Policy's clock: to re-apply a write with its original timestamp, or when the caller
// reserved timestamps itself. It is the one way to bring your own timestamp.
func AtTimestamp(ts int64) ExecOption { return engine.AtTimestamp(ts) }

// NotRepeatable makes this execution not repeatable whatever Classify says (reason
// says why): it is then retried only after errors that prove nothing was applied, and a
// may-have-applied failure is an *OutcomeUnknownError that no outbox keeps. For callers
// that know more than the statement text shows.
func NotRepeatable(reason string) ExecOption { return engine.NotRepeatable(reason) }

// OnlyIfRepeatable refuses to send an execution that is not repeatable: it returns an
// error matching ErrNotIdempotent, and nothing is sent. For code that re-sends writes
// (replays, re-submissions), where a repeat of a non-idempotent write is exactly what
// must not happen.
func OnlyIfRepeatable() ExecOption { return engine.OnlyIfRepeatable() }

func execOptions(opts []ExecOption) (execConfig, error) { return engine.ExecOptions(opts) }
