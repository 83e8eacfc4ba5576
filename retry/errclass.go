package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/gocql/gocql"
)

// ErrorClass groups errors by what a retry can do about them.
type ErrorClass int

// Error classes, from "retrying is safe and useful" to "never retry".
const (
	ClassNone          ErrorClass = iota // no error
	ClassUnavailable                     // not enough replicas alive: nothing was written
	ClassOverloaded                      // coordinator overloaded: nothing was written
	ClassBootstrapping                   // coordinator still joining: nothing was written
	ClassReadTimeout                     // replicas did not answer a read in time
	ClassWriteTimeout                    // replicas did not acknowledge in time: may have applied
	ClassWriteFailure                    // replicas failed the write: may have partly applied
	ClassClientTimeout                   // no response within the client timeout: may have applied
	ClassConnection                      // connection lost mid-request: may have applied
	ClassNoHost                          // no connection available: nothing was sent
	ClassReadFailure                     // replicas failed the read (e.g. too many tombstones)
	ClassFatal                           // syntax, invalid, unauthorized, config, …: retrying cannot help
	ClassCanceled                        // the context was cancelled or its deadline passed
)

var classNames = [...]string{"none", "unavailable", "overloaded", "bootstrapping", "read_timeout",
	"write_timeout", "write_failure", "client_timeout", "connection", "no_host", "read_failure",
	"fatal", "canceled"}

func (c ErrorClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// Retryable reports whether an idempotent statement that failed with this class may be
// re-executed.
func (c ErrorClass) Retryable() bool {
	switch c {
	case ClassUnavailable, ClassOverloaded, ClassBootstrapping, ClassReadTimeout,
		ClassWriteTimeout, ClassWriteFailure, ClassClientTimeout, ClassConnection, ClassNoHost:
		return true
	}
	return false
}

// MayHaveApplied reports whether a write that failed with this class may nevertheless
// have been applied (the outcome is unknown).
func (c ErrorClass) MayHaveApplied() bool {
	switch c {
	case ClassWriteTimeout, ClassWriteFailure, ClassClientTimeout, ClassConnection:
		return true
	}
	return false
}

// ClassifyError maps an error from gocql (or from a function given to Do) to its class,
// by type and protocol error code, never by message text. Unknown errors are ClassFatal.
func ClassifyError(err error) ErrorClass {
	if err == nil {
		return ClassNone
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ClassCanceled
	}
	var ou *OutcomeUnknownError
	if errors.As(err, &ou) {
		return ClassifyError(ou.Err)
	}
	// gocql's typed errors first (they carry the code, but a zero value would say 0).
	var (
		unavailable  *gocql.RequestErrUnavailable
		readTimeout  *gocql.RequestErrReadTimeout
		writeTimeout *gocql.RequestErrWriteTimeout
		writeFailure *gocql.RequestErrWriteFailure
		readFailure  *gocql.RequestErrReadFailure
	)
	switch {
	case errors.As(err, &unavailable):
		return ClassUnavailable
	case errors.As(err, &readTimeout):
		return ClassReadTimeout
	case errors.As(err, &writeTimeout):
		return ClassWriteTimeout
	case errors.As(err, &writeFailure):
		return ClassWriteFailure
	case errors.As(err, &readFailure):
		return ClassReadFailure
	}
	var re gocql.RequestError
	if errors.As(err, &re) {
		switch re.Code() {
		case gocql.ErrCodeUnavailable:
			return ClassUnavailable
		case gocql.ErrCodeOverloaded:
			return ClassOverloaded
		case gocql.ErrCodeBootstrapping:
			return ClassBootstrapping
		case gocql.ErrCodeReadTimeout:
			return ClassReadTimeout
		case gocql.ErrCodeWriteTimeout, gocql.ErrCodeCASWriteUnknown:
			return ClassWriteTimeout
		case gocql.ErrCodeWriteFailure, gocql.ErrCodeCDCWriteFailure:
			return ClassWriteFailure
		case gocql.ErrCodeReadFailure:
			return ClassReadFailure
		}
		return ClassFatal
	}
	switch {
	case errors.Is(err, gocql.ErrTimeoutNoResponse):
		return ClassClientTimeout
	case errors.Is(err, gocql.ErrConnectionClosed), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return ClassConnection
	case errors.Is(err, gocql.ErrNoConnections), errors.Is(err, syscall.ECONNREFUSED):
		return ClassNoHost
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassClientTimeout
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ClassConnection
	}
	return ClassFatal
}
