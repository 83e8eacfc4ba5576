package retry

import (
	"context"
	"errors"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// ErrorClass groups errors by what a retry can do about them.
type ErrorClass = decision.ErrorClass

// Error classes, from "retrying is safe and useful" to "never retry".
const (
	ClassNone          = decision.ClassNone          // no error
	ClassUnavailable   = decision.ClassUnavailable   // not enough replicas alive: nothing was written
	ClassOverloaded    = decision.ClassOverloaded    // coordinator overloaded: nothing was written
	ClassBootstrapping = decision.ClassBootstrapping // coordinator still joining: nothing was written
	ClassReadTimeout   = decision.ClassReadTimeout   // replicas did not answer a read in time
	ClassWriteTimeout  = decision.ClassWriteTimeout  // replicas did not acknowledge in time: may have applied
	ClassWriteFailure  = decision.ClassWriteFailure  // replicas failed the write: may have partly applied
	ClassClientTimeout = decision.ClassClientTimeout // no response within the client timeout: may have applied
	ClassConnection    = decision.ClassConnection    // connection lost mid-request: may have applied
	ClassNoHost        = decision.ClassNoHost        // no connection available: nothing was sent
	ClassReadFailure   = decision.ClassReadFailure   // replicas failed the read (e.g. too many tombstones)
	ClassFatal         = decision.ClassFatal         // syntax, invalid, unauthorized, config, …: retrying cannot help
	ClassCanceled      = decision.ClassCanceled      // the context was cancelled or its deadline passed
)

// ClassifyError maps an error from gocql (or from a function given to Do) to its class,
// by type and protocol error code — and the ScyllaDB fork's per-host errors, which
// gocql v1.7 cannot name, by their fixed text. Unknown errors are ClassFatal. A fork
// error that says an earlier attempt was potentially executed is ClassConnection: the
// execution may have applied, whatever its last host said.
func ClassifyError(err error) ErrorClass {
	c := facts(err).Class
	if c == ClassNoHost && cqlvalue.PotentiallyExecuted(err) {
		return ClassConnection
	}
	return c
}

// facts is what err says about a write (decision.Classify with gocql's errors). An
// *OutcomeUnknownError is judged by the error it wraps (after the context: Unwrap
// shows a context error inside it to Classify's first check as well).
func facts(err error) decision.Facts {
	var ou *OutcomeUnknownError
	if errors.As(err, &ou) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return facts(ou.Err)
	}
	return decision.Classify(err, gocqlDriver)
}

// gocqlDriver is what decision.Classify needs of gocql v1.7 (and of the ScyllaDB fork in
// its place: NotSent).
var gocqlDriver = decision.Driver{Server: gocqlServerFacts, NoResponse: gocql.ErrTimeoutNoResponse,
	ConnectionClosed: gocql.ErrConnectionClosed, NoConnections: gocql.ErrNoConnections,
	NotSent: cqlvalue.NoConnection, ConnectionFailed: connectionFailed}

// connectionFailed: the errors gocql v1.7 hands every request in flight on a connection it
// closes (Conn.closeWithError): too many timeouts on it, a failed heartbeat, a response
// frame it cannot read (a protocol error, an unknown protocol version). The request may
// have been written and applied. The heartbeat and version errors have no type or
// sentinel in the driver: they are matched by their fixed text.
func connectionFailed(err error) bool {
	var pe gocql.ErrProtocol
	if errors.Is(err, gocql.ErrTooManyTimeouts) || errors.As(err, &pe) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "gocql: heartbeat failed") || strings.Contains(msg, "gocql: unsupported protocol response version")
}

// gocqlServerFacts maps gocql v1.7's server errors: its typed errors first (they carry
// the code, but a zero value would say 0), then any RequestError by code.
func gocqlServerFacts(err error) (decision.Facts, bool) {
	var f decision.Facts
	code, _, hasCode := cqlvalue.RequestError(err) // the fork's untyped errors too
	var (
		unavailable  *gocql.RequestErrUnavailable
		readTimeout  *gocql.RequestErrReadTimeout
		writeTimeout *gocql.RequestErrWriteTimeout
		writeFailure *gocql.RequestErrWriteFailure
		readFailure  *gocql.RequestErrReadFailure
	)
	hasWT, hasWF := errors.As(err, &writeTimeout), errors.As(err, &writeFailure)
	// CDC and BATCH are read from every error err holds, whichever decides the class.
	f.CDC = hasWT && writeTimeout.WriteType == "CDC" || hasWF && writeFailure.WriteType == "CDC" ||
		hasCode && code == decision.CodeCDCWriteFailure
	f.BatchLogged = hasWT && writeTimeout.WriteType == "BATCH"
	switch {
	case errors.As(err, &unavailable):
		f.Class = ClassUnavailable
		f.Serial = decision.SerialConsistency(uint16(unavailable.Consistency))
	case errors.As(err, &readTimeout):
		f.Class = ClassReadTimeout
	case hasWT:
		f.Class = ClassWriteTimeout
	case hasWF:
		f.Class = ClassWriteFailure
	case errors.As(err, &readFailure):
		f.Class = ClassReadFailure
	case hasCode:
		f.Class = decision.CodeClass(code)
	default:
		return decision.Facts{}, false
	}
	return f, true
}

// ConditionalMayHaveApplied reports whether a conditional write (LWT) that failed with
// err may have applied, or may yet be applied by the next Paxos round on its partition:
// then settle.LWT says which, and the write is never re-sent blindly. Only Unavailable
// at SERIAL or LOCAL_SERIAL, Bootstrapping and no connection prove it did not (see
// docs/lwt.md).
func ConditionalMayHaveApplied(err error) bool {
	if err == nil {
		return false
	}
	return decision.ConditionalMayHaveApplied(facts(err))
}
