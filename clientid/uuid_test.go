package clientid

import (
	"bytes"
	"sort"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func TestClientidFromKeyRFCVector(t *testing.T) {
	// RFC 9562 Appendix A.4: v5 of "www.example.com" in the DNS namespace.
	got := FromKey(NamespaceDNS, []byte("www.example.com"))
	if want := "2ed6657d-e927-568b-95e1-2665a8aea6a2"; got.String() != want {
		t.Fatalf("FromKey = %s, want %s", got, want)
	}
	if got.Version() != 5 || got.Variant() != gocql.VariantIETF {
		t.Fatalf("version %d variant %d", got.Version(), got.Variant())
	}
	if FromKey(NamespaceIdempotencyKey, []byte("k1")) == FromKey(NamespaceIdempotencyKey, []byte("k2")) {
		t.Fatal("different keys gave the same UUID")
	}
}

func TestClientidVersionsAndVariants(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name    string
		u       gocql.UUID
		version int
	}{
		{"NewRandom", NewRandom(), 4},
		{"NewV7", NewV7(), 7},
		{"NewTimeUUID", NewTimeUUID(now), 1},
		{"TimeUUIDFromKey", TimeUUIDFromKey(now, []byte("k")), 1},
		{"MinTimeUUID", MinTimeUUID(now), 1},
	} {
		if tc.u.Version() != tc.version || tc.u.Variant() != gocql.VariantIETF {
			t.Errorf("%s: version %d variant %d, want %d IETF", tc.name, tc.u.Version(), tc.u.Variant(), tc.version)
		}
	}
	if u1, u2 := NewRandom(), NewRandom(); u1 == u2 {
		t.Fatal("two random UUIDs are equal")
	}
}

func TestClientidV7Order(t *testing.T) {
	base := time.UnixMilli(1_700_000_000_000)
	a, b := NewV7At(base), NewV7At(base.Add(time.Millisecond))
	if bytes.Compare(a[:], b[:]) >= 0 {
		t.Fatalf("v7 of later ms does not sort after: %s %s", a, b)
	}
	if got := NewV7At(time.Unix(-10, 0)); got[0]|got[1]|got[2]|got[3]|got[4]|got[5] != 0 {
		t.Fatalf("pre-1970 time not clamped to 0: %s", got)
	}
}

func TestClientidTimeUUIDTime(t *testing.T) {
	for _, tt := range []time.Time{
		time.Date(2026, 11, 21, 4, 31, 42, 123456700, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 1, 1, 0, 0, 0, 100, time.UTC),
		time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC),
		time.Date(5000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		for _, u := range []gocql.UUID{NewTimeUUID(tt), TimeUUIDFromKey(tt, []byte("key"))} {
			if got := u.Time(); !got.Equal(tt.Truncate(100 * time.Nanosecond)) {
				t.Errorf("TimeUUID(%v).Time() = %v", tt, got)
			}
		}
	}
	// Clamping instead of wrapping around.
	if got := NewTimeUUID(time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)).Time(); got.Year() != 1582 {
		t.Errorf("pre-1582 time gave %v, want clamped to 1582", got)
	}
	if got := NewTimeUUID(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)).Time(); got.Year() != 5236 {
		t.Errorf("far-future time gave %v, want clamped to 5236", got)
	}
}

func TestClientidTimeUUIDFromKeyDeterministic(t *testing.T) {
	tt := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	a, b := TimeUUIDFromKey(tt, []byte("order-17")), TimeUUIDFromKey(tt, []byte("order-17"))
	if a != b {
		t.Fatalf("same (t, key) gave %s and %s", a, b)
	}
	if c := TimeUUIDFromKey(tt, []byte("order-18")); c == a {
		t.Fatal("different keys gave the same TimeUUID")
	}
	if u1, u2 := NewTimeUUID(tt), NewTimeUUID(tt); u1 == u2 {
		t.Fatal("NewTimeUUID for equal times collided")
	}
}

func TestClientidCompareOrder(t *testing.T) {
	base := time.Date(2026, 5, 5, 5, 5, 5, 0, time.UTC)
	var us []gocql.UUID
	for i := 0; i < 200; i++ {
		tt := base.Add(time.Duration(i%20) * 100 * time.Nanosecond)
		us = append(us, NewTimeUUID(tt), MinTimeUUID(tt), MaxTimeUUID(tt))
	}
	sort.Slice(us, func(i, j int) bool { return Compare(us[i], us[j]) < 0 })
	for i := 1; i < len(us); i++ {
		ti, tj := us[i-1].Time(), us[i].Time()
		if ti.After(tj) {
			t.Fatalf("sorted by Compare but times go back: %v then %v", ti, tj)
		}
	}
	for _, u := range us {
		tt := u.Time()
		if Compare(MinTimeUUID(tt), u) > 0 || Compare(u, MaxTimeUUID(tt)) > 0 {
			t.Fatalf("%s not within [Min, Max] of its own time", u)
		}
	}
	// Signed-byte rule: 0x7f sorts after 0x80 in the clock sequence byte.
	a, b := MinTimeUUID(base), MinTimeUUID(base)
	a[9], b[9] = 0x80, 0x7f
	if Compare(a, b) >= 0 || Compare(b, a) <= 0 || Compare(a, a) != 0 {
		t.Fatal("Compare does not treat clock sequence and node bytes as signed")
	}
}

func BenchmarkNewTimeUUID(b *testing.B) {
	t := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		_ = NewTimeUUID(t)
	}
}

func BenchmarkTimeUUIDFromKey(b *testing.B) {
	t, key := time.Now(), []byte("request-8f14e45f")
	b.ReportAllocs()
	for b.Loop() {
		_ = TimeUUIDFromKey(t, key)
	}
}

func BenchmarkNewRandom(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = NewRandom()
	}
}

func BenchmarkFromKey(b *testing.B) {
	key := []byte("request-8f14e45f")
	b.ReportAllocs()
	for b.Loop() {
		_ = FromKey(NamespaceIdempotencyKey, key)
	}
}

// BenchmarkGocqlTimeUUID is the baseline: gocql's own UUIDFromTime.
func BenchmarkGocqlTimeUUID(b *testing.B) {
	t := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		_ = gocql.UUIDFromTime(t)
	}
}
