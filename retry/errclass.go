package retry

import (
	"errors"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
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
// by type and protocol error code, never by message text. Unknown errors are ClassFatal.
func ClassifyError(err error) ErrorClass { return facts(err).Class }

// facts is what err says about a write (decision.Classify with gocql's errors).
func facts(err error) decision.Facts { return decision.Classify(err, gocqlFacts) }

// gocqlFacts maps gocql v1.7's errors: its typed server errors first (they carry the
// code, but a zero value would say 0), then any RequestError by code, then its sentinels.
func gocqlFacts(err error) (decision.Facts, bool) {
	var ou *OutcomeUnknownError
	if errors.As(err, &ou) {
		return facts(ou.Err), true
	}
	var re gocql.RequestError
	cdc := errors.As(err, &re) && re.Code() == decision.CodeCDCWriteFailure
	var (
		unavailable  *gocql.RequestErrUnavailable
		readTimeout  *gocql.RequestErrReadTimeout
		writeTimeout *gocql.RequestErrWriteTimeout
		writeFailure *gocql.RequestErrWriteFailure
		readFailure  *gocql.RequestErrReadFailure
	)
	switch {
	case errors.As(err, &unavailable):
		return decision.Facts{Class: ClassUnavailable}, true
	case errors.As(err, &readTimeout):
		return decision.Facts{Class: ClassReadTimeout}, true
	case errors.As(err, &writeTimeout):
		return decision.Facts{Class: ClassWriteTimeout, WriteType: writeTimeout.WriteType, CDC: cdc || writeTimeout.WriteType == "CDC"}, true
	case errors.As(err, &writeFailure):
		return decision.Facts{Class: ClassWriteFailure, WriteType: writeFailure.WriteType, CDC: cdc || writeFailure.WriteType == "CDC"}, true
	case errors.As(err, &readFailure):
		return decision.Facts{Class: ClassReadFailure}, true
	}
	if re != nil {
		return decision.Facts{Class: decision.CodeClass(re.Code()), CDC: cdc}, true
	}
	switch {
	case errors.Is(err, gocql.ErrTimeoutNoResponse):
		return decision.Facts{Class: ClassClientTimeout}, true
	case errors.Is(err, gocql.ErrConnectionClosed):
		return decision.Facts{Class: ClassConnection}, true
	case errors.Is(err, gocql.ErrNoConnections):
		return decision.Facts{Class: ClassNoHost}, true
	}
	return decision.Facts{}, false
}
