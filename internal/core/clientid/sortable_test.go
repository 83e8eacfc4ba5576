package clientid

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestClientidSortableInt64Table(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "10000000000000000000"},
		{42, "10000000000000000042"},
		{math.MaxInt64, "19223372036854775807"},
		{-1, "09223372036854775807"},
		{math.MinInt64, "00000000000000000000"},
		{-42, "09223372036854775766"},
	} {
		got := SortableInt64(tc.n)
		if got != tc.want {
			t.Errorf("SortableInt64(%d) = %q, want %q", tc.n, got, tc.want)
		}
		back, err := ParseSortableInt64(got)
		if err != nil || back != tc.n {
			t.Errorf("ParseSortableInt64(%q) = %d, %v", got, back, err)
		}
	}
}

// TestTenDigitPaddingBug shows the field report's bug and that full width avoids it.
func TestClientidTenDigitPaddingBug(t *testing.T) {
	pad10 := func(n int64) string { s := "0000000000" + itoa(n); return s[len(s)-10:] }
	small, big := int64(9_999_999_999), int64(10_000_000_000) // ticks outgrow 10 digits
	if pad10(small) < pad10(big) {
		t.Fatal("expected the 10-digit encoding to mis-sort")
	}
	if !(SortableInt64(small) < SortableInt64(big)) {
		t.Fatal("SortableInt64 mis-sorts")
	}
}

func itoa(n int64) string { return strings.TrimLeft(SortableInt64(n)[1:], "0") }

func TestClientidParseSortableInt64Rejects(t *testing.T) {
	for _, in := range []string{
		"", "1", "1000000000000000004", "100000000000000000042", "+0000000000000000042",
		"-0000000000000000042", "20000000000000000000", "19223372036854775808",
		"09223372036854775808", "1000000000000000004x", " 1000000000000000042",
		"1000000000000000004\x00", "1０00000000000000004",
	} {
		_, err := ParseSortableInt64(in)
		if err == nil {
			t.Errorf("ParseSortableInt64(%q) accepted", in)
			continue
		}
		var pe *ParseError
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &pe) {
			t.Errorf("ParseSortableInt64(%q): error %v is not a *ParseError matching ErrMalformed", in, err)
		}
	}
}

func TestClientidReverseTime(t *testing.T) {
	a := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	b := a.Add(time.Microsecond)
	old := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	if !(ReverseTime(b) < ReverseTime(a) && ReverseTime(a) < ReverseTime(old)) {
		t.Fatal("ReverseTime does not sort newer first")
	}
	for _, tt := range []time.Time{a, b, old, time.Unix(0, 0), time.Date(2262, 4, 12, 0, 0, 0, 999, time.UTC)} {
		s := ReverseTime(tt)
		if len(s) != SortableInt64Width {
			t.Fatalf("ReverseTime width %d", len(s))
		}
		back, err := ParseReverseTime(s)
		if err != nil || !back.Equal(tt.Truncate(time.Microsecond)) {
			t.Errorf("ParseReverseTime(ReverseTime(%v)) = %v, %v", tt, back, err)
		}
	}
	_, err := ParseReverseTime("nope")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Func != "ParseReverseTime" {
		t.Fatalf("ParseReverseTime(nope) error = %v", err)
	}
}

func BenchmarkSortableInt64(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for b.Loop() {
		buf = AppendSortableInt64(buf[:0], -1234567890123)
	}
}

func BenchmarkParseSortableInt64(b *testing.B) {
	s := SortableInt64(-1234567890123)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ParseSortableInt64(s)
	}
}
