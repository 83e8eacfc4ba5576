package decision

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
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

// Protocol error codes (native protocol spec, section 8) a Driver maps with CodeClass.
const (
	CodeUnavailable     = 0x1000
	CodeOverloaded      = 0x1001
	CodeBootstrapping   = 0x1002
	CodeWriteTimeout    = 0x1100
	CodeReadTimeout     = 0x1200
	CodeReadFailure     = 0x1300
	CodeWriteFailure    = 0x1500
	CodeCDCWriteFailure = 0x1600
	CodeCASWriteUnknown = 0x1700
)

// Rejected reports a server error code that says the statement itself was refused —
// syntax (0x2000), unauthorized (0x2100), invalid (0x2200: an unknown table or column,
// a value of the wrong type), configuration (0x2300) —: sent again unchanged, it fails
// the same way.
func Rejected(code int) bool {
	switch code {
	case 0x2000, 0x2100, 0x2200, 0x2300:
		return true
	}
	return false
}

// SerialConsistency reports SERIAL (0x0008) or LOCAL_SERIAL (0x0009), as the native
// protocol numbers consistency levels.
func SerialConsistency(c uint16) bool { return c == 0x0008 || c == 0x0009 }

// CodeClass is the class of a server error by its protocol code; codes not listed are
// ClassFatal (syntax, invalid, unauthorized, …).
func CodeClass(code int) ErrorClass {
	switch code {
	case CodeUnavailable:
		return ClassUnavailable
	case CodeOverloaded:
		return ClassOverloaded
	case CodeBootstrapping:
		return ClassBootstrapping
	case CodeReadTimeout:
		return ClassReadTimeout
	case CodeWriteTimeout, CodeCASWriteUnknown:
		return ClassWriteTimeout
	case CodeWriteFailure, CodeCDCWriteFailure:
		return ClassWriteFailure
	case CodeReadFailure:
		return ClassReadFailure
	}
	return ClassFatal
}

// Facts are what an error says about a write, in driver-neutral terms.
type Facts struct {
	Class ErrorClass
	// CDC: CDC_WRITE_FAILURE, or a write timeout or failure of type CDC, anywhere in the
	// error — the commit log's CDC space is full; a retry within the backoff cannot help.
	CDC bool
	// BatchLogged: a write timeout of type BATCH, anywhere in the error — the batch
	// reached the batch log and Cassandra will apply it.
	BatchLogged bool
	// Serial: an Unavailable whose consistency is SERIAL or LOCAL_SERIAL. For a
	// conditional write Paxos raises that one only before its round begins (the prepare
	// phase's replica plan, Paxos v1 and v2); an Unavailable at another consistency can
	// come after the proposal was accepted (see ProvesNothingApplied).
	Serial bool
}

// Driver is what Classify needs of a driver: its typed server errors and its sentinel
// errors, which Classify weighs in a fixed order against the context's and the
// network's.
type Driver struct {
	// Server maps the driver's server errors (typed, or any error with a protocol code):
	// ok false when err holds none. It sets CDC and BatchLogged from every server error
	// err holds, not only the one that decides the class.
	Server func(err error) (f Facts, ok bool)
	// The driver's sentinels: no response within its timeout, a connection it closed,
	// no connection to send on. Nil ones are skipped.
	NoResponse, ConnectionClosed, NoConnections error
	// NotSent reports the driver's other errors for a request it sent to no host
	// (nil: none) — the ScyllaDB fork's host down, no pool, no connection in the pool.
	NotSent func(err error) bool
	// ConnectionFailed reports the errors the driver hands every request in flight on
	// a connection it tears down — too many timeouts, a failed heartbeat, a frame it
	// cannot read: the request may have been written and applied (nil: none).
	ConnectionFailed func(err error) bool
}

// Classify maps an error to its facts, by type and protocol code, in this order: the
// context ended; a server error; a connection the driver tore down (ConnectionFailed);
// no response; the connection lost (the driver's closed connection, EOF, reset, broken
// pipe); no connection (the
// driver's, NotSent, or refused); a network timeout; another network error. Unknown errors are
// ClassFatal.
func Classify(err error, d Driver) Facts {
	if err == nil {
		return Facts{Class: ClassNone}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Facts{Class: ClassCanceled}
	}
	if d.Server != nil {
		if f, ok := d.Server(err); ok {
			return f
		}
	}
	is := func(target error) bool { return target != nil && errors.Is(err, target) }
	switch {
	case d.ConnectionFailed != nil && d.ConnectionFailed(err):
		return Facts{Class: ClassConnection}
	case is(d.NoResponse):
		return Facts{Class: ClassClientTimeout}
	case is(d.ConnectionClosed), is(io.EOF), is(io.ErrUnexpectedEOF), is(syscall.ECONNRESET),
		is(syscall.EPIPE), is(net.ErrClosed):
		return Facts{Class: ClassConnection}
	case is(d.NoConnections), d.NotSent != nil && d.NotSent(err), is(syscall.ECONNREFUSED):
		return Facts{Class: ClassNoHost}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Facts{Class: ClassClientTimeout}
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return Facts{Class: ClassConnection}
	}
	return Facts{Class: ClassFatal}
}
