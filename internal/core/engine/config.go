package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// Config is a Policy's settings, as the options set them. An adapter embeds it in its
// own configuration (which adds what names driver types: an outbox, a hedger).
type Config struct {
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
	Jitter      bool
	Clock       *clientid.Clock
	Observer    func(Event)
	Logger      *slog.Logger
	Schema      verdict.Schema
	Tracer      Tracer
	NextHost    bool
	MaxOffset   time.Duration // 0: clock offsets are measured, never refused
}

// Option sets one setting; an invalid value is an error, never clamped.
type Option func(*Config) error

// Defaults are the settings NewPolicy documents.
func Defaults() Config {
	return Config{
		MaxAttempts: 4,
		BaseDelay:   50 * time.Millisecond,
		MaxDelay:    2 * time.Second,
		Jitter:      true,
		Clock:       clientid.ProcessClock(),
	}
}

// WithMaxAttempts: n ≥ 1 attempts per execution, the first included.
func WithMaxAttempts(n int) Option {
	return func(c *Config) error {
		if n < 1 {
			return fmt.Errorf("retry: max attempts %d below 1", n)
		}
		c.MaxAttempts = n
		return nil
	}
}

// WithBackoff: 0 < base ≤ max.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Config) error {
		if base <= 0 || max < base {
			return fmt.Errorf("retry: backoff base %v, max %v: want 0 < base ≤ max", base, max)
		}
		c.BaseDelay, c.MaxDelay = base, max
		return nil
	}
}

// WithoutJitter waits exactly the backoff.
func WithoutJitter() Option { return func(c *Config) error { c.Jitter = false; return nil } }

// WithClock draws write timestamps from clock (not nil).
func WithClock(clock *clientid.Clock) Option {
	return func(c *Config) error {
		if clock == nil {
			return errors.New("retry: nil clock")
		}
		c.Clock = clock
		return nil
	}
}

// WithObserver calls f with every decision.
func WithObserver(f func(Event)) Option { return func(c *Config) error { c.Observer = f; return nil } }

// WithLogger logs every decision at Warn.
func WithLogger(l *slog.Logger) Option { return func(c *Config) error { c.Logger = l; return nil } }

// WithSchema judges statements against s.
func WithSchema(s verdict.Schema) Option { return func(c *Config) error { c.Schema = s; return nil } }

// WithTimeoutsOnNextHost retries timeouts on the next host.
func WithTimeoutsOnNextHost() Option { return func(c *Config) error { c.NextHost = true; return nil } }

// WithTracer begins a Trace per execution.
func WithTracer(t Tracer) Option { return func(c *Config) error { c.Tracer = t; return nil } }

// WithMaxClockOffset refuses writes while the measured offset is beyond d (> 0).
func WithMaxClockOffset(d time.Duration) Option {
	return func(c *Config) error {
		if d <= 0 {
			return fmt.Errorf("retry: WithMaxClockOffset(%v): the bound must be positive", d)
		}
		c.MaxOffset = d
		return nil
	}
}

// ServicePreset tunes for request-serving code: 3 attempts, 20 ms doubling to 250 ms.
func ServicePreset() Option {
	return func(c *Config) error {
		c.MaxAttempts = 3
		c.BaseDelay = 20 * time.Millisecond
		c.MaxDelay = 250 * time.Millisecond
		c.Jitter = true
		return nil
	}
}

// Event is one decision after a failed attempt (the adapters document it as
// retry.Event).
type Event struct {
	Attempt    int // the attempt that failed, 1 for the first
	Class      decision.ErrorClass
	Err        error
	Retrying   bool          // false: the error is returned to the caller
	Delay      time.Duration // wait before the next attempt, when Retrying
	Idempotent bool
	Statement  string          // statement text only, never values; "BATCH(n)" for batches
	Why        string          // when not retrying: why not, in a sentence
	Reason     decision.Reason // when not retrying: why not, one of the Reason constants
	NextHost   bool            // when retrying: on the next host (else the same one)
}
