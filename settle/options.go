package settle

import (
	"context"
	"fmt"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// Option configures Write and LWT. An invalid value is an error from the call, before
// anything is read.
type Option func(*config) error

type config struct {
	consistency gocql.Consistency
	serial      gocql.SerialConsistency
	keyspace    string
	delay       time.Duration
	observer    Observer
}

// defaults are documented on Write and LWT.
func defaults() config {
	return config{consistency: gocql.Quorum, serial: gocql.Serial}
}

func options(opts []Option) (config, error) {
	cfg := defaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// At sets the consistency Write reads write times at (default QUORUM). ALL is the only
// level at which "not visible" speaks for every replica; see Write.
func At(c gocql.Consistency) Option {
	return func(cfg *config) error {
		if c == gocql.Any || c > gocql.LocalOne {
			return fmt.Errorf("settle: consistency %v cannot read", c)
		}
		cfg.consistency = c
		return nil
	}
}

// Serial sets the serial consistency LWT reads at: gocql.Serial (the default) or
// gocql.LocalSerial (when every write to the row uses LOCAL_SERIAL).
func Serial(c gocql.SerialConsistency) Option {
	return func(cfg *config) error {
		if c != gocql.Serial && c != gocql.LocalSerial {
			return fmt.Errorf("settle: serial consistency %v: want SERIAL or LOCAL_SERIAL", c)
		}
		cfg.serial = c
		return nil
	}
}

// Keyspace sets the keyspace of statements that name none (default: the session's
// keyspace). retry.OutcomeUnknownError does not record the keyspace a statement ran in;
// give it here when the writing session's keyspace differs from s's.
func Keyspace(ks string) Option {
	return func(cfg *config) error {
		if err := cqltext.ValidName(ks); err != nil {
			return fmt.Errorf("settle: keyspace: %w", err)
		}
		cfg.keyspace = ks
		return nil
	}
}

// After waits d (or until ctx is done) before reading. A request still in flight —
// queued in a proxy, a socket or a coordinator — can apply after a read that did not see
// it; waiting past the server's write_request_timeout (2 s by default; for an LWT its
// cas_contention_timeout, 1 s by default, counted from when the coordinator got the
// request) plus the network's delay since the last attempt was sent makes that moot.
func After(d time.Duration) Option {
	return func(cfg *config) error {
		if d < 0 {
			return fmt.Errorf("settle: negative wait %v", d)
		}
		cfg.delay = d
		return nil
	}
}

// Observer hears of every Write and LWT call (WithObserver), for observability: package
// otel's Instrumentation is one. Settled is called once per call that got past its
// options, when it returns, on the caller's goroutine, with the context the call was
// given (context.Background() for nil). Implementations must be safe for concurrent
// use.
type Observer interface {
	Settled(ctx context.Context, r Report)
}

// Report is one Write or LWT call, as an Observer hears of it.
type Report struct {
	Kind       string        // "write" (Write) or "lwt" (LWT)
	Outcome    string        // the Result's Outcome or the LWTResult's, as String names it
	Statements int           // the statements settled: the write's (Write), 1 (LWT)
	Elapsed    time.Duration // the call's duration, After's wait included
	Err        error         // the error the call returned
}

// Report kinds.
const (
	KindWrite = "write"
	KindLWT   = "lwt"
)

// WithObserver reports every call to o (see Observer); nil reports nothing (the
// default).
func WithObserver(o Observer) Option {
	return func(cfg *config) error {
		cfg.observer = o
		return nil
	}
}
