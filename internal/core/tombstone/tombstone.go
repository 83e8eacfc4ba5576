// Package tombstone is cqlsafe's recoverable delete without a driver: the record format,
// the read of a row with its write times and TTLs, the delete at the newest write time,
// the plan of an undelete and its conditional restore, the settling of a restore whose
// reply was lost, and Reconcile's decisions. Each driver adapter (tombstone for gocql
// v1.7, gocqlv2/tombstone for the Apache driver v2) gives a Session: its reads, its
// batches, its retry policy's clock and error classes. The package doc of either
// adapter says what a Store does and why.
package tombstone

import (
	"errors"
	"fmt"
	"time"
)

// Sentinels. Bad input returns one before anything is written.
var (
	ErrEmptyCommand     = errors.New("tombstone: empty command id")
	ErrNoRow            = errors.New("tombstone: row does not exist")
	ErrNoTombstone      = errors.New("tombstone: no delete to undo")
	ErrNotLastDelete    = errors.New("tombstone: the row's most recent delete came from another command")
	ErrRowExists        = errors.New("tombstone: the row exists now")
	ErrNoTombstoneTable = errors.New("tombstone: tombstone table missing")
	ErrInvalidName      = errors.New("tombstone: invalid keyspace or table name")
	// ErrRestoreShadowed: the restore applied, but the row is not visible — a delete
	// stamped at or after the restore's timestamp shadows it (see Undelete).
	ErrRestoreShadowed = errors.New("tombstone: restored row is shadowed by a newer delete")
	// ErrNotRestored: a restore whose reply was lost turned out not to have applied.
	ErrNotRestored = errors.New("tombstone: the restore did not apply")
	// ErrRestoreUnknown: whether the restore applied could not be settled.
	ErrRestoreUnknown = errors.New("tombstone: restore outcome unknown")
)

// RestoreError is the typed error of an Undelete whose restore was sent: Err is
// ErrRestoreShadowed, ErrNotRestored, ErrRestoreUnknown or ErrRowExists (errors.Is
// matches it), Cause what was observed (a driver error, or nil).
type RestoreError struct {
	Table  string
	Err    error
	Detail string
	Cause  error
}

func (e *RestoreError) Error() string {
	msg := e.Err.Error() + ": " + e.Table
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Is matches the outcome sentinel.
func (e *RestoreError) Is(target error) bool { return target == e.Err }

// Unwrap returns the driver error behind the outcome, if any.
func (e *RestoreError) Unwrap() error { return e.Cause }

// Record actions.
const (
	ActionDelete   = "delete"
	ActionUndelete = "undelete"
)

// Record is one entry of a row's history in the tombstone table; U is the driver's UUID.
type Record[U ~[16]byte] struct {
	Table     string // keyspace.table of the deleted row
	ID        U
	CommandID string
	Action    string // ActionDelete or ActionUndelete
	At        time.Time
	// Timestamp is the write timestamp the delete used (µs): the newest cell it read.
	Timestamp int64
	// Values are the row's columns as they were (non-null ones), decoded.
	Values map[string]any
	// WriteTimes are the WRITETIME of each column read (MAXWRITETIME for a non-frozen
	// collection).
	WriteTimes map[string]int64
	// Expires says when each recorded cell that had a TTL would have expired (to the
	// second); a cell without TTL is absent. A non-frozen collection's elements share the
	// latest expiry of any of them, or none if one of them had no TTL.
	Expires map[string]time.Time

	written int64             // WRITETIME of the record itself (what Reconcile deletes it at)
	raw     map[string][]byte // Values serialised, as read: what a restore binds
}

// expiresKey prefixes the keys that carry cells' expiries in the record's writetimes
// map (Unix seconds), beside the columns' write times: the template has no other place
// for them. A table with a column whose name starts with it is refused.
const expiresKey = "expires:"

// Option configures a Store, over the driver's retry policy P.
type Option[P any] func(*Config[P]) error

// Config is the options applied.
type Config[P any] struct {
	TTL       time.Duration
	Settle    time.Duration
	Policy    P // its clock stamps deletes and records
	AfterRead func()
	Now       func() time.Time
}

// Defaults: tombstones live 30 days; a restore with a lost reply is settled 2 s after it
// was sent; retries, and timestamps from the clock of, policy (the adapter's
// retry.NewPolicy()).
func Defaults[P any](policy P) Config[P] {
	return Config[P]{TTL: 30 * 24 * time.Hour, Settle: 2 * time.Second, Policy: policy, Now: time.Now}
}

// WithSettleDelay: see the adapters' WithSettleDelay.
func WithSettleDelay[P any](d time.Duration) Option[P] {
	return func(c *Config[P]) error {
		if d < 0 {
			return fmt.Errorf("tombstone: settle delay %v: negative", d)
		}
		c.Settle = d
		return nil
	}
}

// WithTTL sets how long tombstones are kept (at least 1 s, whole seconds).
func WithTTL[P any](d time.Duration) Option[P] {
	return func(c *Config[P]) error {
		if d < time.Second || d%time.Second != 0 {
			return fmt.Errorf("tombstone: TTL %v: whole seconds, at least 1", d)
		}
		c.TTL = d
		return nil
	}
}

// WithRetryPolicy sets the policy; err (the policy's own check) refuses it.
func WithRetryPolicy[P any](p P, err error) Option[P] {
	return func(c *Config[P]) error {
		if err != nil {
			return err
		}
		c.Policy = p
		return nil
	}
}

// WithHookAfterRead calls f between Delete's read and its write.
func WithHookAfterRead[P any](f func()) Option[P] {
	return func(c *Config[P]) error { c.AfterRead = f; return nil }
}
