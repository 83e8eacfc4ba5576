package retry

import (
	"errors"

	"fmt"
	"github.com/gocql/gocql"
	"strings"
)

// ErrOutcomeUnknown is matched (errors.Is) by every *OutcomeUnknownError.
var ErrOutcomeUnknown = errors.New("retry: outcome unknown")

// ErrNotIdempotent is matched by errors for writes that failed in a way a retry might
// fix, but were not retried because they are not idempotent.
var ErrNotIdempotent = errors.New("retry: not idempotent, not retried")

// ErrBatchLogged is matched by the error of a logged batch whose write timed out after
// it reached the batch log (write type BATCH): Cassandra will apply it, so it is not
// re-sent. Callers may treat it as success; reads may not see it for a while.
var ErrBatchLogged = errors.New("retry: logged batch is in the batch log and will be applied")

// ErrNondeterministic is returned by Exec inside Do when a re-run of the function issues
// a different statement at a step than the first run did.
var ErrNondeterministic = errors.New("retry: the function given to Do issued different statements on re-run")

// Statement is one CQL statement with its bound values.
type Statement struct {
	CQL    string
	Values []any
}

// OutcomeUnknownError says a write may or may not have been applied: it timed out or
// lost its connection, and retries were exhausted (or not allowed). It carries
// everything needed to re-apply the write later with the same effect: the statements,
// their values and the pinned write timestamp. Re-applying an idempotent write with the
// same timestamp is always safe; see Outbox.
type OutcomeUnknownError struct {
	Statements []Statement // one, or a batch's entries in order
	Batch      bool
	BatchType  gocql.BatchType // the batch's type (logged, unlogged, counter) when Batch
	Timestamp  int64           // the pinned write timestamp (µs since the epoch)
	Idempotent bool
	Reasons    []string // why it is not idempotent, when it is not
	Attempts   int
	Err        error // the last error
}

func (e *OutcomeUnknownError) Error() string {
	what := "write"
	if e.Batch {
		what = fmt.Sprintf("batch of %d", len(e.Statements))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "retry: %s may or may not have applied after %d attempt(s) (timestamp %d", what, e.Attempts, e.Timestamp)
	if !e.Idempotent {
		b.WriteString(", not idempotent: not retried")
	}
	fmt.Fprintf(&b, "): %v", e.Err)
	return b.String()
}

// Is makes errors.Is(err, ErrOutcomeUnknown) true, and ErrNotIdempotent when the write
// was not retried because it is not idempotent.
func (e *OutcomeUnknownError) Is(target error) bool {
	return target == ErrOutcomeUnknown || (target == ErrNotIdempotent && !e.Idempotent)
}

// Unwrap returns the last error.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }
