package clientid

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrMalformed is matched (errors.Is) by every *ParseError.
var ErrMalformed = errors.New("clientid: malformed key")

// ParseError says why a sortable key could not be parsed.
type ParseError struct {
	Func   string // the parse function
	Input  string // the rejected input (truncated to 64 bytes)
	Reason string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("clientid: %s(%q): %s", e.Func, e.Input, e.Reason)
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

func parseErr(fn, in, reason string) error {
	if len(in) > 64 {
		in = in[:64]
	}
	return &ParseError{Func: fn, Input: in, Reason: reason}
}

// SortableInt64Width is the length of every SortableInt64 key.
const SortableInt64Width = 20

// SortableInt64 encodes n as a fixed-width (20 byte) decimal string whose byte order is
// numeric order, negatives included: "1" followed by n zero-padded to 19 digits for
// n >= 0 (so 42 is "10000000000000000042", readable), "0" followed by n+2^63 zero-padded
// for n < 0. Nineteen digits is the full width of int64: padding to fewer (the classic
// 10-digit bug) mis-sorts as soon as a value outgrows the padding.
func SortableInt64(n int64) string {
	var b [SortableInt64Width]byte
	return string(appendSortableInt64(b[:0], n))
}

// AppendSortableInt64 appends SortableInt64(n) to dst.
func AppendSortableInt64(dst []byte, n int64) []byte { return appendSortableInt64(dst, n) }

func appendSortableInt64(dst []byte, n int64) []byte {
	var v uint64
	if n >= 0 {
		dst = append(dst, '1')
		v = uint64(n)
	} else {
		dst = append(dst, '0')
		v = uint64(n) + 1<<63 // n + 2^63, in [0, 2^63)
	}
	var digits [19]byte
	for i := 18; i >= 0; i-- {
		digits[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, digits[:]...)
}

// ParseSortableInt64 decodes a SortableInt64 key. Anything else — another length, a
// sign, spaces, a first digit other than 0 or 1, a value beyond int64 — is a
// *ParseError (errors.Is(err, ErrMalformed)).
func ParseSortableInt64(s string) (int64, error) {
	const fn = "ParseSortableInt64"
	if len(s) != SortableInt64Width {
		return 0, parseErr(fn, s, fmt.Sprintf("length %d, want %d", len(s), SortableInt64Width))
	}
	var v uint64
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, parseErr(fn, s, fmt.Sprintf("byte %d is not a decimal digit", i))
		}
		v = v*10 + uint64(c-'0') // 19 digits fit in uint64
	}
	if v > math.MaxInt64 {
		return 0, parseErr(fn, s, "value out of range")
	}
	switch s[0] {
	case '1':
		return int64(v), nil
	case '0':
		return int64(v - 1<<63), nil
	default:
		return 0, parseErr(fn, s, "first byte must be 0 (negative) or 1 (non-negative)")
	}
}

// ReverseTime encodes t as a fixed-width (20 byte) string that sorts newer first:
// SortableInt64 of the bitwise complement of t's Unix microseconds (max − t without
// overflow). Precision is one microsecond; times beyond ±292,000 years are clamped.
func ReverseTime(t time.Time) string {
	return SortableInt64(^clampedMicros(t))
}

// ParseReverseTime decodes a ReverseTime key to the UTC time it holds (microsecond
// precision). Malformed input is a *ParseError.
func ParseReverseTime(s string) (time.Time, error) {
	n, err := ParseSortableInt64(s)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Func = "ParseReverseTime"
		}
		return time.Time{}, err
	}
	return time.UnixMicro(^n).UTC(), nil
}

var (
	minMicroTime = time.UnixMicro(math.MinInt64)
	maxMicroTime = time.UnixMicro(math.MaxInt64)
)

func clampedMicros(t time.Time) int64 {
	switch {
	case t.Before(minMicroTime):
		return math.MinInt64
	case t.After(maxMicroTime):
		return math.MaxInt64
	}
	return t.UnixMicro()
}
