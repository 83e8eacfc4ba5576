package settle

import (
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// Option configures Write and LWT. An invalid value is an error from the call, before
// anything is read.
type Option = core.Option[gocql.Consistency, gocql.Consistency]

type config = core.Config[gocql.Consistency, gocql.Consistency]

// options applies opts over the defaults: QUORUM, SERIAL, the session's keyspace, no
// wait.
func options(opts []Option) (config, error) {
	return core.Apply(config{Consistency: gocql.Quorum, Serial: gocql.Serial}, opts)
}

// At sets the consistency Write reads write times at (default QUORUM). ALL is the only
// level at which "not visible" speaks for every replica; see Write. ANY, SERIAL and
// LOCAL_SERIAL are refused.
func At(c gocql.Consistency) Option {
	return core.At[gocql.Consistency, gocql.Consistency](c, c != gocql.Any && c != gocql.Serial && c != gocql.LocalSerial && c <= gocql.LocalOne)
}

// Serial sets the serial consistency LWT reads at: gocql.Serial (the default) or
// gocql.LocalSerial (when every write to the row uses LOCAL_SERIAL).
func Serial(c gocql.Consistency) Option {
	return core.Serial[gocql.Consistency](c, c == gocql.Serial || c == gocql.LocalSerial)
}

// Keyspace sets the keyspace of statements that name none (default: the session's
// keyspace): give it when the writing session's keyspace differs from s's.
func Keyspace(ks string) Option { return core.Keyspace[gocql.Consistency, gocql.Consistency](ks) }

// After waits d (or until ctx is done) before reading: past the server's
// write_request_timeout (for an LWT its cas_contention_timeout) plus the network's delay
// since the last attempt, no request still in flight can apply after the read.
func After(d time.Duration) Option { return core.After[gocql.Consistency, gocql.Consistency](d) }

// WithObserver reports every call to o; nil reports nothing (the default).
func WithObserver(o Observer) Option {
	return core.WithObserver[gocql.Consistency, gocql.Consistency](o)
}
