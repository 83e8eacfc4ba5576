package settle

import (
	"time"

	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// Option configures Write and LWT. An invalid value is an error from the call, before
// anything is read.
type Option = core.Option[gocql.Consistency, gocql.SerialConsistency]

type config = core.Config[gocql.Consistency, gocql.SerialConsistency]

// options applies opts over the defaults documented on Write and LWT.
func options(opts []Option) (config, error) {
	return core.Apply(config{Consistency: gocql.Quorum, Serial: gocql.Serial}, opts)
}

// At sets the consistency Write reads write times at (default QUORUM). ALL is the only
// level at which "not visible" speaks for every replica; see Write. ANY, SERIAL and
// LOCAL_SERIAL are refused.
func At(c gocql.Consistency) Option {
	return core.At[gocql.Consistency, gocql.SerialConsistency](c, c != gocql.Any && c != gocql.Consistency(gocql.Serial) && c != gocql.Consistency(gocql.LocalSerial) && c <= gocql.LocalOne)
}

// Serial sets the serial consistency LWT reads at: gocql.Serial (the default) or
// gocql.LocalSerial (when every write to the row uses LOCAL_SERIAL).
func Serial(c gocql.SerialConsistency) Option {
	return core.Serial[gocql.Consistency](c, c == gocql.Serial || c == gocql.LocalSerial)
}

// Keyspace sets the keyspace of statements that name none (default: the session's
// keyspace). retry.OutcomeUnknownError does not record the keyspace a statement ran in;
// give it here when the writing session's keyspace differs from s's.
func Keyspace(ks string) Option { return core.Keyspace[gocql.Consistency, gocql.SerialConsistency](ks) }

// After waits d (or until ctx is done) before reading. A request still in flight —
// queued in a proxy, a socket or a coordinator — can apply after a read that did not see
// it; waiting past the server's write_request_timeout (2 s by default; for an LWT its
// cas_contention_timeout, 1 s by default, counted from when the coordinator got the
// request) plus the network's delay since the last attempt was sent makes that moot.
func After(d time.Duration) Option { return core.After[gocql.Consistency, gocql.SerialConsistency](d) }

// Observer hears of every Write and LWT call (WithObserver), for observability: package
// otel's Instrumentation is one. Settled is called once per call that got past its
// options, when it returns, on the caller's goroutine, with the context the call was
// given (context.Background() for nil). Implementations must be safe for concurrent
// use.
type Observer = core.Observer

// Report is one Write or LWT call, as an Observer hears of it.
type Report = core.Report

// Report kinds.
const (
	KindWrite = core.KindWrite
	KindLWT   = core.KindLWT
)

// WithObserver reports every call to o (see Observer); nil reports nothing (the
// default).
func WithObserver(o Observer) Option {
	return core.WithObserver[gocql.Consistency, gocql.SerialConsistency](o)
}
