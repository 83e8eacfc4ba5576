package clientid

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"time"
)

// ErrBucket is returned for a bucket width that is not positive, or a time or bucket
// number outside the range a bucket can describe.
var ErrBucket = errors.New("clientid: bad bucket")

var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

// Bucket returns the number of the width-wide time bucket that holds t: floor(t / width)
// counted in nanoseconds from the Unix epoch, so buckets are aligned to the epoch (a 24h
// bucket starts at 00:00 UTC) and times before 1970 get negative numbers. Use it as part
// of a partition key to bound partition size: rows of one bucket share a partition.
// t must lie in 1678–2262 (the range of time.UnixNano).
func Bucket(t time.Time, width time.Duration) (int64, error) {
	if width <= 0 {
		return 0, fmt.Errorf("%w: width %v is not positive", ErrBucket, width)
	}
	if t.Before(minNanoTime) || t.After(maxNanoTime) {
		return 0, fmt.Errorf("%w: time %v outside 1678–2262", ErrBucket, t)
	}
	q, _ := floorDiv(t.UnixNano(), int64(width))
	return q, nil
}

// BucketStart returns the first instant of bucket b (UTC); the bucket holds
// [start, start+width).
func BucketStart(b int64, width time.Duration) (time.Time, error) {
	if width <= 0 {
		return time.Time{}, fmt.Errorf("%w: width %v is not positive", ErrBucket, width)
	}
	w := int64(width)
	if b > math.MaxInt64/w || b < math.MinInt64/w {
		return time.Time{}, fmt.Errorf("%w: bucket %d of width %v is out of range", ErrBucket, b, width)
	}
	return time.Unix(0, b*w).UTC(), nil
}

// Buckets yields the bucket numbers covering [from, to] in order: ascending when
// from <= to, descending otherwise (for reading newest first).
func Buckets(from, to time.Time, width time.Duration) (iter.Seq[int64], error) {
	a, err := Bucket(from, width)
	if err != nil {
		return nil, err
	}
	b, err := Bucket(to, width)
	if err != nil {
		return nil, err
	}
	step := int64(1)
	if a > b {
		step = -1
	}
	return func(yield func(int64) bool) {
		for i := a; ; i += step {
			if !yield(i) || i == b {
				return
			}
		}
	}, nil
}

func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}
