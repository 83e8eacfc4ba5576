package retry

import (
	"context"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
)

// decide is the one place that decides whether a failed attempt is sent again; the
// per-execution policy behind Exec and ExecBatch, the cluster-level Policy and Do all
// ask it (the table itself is decision.Decide, the same for every driver). attempts
// counts the attempts made so far, the failed one included.
func (p *Policy) decide(ctx context.Context, err error, v Verdict, pinned bool, attempts int) (bool, Reason) {
	if err == nil {
		return false, ReasonNoError
	}
	return decision.Decide(ctx != nil && ctx.Err() != nil, facts(err), v, pinned, attempts, p.cfg.maxAttempts)
}

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

// why renders a reason as the sentence Event.Why and the logs carry.
func why(r Reason, err error) string { return decision.Why(r, ClassifyError(err)) }

// retryType says where to send the next attempt.
func (p *Policy) retryType(err error) gocql.RetryType {
	if decision.NextHost(facts(err), p.cfg.nextHost) {
		// Another coordinator is what helps. (On a single node there is none: gocql then
		// gives up with the error.)
		return gocql.RetryNextHost
	}
	return gocql.Retry
}
