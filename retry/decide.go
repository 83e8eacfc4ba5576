package retry

import (
	"context"
	"errors"

	"github.com/gocql/gocql"
)

// decide is the one place that decides whether a failed attempt is sent again; the
// per-execution policy behind Exec and ExecBatch, the cluster-level Policy and Do all
// ask it. attempts counts the attempts made so far, the failed one included.
//
//	nothing was applied (Unavailable, Overloaded,
//	  Bootstrapping, no connection)                          retry, idempotent or not
//	in the batch log (write timeout of type BATCH)          never: it will be applied
//	may have applied (write timeout or failure of any
//	  other type, BATCH_LOG included; client timeout;
//	  connection lost after sending)                         retry only if idempotent and pinned
//
// A write timeout of type BATCH_LOG is not proof that nothing was applied: a batchlog
// replica may have stored the batch and answered too late, and Cassandra replays stored
// batches it finds no completion for (BatchlogManager, after about twice the write
// timeout). Such a batch is retried only when it is repeatable.
//
//	read timeout                                             retry (reads are idempotent)
//	counter write timeout, LWT, fatal, context done          never
func (p *Policy) decide(ctx context.Context, err error, v Verdict, pinned bool, attempts int) (bool, Reason) {
	switch {
	case err == nil:
		return false, ReasonNoError
	case ctx != nil && ctx.Err() != nil:
		return false, ReasonContextDone
	case !ClassifyError(err).Retryable() || isCDC(err):
		return false, ReasonNotRetryable
	case attempts >= p.cfg.maxAttempts:
		return false, ReasonAttemptsExhausted
	case provesNothingApplied(err, v):
		return true, ""
	case batchLogged(err):
		return false, ReasonBatchLogged
	case !v.Idempotent:
		return false, ReasonNotIdempotent
	case !pinned:
		return false, ReasonNotPinned
	}
	return true, ""
}

// provesNothingApplied: the error proves this write applied nothing. Unavailable,
// Overloaded and Bootstrapping are raised by the coordinator before it sends a mutation
// — but per mutation (StorageProxy.mutate sends them one by one), so for a write of
// several mutations (a multi-statement batch, an IN list) they prove nothing about the
// earlier ones; a logged batch checks every mutation for Unavailable before writing the
// batch log, while Overloaded can come after the batch log stored it.
func provesNothingApplied(err error, v Verdict) bool {
	if !nothingApplied(err) {
		return false
	}
	if !v.MultiMutation() {
		return true
	}
	return v.LoggedBatch() && ClassifyError(err) == ClassUnavailable
}

// isCDC: a write timeout or failure of type CDC, or CDC_WRITE_FAILURE: the commit log's
// CDC space is full; a retry within the backoff cannot help, so it is rethrown.
func isCDC(err error) bool {
	var wt *gocql.RequestErrWriteTimeout
	if errors.As(err, &wt) && wt.WriteType == "CDC" {
		return true
	}
	var wf *gocql.RequestErrWriteFailure
	if errors.As(err, &wf) && wf.WriteType == "CDC" {
		return true
	}
	var re gocql.RequestError
	return errors.As(err, &re) && re.Code() == gocql.ErrCodeCDCWriteFailure
}

// Reason says why an attempt was not retried (Event.Reason): a small fixed set, for
// metrics and branching; Event.Why says it in a sentence.
type Reason string

// Reasons a failed attempt is not retried.
const (
	ReasonNoError           Reason = "no_error"
	ReasonContextDone       Reason = "context_done"
	ReasonNotRetryable      Reason = "not_retryable"      // the error class is never retried
	ReasonAttemptsExhausted Reason = "attempts_exhausted" // WithMaxAttempts
	ReasonBatchLogged       Reason = "batch_logged"       // in the batch log: will be applied
	ReasonNotIdempotent     Reason = "not_idempotent"     // may have applied, and a repeat would differ
	ReasonNotPinned         Reason = "not_pinned"         // a write whose timestamp the Policy did not pin
	ReasonNotAStep          Reason = "not_a_step"         // Do: the error did not come from an Exec step
)

// why renders a reason as the sentence Event.Why and the logs carry.
func why(r Reason, err error) string {
	switch r {
	case ReasonNotRetryable:
		return "error class " + ClassifyError(err).String() + " is not retryable"
	case ReasonAttemptsExhausted:
		return "attempts exhausted"
	case ReasonBatchLogged:
		return "logged batch is in the batch log: it will be applied, re-sending could apply it twice"
	case ReasonNotIdempotent:
		return "not idempotent"
	case ReasonNotPinned:
		return "write timestamp not pinned (run writes through Policy.Exec or Policy.ExecBatch)"
	case ReasonContextDone:
		return "context done"
	case ReasonNotAStep:
		return "the error did not come from an Exec step"
	}
	return string(r)
}

// nothingApplied reports errors after which Cassandra guarantees the write was not
// applied: the coordinator refused it before any replica saw it.
func nothingApplied(err error) bool {
	switch ClassifyError(err) {
	case ClassUnavailable, ClassOverloaded, ClassBootstrapping, ClassNoHost:
		return true
	}
	return false
}

// batchLogged reports a write timeout of type BATCH: the batch reached the batch log and
// Cassandra will apply it; a re-send would apply a non-idempotent batch twice.
func batchLogged(err error) bool {
	var wt *gocql.RequestErrWriteTimeout
	return errors.As(err, &wt) && wt.WriteType == "BATCH"
}

// retryType says where to send the next attempt.
func (p *Policy) retryType(err error) gocql.RetryType {
	switch ClassifyError(err) {
	case ClassOverloaded, ClassBootstrapping, ClassNoHost:
		// Another coordinator is what helps. (On a single node there is none: gocql then
		// gives up with the error.)
		return gocql.RetryNextHost
	case ClassClientTimeout, ClassConnection:
		if p.cfg.nextHost {
			return gocql.RetryNextHost
		}
	}
	return gocql.Retry
}
