package retry

import (
	"context"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
)

// Reason says why an attempt was not retried (Event.Reason): a small fixed set, for
// metrics and branching; Event.Why says it in a sentence.
type Reason = decision.Reason

// Reasons a failed attempt is not retried.
const (
	ReasonNoError           = decision.ReasonNoError
	ReasonContextDone       = decision.ReasonContextDone
	ReasonNotRetryable      = decision.ReasonNotRetryable      // the error class is never retried
	ReasonAttemptsExhausted = decision.ReasonAttemptsExhausted // WithMaxAttempts
	ReasonBatchLogged       = decision.ReasonBatchLogged       // in the batch log: will be applied
	ReasonNotIdempotent     = decision.ReasonNotIdempotent     // may have applied, and a repeat would differ
	ReasonNotPinned         = decision.ReasonNotPinned         // a write whose timestamp the Policy did not pin
	ReasonNotAStep          = decision.ReasonNotAStep          // Do: the error did not come from an Exec step
)

// decide and delay are the engine's, as the tests call them.
func (p *Policy) decide(ctx context.Context, err error, v Verdict, pinned bool, attempts int) (bool, Reason) {
	return p.eng.Decide(ctx, err, v, pinned, attempts)
}
func (p *Policy) delay(failed int) time.Duration { return p.eng.Delay(failed) }

// retryType says where to send the next attempt.
func (p *Policy) retryType(err error) gocql.RetryType {
	if p.e().NextHost(err) {
		return gocql.RetryNextHost
	}
	return gocql.Retry
}
