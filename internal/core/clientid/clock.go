package clientid

import (
	"sync/atomic"
	"time"
)

// Clock hands out write timestamps: microseconds since the Unix epoch, strictly
// increasing across all goroutines that share the Clock. Each value is max(now,
// last+1), so when the wall clock steps backwards (NTP, VM migration) the Clock keeps
// increasing and runs ahead of the wall clock until it catches up; Drift reports by how
// much, so callers can log when it passes a threshold (the Java driver warns above 1 s).
//
// The zero value is ready to use and reads time.Now. A Clock must not be copied after
// first use. One Clock per process is the intended use: two Clocks in one process can
// hand out the same value.
type Clock struct {
	last atomic.Int64
	base atomic.Pointer[clockBase]
	now  func() time.Time
}

// clockBase anchors the wall clock to Go's monotonic clock. Reading only the monotonic
// clock costs one vDSO call instead of time.Now's two; the anchor is re-read from the
// wall clock every resyncEvery, so a corrected (stepped) wall clock is followed within
// that time, and Reserve's max(now, last+1) keeps values increasing whatever it does.
type clockBase struct {
	mono       time.Time // carries a monotonic reading
	wallMicros int64
}

const resyncEvery = 100 * time.Millisecond

// NewClock returns a Clock reading the system wall clock.
func NewClock() *Clock { return &Clock{} }

// NewClockFunc returns a Clock reading now instead of time.Now: for tests and
// simulations of a wall clock that jumps.
func NewClockFunc(now func() time.Time) *Clock { return &Clock{now: now} }

// wall returns the current wall-clock time in µs.
func (c *Clock) wall() int64 {
	if c.now != nil {
		return c.now().UnixMicro()
	}
	b := c.base.Load()
	if b != nil {
		if d := time.Since(b.mono); d >= 0 && d < resyncEvery {
			return b.wallMicros + int64(d/time.Microsecond)
		}
	}
	now := time.Now()
	c.base.Store(&clockBase{mono: now, wallMicros: now.UnixMicro()})
	return now.UnixMicro()
}

// Now returns the wall-clock time in µs as this Clock reads it, reserving nothing: for
// measuring the Clock against another clock.
func (c *Clock) Now() int64 { return c.wall() }

// Next returns a timestamp greater than every value this Clock returned before.
// Lock-free; safe for concurrent use.
func (c *Clock) Next() int64 { return c.Reserve(1) }

// Reserve returns the first of n consecutive timestamps t, t+1, …, t+n-1 that no other
// call on this Clock returns. An overwrite reserves two: the delete at t and the insert
// at t+1. n < 1 is treated as 1 (one value is reserved), so the result is always usable.
func (c *Clock) Reserve(n int) int64 {
	if n < 1 {
		n = 1
	}
	now := c.wall()
	for {
		last := c.last.Load()
		next := now
		if next <= last {
			next = last + 1
		}
		if c.last.CompareAndSwap(last, next+int64(n)-1) {
			return next
		}
	}
}

// Observe tells the Clock of a write timestamp seen in Cassandra (a WRITETIME just read):
// every later value it hands out is above ts. It is the hybrid-logical-clock rule that
// keeps an instance whose wall clock lags from stamping a write below one it has seen —
// such a write would lose to the older one, or to a delete made at its timestamp,
// though Cassandra acknowledged it. Drift then reports how far the Clock runs ahead of
// the wall clock. A timestamp more than MaxObserveAhead ahead of the wall clock is
// ignored: it is in the wrong unit (nanoseconds), or from a clock gone wrong, and
// following it would stamp every later write of the process far in the future, where
// no process with a sane clock could overwrite or delete them. Lock-free; safe for
// concurrent use.
func (c *Clock) Observe(ts int64) {
	if ts > c.wall()+int64(MaxObserveAhead/time.Microsecond) {
		return
	}
	for {
		last := c.last.Load()
		if ts <= last || c.last.CompareAndSwap(last, ts) {
			return
		}
	}
}

// MaxObserveAhead bounds how far ahead of the wall clock Observe follows a timestamp.
const MaxObserveAhead = time.Hour

// Last returns the highest timestamp handed out so far (0 before the first call).
func (c *Clock) Last() int64 { return c.last.Load() }

// Drift reports how far the Clock runs ahead of the wall clock: positive after the wall
// clock stepped back, after Observe of a timestamp ahead of it (another instance's clock
// runs ahead of this one), or when values are drawn faster than one per microsecond;
// zero otherwise.
func (c *Clock) Drift() time.Duration {
	wall := time.Now().UnixMicro()
	if c.now != nil {
		wall = c.now().UnixMicro()
	}
	d := c.last.Load() - wall
	if d <= 0 {
		return 0
	}
	return time.Duration(d) * time.Microsecond
}

var processClock = NewClock()

// ProcessClock returns the Clock shared by every cqlsafe package in this process, so
// that overwrites, retries and event appends never receive the same timestamp. Use it
// for your own writes too, or pass your own Clock to each package's options.
func ProcessClock() *Clock { return processClock }
