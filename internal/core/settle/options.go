package settle

import (
	"context"
	"fmt"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// Option configures Write and LWT, over a driver's consistency type C and serial
// consistency type S. An invalid value is an error from the call, before anything is
// read.
type Option[C, S any] func(*Config[C, S]) error

// Config is the options applied; an adapter gives the defaults.
type Config[C, S any] struct {
	Consistency C
	Serial      S
	Keyspace    string
	Delay       time.Duration
	Observer    Observer
}

// Apply applies opts over cfg (nil options are skipped).
func Apply[C, S any](cfg Config[C, S], opts []Option[C, S]) (Config[C, S], error) {
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

// At sets the consistency Write reads write times at; ok says whether c can read (an
// adapter checks its driver's levels).
func At[C, S any](c C, ok bool) Option[C, S] {
	return func(cfg *Config[C, S]) error {
		if !ok {
			return fmt.Errorf("settle: consistency %v cannot read", c)
		}
		cfg.Consistency = c
		return nil
	}
}

// Serial sets the serial consistency LWT reads at; ok says whether c is SERIAL or
// LOCAL_SERIAL.
func Serial[C, S any](c S, ok bool) Option[C, S] {
	return func(cfg *Config[C, S]) error {
		if !ok {
			return fmt.Errorf("settle: serial consistency %v: want SERIAL or LOCAL_SERIAL", c)
		}
		cfg.Serial = c
		return nil
	}
}

// Keyspace sets the keyspace of statements that name none.
func Keyspace[C, S any](ks string) Option[C, S] {
	return func(cfg *Config[C, S]) error {
		if err := cqltext.ValidName(ks); err != nil {
			return fmt.Errorf("settle: keyspace: %w", err)
		}
		cfg.Keyspace = ks
		return nil
	}
}

// After waits d (or until ctx is done) before reading.
func After[C, S any](d time.Duration) Option[C, S] {
	return func(cfg *Config[C, S]) error {
		if d < 0 {
			return fmt.Errorf("settle: negative wait %v", d)
		}
		cfg.Delay = d
		return nil
	}
}

// WithObserver reports every call to o; nil reports nothing.
func WithObserver[C, S any](o Observer) Option[C, S] {
	return func(cfg *Config[C, S]) error {
		cfg.Observer = o
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
