package clientid

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestClientidBucket(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		t     time.Time
		width time.Duration
		want  int64
	}{
		{time.Unix(0, 0), day, 0},
		{time.Unix(0, -1), day, -1},
		{time.Date(2026, 11, 21, 23, 59, 59, 999999999, time.UTC), day, 20778},
		{time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), day, 20779},
		{time.Date(2026, 11, 22, 1, 0, 0, 0, time.FixedZone("CET", 3600)), day, 20779},
		{time.Unix(7199, 0), time.Hour, 1},
	} {
		got, err := Bucket(tc.t, tc.width)
		if err != nil || got != tc.want {
			t.Errorf("Bucket(%v, %v) = %d, %v; want %d", tc.t, tc.width, got, err, tc.want)
		}
		start, err := BucketStart(got, tc.width)
		if err != nil || start.After(tc.t) || !tc.t.Before(start.Add(tc.width)) {
			t.Errorf("BucketStart(%d) = %v, %v does not contain %v", got, start, err, tc.t)
		}
	}
	for _, w := range []time.Duration{0, -time.Hour} {
		if _, err := Bucket(time.Now(), w); !errors.Is(err, ErrBucket) {
			t.Errorf("Bucket width %v: err = %v", w, err)
		}
		if _, err := BucketStart(1, w); !errors.Is(err, ErrBucket) {
			t.Errorf("BucketStart width %v: err = %v", w, err)
		}
	}
	if _, err := Bucket(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), time.Hour); !errors.Is(err, ErrBucket) {
		t.Errorf("year 3000: err = %v", err)
	}
	if _, err := BucketStart(1<<62, time.Hour); !errors.Is(err, ErrBucket) {
		t.Errorf("huge bucket: err = %v", err)
	}
}

func TestClientidBuckets(t *testing.T) {
	a := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := a.Add(50 * time.Hour)
	up, err := Buckets(a, b, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	down, _ := Buckets(b, a, 24*time.Hour)
	first, _ := Bucket(a, 24*time.Hour)
	if got, want := slices.Collect(up), []int64{first, first + 1, first + 2}; !slices.Equal(got, want) {
		t.Fatalf("ascending %v, want %v", got, want)
	}
	if got, want := slices.Collect(down), []int64{first + 2, first + 1, first}; !slices.Equal(got, want) {
		t.Fatalf("descending %v, want %v", got, want)
	}
	if _, err := Buckets(a, b, 0); err == nil {
		t.Fatal("zero width accepted")
	}
}
