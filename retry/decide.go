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
func (p *Policy) decide(ctx context.Context, err error, idempotent, pinned bool, attempts int) (bool, string) {
	class := ClassifyError(err)
	switch {
	case err == nil:
		return false, "no error"
	case ctx != nil && ctx.Err() != nil:
		return false, "context done"
	case !class.Retryable():
		return false, "error class " + class.String() + " is not retryable"
	case attempts >= p.cfg.maxAttempts:
		return false, "attempts exhausted"
	case nothingApplied(err):
		return true, ""
	case batchLogged(err):
		return false, "logged batch is in the batch log: it will be applied, re-sending could apply it twice"
	case !idempotent:
		return false, "not idempotent"
	case !pinned:
		return false, "write timestamp not pinned (run writes through Policy.Exec or Policy.ExecBatch)"
	}
	return true, ""
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
