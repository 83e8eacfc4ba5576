package clientid

import (
	"cmp"
	"strings"
	"testing"
	"time"
)

func FuzzSortableInt64(f *testing.F) {
	for _, seed := range [][2]int64{{0, 1}, {-1, 0}, {-9223372036854775808, 9223372036854775807}, {9_999_999_999, 10_000_000_000}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b int64) {
		sa, sb := SortableInt64(a), SortableInt64(b)
		if len(sa) != SortableInt64Width || len(sb) != SortableInt64Width {
			t.Fatalf("width %d %d", len(sa), len(sb))
		}
		if cmp.Compare(a, b) != strings.Compare(sa, sb) {
			t.Fatalf("order: %d vs %d encoded %q vs %q", a, b, sa, sb)
		}
		if back, err := ParseSortableInt64(sa); err != nil || back != a {
			t.Fatalf("round trip %d: %d, %v", a, back, err)
		}
	})
}

func FuzzParseSortableInt64(f *testing.F) {
	for _, s := range []string{"10000000000000000042", "09223372036854775807", "", "x", "19223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSortableInt64(s)
		if err != nil {
			return
		}
		if SortableInt64(n) != s {
			t.Fatalf("accepted %q but it encodes back as %q", s, SortableInt64(n))
		}
	})
}

func FuzzReverseTime(f *testing.F) {
	f.Add(int64(0), int64(1))
	f.Add(int64(-62135596800000000), int64(253402300799999999))
	f.Fuzz(func(t *testing.T, a, b int64) {
		ta, tb := time.UnixMicro(a), time.UnixMicro(b)
		sa, sb := ReverseTime(ta), ReverseTime(tb)
		if len(sa) != SortableInt64Width {
			t.Fatalf("width %d", len(sa))
		}
		if cmp.Compare(a, b) != -strings.Compare(sa, sb) {
			t.Fatalf("not reverse order: %d %d → %q %q", a, b, sa, sb)
		}
		back, err := ParseReverseTime(sa)
		if err != nil || back.UnixMicro() != a {
			t.Fatalf("round trip %d: %v, %v", a, back, err)
		}
	})
}

func FuzzParseReverseTime(f *testing.F) {
	f.Add(ReverseTime(time.Unix(1, 0)))
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, s string) {
		tt, err := ParseReverseTime(s)
		if err == nil && ReverseTime(tt) != s {
			t.Fatalf("accepted %q but it encodes back as %q", s, ReverseTime(tt))
		}
	})
}
