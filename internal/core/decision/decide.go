package decision

import "github.com/cqlsafe/cqlsafe/internal/core/verdict"

// Decide is the one place that decides whether a failed attempt is sent again; every
// executor of every driver asks it. attempts counts the attempts made so far, the failed
// one included; ctxDone says the caller's context has ended.
//
//	nothing was applied (Unavailable, Overloaded,
//	  Bootstrapping, no connection; for an LWT only
//	  Unavailable at SERIAL/LOCAL_SERIAL, Bootstrapping,
//	  no connection)                                         retry, idempotent or not
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
//
// Decide is for a failed attempt: a nil error's facts (ClassNone) are not retryable.
func Decide(ctxDone bool, f Facts, v verdict.Verdict, pinned bool, attempts, maxAttempts int) (bool, Reason) {
	switch {
	case ctxDone:
		return false, ReasonContextDone
	case !f.Class.Retryable() || f.CDC:
		return false, ReasonNotRetryable
	case attempts >= maxAttempts:
		return false, ReasonAttemptsExhausted
	case ProvesNothingApplied(f, v):
		return true, ""
	case f.BatchLogged:
		return false, ReasonBatchLogged
	case !v.Idempotent:
		return false, ReasonNotIdempotent
	case !pinned:
		return false, ReasonNotPinned
	}
	return true, ""
}

// NothingApplied reports errors after which Cassandra guarantees the write was not
// applied: the coordinator refused it before any replica saw it.
func (f Facts) NothingApplied() bool {
	switch f.Class {
	case ClassUnavailable, ClassOverloaded, ClassBootstrapping, ClassNoHost:
		return true
	}
	return false
}

// ProvesNothingApplied: the error proves this write applied nothing. Unavailable,
// Overloaded and Bootstrapping are raised by the coordinator before it sends a mutation
// — but per mutation (StorageProxy.mutate sends them one by one), so for a write of
// several mutations (a multi-statement batch, an IN list) they prove nothing about the
// earlier ones; a logged batch checks every mutation for Unavailable before writing the
// batch log, while Overloaded can come after the batch log stored it.
//
// No connection proves it for every write: the driver sent nothing.
//
// A conditional write (LWT) is a Paxos round, and only what stops it before it begins
// is proof: Unavailable at SERIAL or LOCAL_SERIAL (the prepare phase's replica plan),
// Bootstrapping, no connection. With legacy Paxos (paxos_variant v1, the default of
// 4.1 and 5.0) StorageProxy.commitPaxos builds the commit's replica plan — Unavailable
// at the commit consistency — and checks hint overload — Overloaded — after
// proposePaxos succeeded, and the next round on the partition completes the accepted
// proposal; the condition read (QUORUM) can raise Unavailable at the same consistency
// before it, so that consistency tells nothing. docs/lwt.md has the table.
func ProvesNothingApplied(f Facts, v verdict.Verdict) bool {
	if !f.NothingApplied() {
		return false
	}
	if f.Class == ClassNoHost {
		return true // the driver sent nothing: no mutation, whatever the statement holds
	}
	if v.Conditional {
		return f.Class == ClassBootstrapping || f.Class == ClassNoHost || f.Class == ClassUnavailable && f.Serial
	}
	if !v.MultiMutation() {
		return true
	}
	return v.LoggedBatch() && f.Class == ClassUnavailable
}

// ConditionalMayHaveApplied: a conditional write (LWT) that failed with f may have
// applied, or may be applied by the next Paxos round on its partition: settle it with
// a SERIAL read, never re-send it blindly. The rule of ProvesNothingApplied for a
// conditional verdict, for callers that send LWTs without a Policy.
func ConditionalMayHaveApplied(f Facts) bool {
	return AttemptMayHaveApplied(f, verdict.Verdict{Writes: true, Conditional: true})
}

// AttemptMayHaveApplied: a failed attempt of a write with this verdict may have applied
// it — the error says so, the context ended it mid-flight (the driver does not say
// whether the request was written), or a "nothing applied" error speaks only for the
// last of several mutations.
func AttemptMayHaveApplied(f Facts, v verdict.Verdict) bool {
	return f.Class.MayHaveApplied() || f.Class == ClassCanceled ||
		f.NothingApplied() && !ProvesNothingApplied(f, v)
}

// NextHost says whether the next attempt goes to another coordinator: always for
// Overloaded, Bootstrapping and no connection (another coordinator is what helps), and
// for a lost response or connection when onTimeout.
func NextHost(f Facts, onTimeout bool) bool {
	switch f.Class {
	case ClassOverloaded, ClassBootstrapping, ClassNoHost:
		return true
	case ClassClientTimeout, ClassConnection:
		return onTimeout
	}
	return false
}

// Reason says why an attempt was not retried: a small fixed set, for metrics and
// branching; Why says it in a sentence.
type Reason string

// Reasons a failed attempt is not retried.
const (
	ReasonNoError           Reason = "no_error"
	ReasonContextDone       Reason = "context_done"
	ReasonNotRetryable      Reason = "not_retryable"      // the error class is never retried
	ReasonAttemptsExhausted Reason = "attempts_exhausted" // the attempt limit
	ReasonBatchLogged       Reason = "batch_logged"       // in the batch log: will be applied
	ReasonNotIdempotent     Reason = "not_idempotent"     // may have applied, and a repeat would differ
	ReasonNotPinned         Reason = "not_pinned"         // a write whose timestamp was not pinned
	ReasonNotAStep          Reason = "not_a_step"         // Do: the error did not come from an Exec step
)

// Why renders a reason as the sentence events and logs carry; class is the error's.
func Why(r Reason, class ErrorClass) string {
	switch r {
	case ReasonNotRetryable:
		return "error class " + class.String() + " is not retryable"
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
