package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The sentinels every adapter's errors match (the adapters re-export them).
var (
	ErrOutcomeUnknown   = errors.New("retry: outcome unknown")
	ErrNotIdempotent    = errors.New("retry: not idempotent, not retried")
	ErrBatchLogged      = errors.New("retry: logged batch is in the batch log and will be applied")
	ErrNondeterministic = errors.New("retry: the function given to Do issued different statements on re-run")
	ErrClockSkew        = errors.New("retry: clock skew")
	ErrNotRecorded      = errors.New("retry: the outbox could not record the write")
	ErrUnboundValues    = errors.New("retry: a write's values come from a binder called on every send (Session.Bind, Batch.Bind): they cannot be judged, pinned or recorded; bind them with Session.Query(stmt, values...) or Batch.Query")
)

// Statement is one CQL statement with its bound values.
type Statement struct {
	CQL    string
	Values []any
}

// OutcomeUnknownError says a write may or may not have been applied, with what re-applies
// it: its statements, values and pinned timestamp. B is the driver's batch type (the
// adapters alias OutcomeUnknownError[their BatchType] as retry.OutcomeUnknownError).
type OutcomeUnknownError[B any] struct {
	Statements []Statement // one, or a batch's entries in order
	Batch      bool
	BatchType  B     // the batch's type (logged, unlogged, counter) when Batch
	Timestamp  int64 // the pinned write timestamp (µs since the epoch)
	Idempotent bool
	Reasons    []string // why it is not idempotent, when it is not
	// Conditional: a lightweight transaction (IF …). It is never re-sent blindly (a
	// re-send whose condition still holds applies it twice; one whose condition its own
	// first run broke answers [applied]=false): settle.LWT reads with SERIAL consistency,
	// which completes a round in flight, and says whether it applied.
	Conditional bool
	Attempts    int
	Err         error // the last error
	// Consistency is the write's consistency level by name ("LOCAL_QUORUM"); an outbox
	// replays it at that level ("": the session's default).
	Consistency string
	// Recorded: the Policy's outbox holds the write, to be replayed (Outbox.Replay).
	Recorded bool
	// RecordErr: the Policy has an outbox and the write is repeatable, but the append
	// failed (a full disk, a closed outbox): no outbox holds it, and the caller is the
	// only one who can still re-apply it. errors.Is(err, ErrNotRecorded) tells.
	RecordErr error
}

func (e *OutcomeUnknownError[B]) Error() string {
	what := "write"
	if e.Batch {
		what = fmt.Sprintf("batch of %d", len(e.Statements))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "retry: %s may or may not have applied after %d attempt(s) (timestamp %d", what, e.Attempts, e.Timestamp)
	if e.Conditional {
		b.WriteString(", conditional: not re-sent, settle.LWT says whether it applied")
	} else if !e.Idempotent {
		b.WriteString(", not idempotent: not retried")
	}
	fmt.Fprintf(&b, "): %v", e.Err)
	if e.RecordErr != nil {
		fmt.Fprintf(&b, " (not recorded: the outbox append failed: %v)", e.RecordErr)
	}
	return b.String()
}

// Is matches ErrOutcomeUnknown, ErrNotIdempotent when the write is not repeatable, and
// ErrNotRecorded when the outbox append failed.
func (e *OutcomeUnknownError[B]) Is(target error) bool {
	return target == ErrOutcomeUnknown || (target == ErrNotIdempotent && !e.Idempotent) ||
		(target == ErrNotRecorded && e.RecordErr != nil)
}

// Unwrap returns the last error, and the outbox's append error when it failed (a full
// disk: errors.Is(err, syscall.ENOSPC) tells).
func (e *OutcomeUnknownError[B]) Unwrap() []error {
	if e.RecordErr != nil {
		return []error{e.Err, e.RecordErr}
	}
	return []error{e.Err}
}

// ClockOffset is one measurement of this process's clock against a node's (the adapters
// document it as retry.ClockOffset).
type ClockOffset struct {
	Host        string        // the node that answered
	Offset      time.Duration // node's clock minus this process's: > 0 when this process is behind
	Uncertainty time.Duration // half the round trip plus the node's millisecond rounding
	At          time.Time     // when it was measured (this process's wall clock)
}

// Beyond reports an offset beyond bound even at the edge of its uncertainty.
func (o ClockOffset) Beyond(bound time.Duration) bool {
	return max(o.Offset, -o.Offset)-o.Uncertainty > bound
}

func (o ClockOffset) String() string {
	dir := "behind"
	if o.Offset < 0 {
		dir = "ahead of"
	}
	return fmt.Sprintf("%v %s node %s (±%v)", max(o.Offset, -o.Offset).Round(time.Microsecond), dir, o.Host, o.Uncertainty.Round(time.Microsecond))
}

// ClockSkewError refuses a write while the clock is beyond the bound.
type ClockSkewError struct {
	Offset ClockOffset
	Bound  time.Duration
}

func (e *ClockSkewError) Error() string {
	return fmt.Sprintf("retry: this process's clock is %s, beyond the bound of %v: writes are refused until MeasureClock finds it within (nothing sent)", e.Offset, e.Bound)
}

// Is matches ErrClockSkew.
func (e *ClockSkewError) Is(target error) bool { return target == ErrClockSkew }
