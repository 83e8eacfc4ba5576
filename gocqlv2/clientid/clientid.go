package clientid

import (
	"iter"
	"time"

	core "github.com/cqlsafe/cqlsafe/internal/core/clientid"
)

// Clock, buckets and sortable keys are cqlsafe's driver-neutral core (one process clock
// whichever drivers a process links); these are their names in this package.

// Clock hands out write timestamps: microseconds since the Unix epoch, strictly
// increasing across all goroutines that share the Clock. Each value is max(now,
// last+1), so when the wall clock steps backwards (NTP, VM migration) the Clock keeps
// increasing and runs ahead of the wall clock until it catches up; Drift reports by how
// much. The zero value is ready to use and reads time.Now. One Clock per process is the
// intended use: two Clocks in one process can hand out the same value.
type Clock = core.Clock

// NewClock returns a Clock reading the system wall clock.
func NewClock() *Clock { return core.NewClock() }

// NewClockFunc returns a Clock reading now instead of time.Now: for tests and
// simulations of a wall clock that jumps.
func NewClockFunc(now func() time.Time) *Clock { return core.NewClockFunc(now) }

// MaxObserveAhead bounds how far ahead of the wall clock Clock.Observe follows a
// timestamp.
const MaxObserveAhead = core.MaxObserveAhead

// ProcessClock returns the Clock shared by every cqlsafe package in this process, so
// that overwrites, retries and event appends never receive the same timestamp. Use it
// for your own writes too, or pass your own Clock to each package's options.
func ProcessClock() *Clock { return core.ProcessClock() }

// ErrBucket is returned for a bucket width that is not positive, or a time or bucket
// number outside the range a bucket can describe.
var ErrBucket = core.ErrBucket

// Bucket returns the number of the width-wide time bucket that holds t: floor(t / width)
// counted in nanoseconds from the Unix epoch, so buckets are aligned to the epoch (a 24h
// bucket starts at 00:00 UTC) and times before 1970 get negative numbers. Use it as part
// of a partition key to bound partition size: rows of one bucket share a partition.
// t must lie in 1678–2262 (the range of time.UnixNano).
func Bucket(t time.Time, width time.Duration) (int64, error) { return core.Bucket(t, width) }

// BucketStart returns the first instant of bucket b (UTC); the bucket holds
// [start, start+width).
func BucketStart(b int64, width time.Duration) (time.Time, error) { return core.BucketStart(b, width) }

// Buckets yields the bucket numbers covering [from, to] in order: ascending when
// from <= to, descending otherwise (for reading newest first).
func Buckets(from, to time.Time, width time.Duration) (iter.Seq[int64], error) {
	return core.Buckets(from, to, width)
}

// ErrMalformed is matched (errors.Is) by every *ParseError.
var ErrMalformed = core.ErrMalformed

// ParseError says why a sortable key could not be parsed.
type ParseError = core.ParseError

// SortableInt64Width is the length of every SortableInt64 key.
const SortableInt64Width = core.SortableInt64Width

// SortableInt64 encodes n as a fixed-width (20 byte) decimal string whose byte order is
// numeric order, negatives included: "1" followed by n zero-padded to 19 digits for
// n >= 0 (so 42 is "10000000000000000042", readable), "0" followed by n+2^63 zero-padded
// for n < 0. Nineteen digits is the full width of int64: padding to fewer (the classic
// 10-digit bug) mis-sorts as soon as a value outgrows the padding.
func SortableInt64(n int64) string { return core.SortableInt64(n) }

// AppendSortableInt64 appends SortableInt64(n) to dst.
func AppendSortableInt64(dst []byte, n int64) []byte { return core.AppendSortableInt64(dst, n) }

// ParseSortableInt64 decodes a SortableInt64 key. Anything else — another length, a
// sign, spaces, a first digit other than 0 or 1, a value beyond int64 — is a
// *ParseError (errors.Is(err, ErrMalformed)).
func ParseSortableInt64(s string) (int64, error) { return core.ParseSortableInt64(s) }

// ReverseTime encodes t as a fixed-width (20 byte) string that sorts newer first:
// SortableInt64 of the bitwise complement of t's Unix microseconds (max − t without
// overflow). Precision is one microsecond; times beyond ±292,000 years are clamped.
func ReverseTime(t time.Time) string { return core.ReverseTime(t) }

// ParseReverseTime decodes a ReverseTime key to the UTC time it holds (microsecond
// precision). Malformed input is a *ParseError.
func ParseReverseTime(s string) (time.Time, error) { return core.ParseReverseTime(s) }
