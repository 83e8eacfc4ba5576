package keymigrate

import (
	"context"
	"math"
	"testing"
	"time"
)

// unset stands for a driver's UNSET value.
type unsetValue struct{}

var unset = unsetValue{}

func TestKeymigrateTokenRangesCoverTheRing(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 256} {
		prevHi := int64(math.MinInt64)
		for r := 0; r < n; r++ {
			lo, hi := tokenRange(r, n)
			if lo != prevHi || hi <= lo {
				t.Fatalf("n=%d range %d: (%d, %d] after %d", n, r, lo, hi, prevHi)
			}
			prevHi = hi
		}
		if prevHi != math.MaxInt64 {
			t.Fatalf("n=%d: ring ends at %d", n, prevHi)
		}
	}
}

func TestKeymigrateLimiter(t *testing.T) {
	l := newLimiter(1000)
	start := time.Now()
	for i := 0; i < 50; i++ {
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("50 waits at 1000/s took %v", d)
	}
	var none *limiter
	if err := none.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := newLimiter(0.001)
	slow.wait(ctx)
	if err := slow.wait(ctx); err == nil {
		t.Fatal("wait ignored a cancelled context")
	}
}

func TestKeymigrateOptionsRejectBadValues(t *testing.T) {
	for _, o := range []BackfillOption{WithRanges(0), WithConcurrency(0), WithPageSize(0), WithThrottle(0),
		WithRowsInFlight(0), WithRowsInFlight(1025)} {
		c := backfillDefaults()
		if err := o(&c); err == nil {
			t.Error("bad option accepted")
		}
	}
	for _, o := range []VerifyOption{WithSample(0), WithVerifyConcurrency(0), WithVerifyConcurrency(257)} {
		var c verifyConfig
		if err := o(&c); err == nil {
			t.Error("bad verify option accepted")
		}
	}
	if _, err := New[int, [16]byte](nil, nil, "id", nil, nil, nil); err == nil {
		t.Error("nil session accepted")
	}
}

func TestKeymigrateAbsentAndNonEmpty(t *testing.T) {
	var nilStr *string
	s := "x"
	for _, tc := range []struct {
		v                any
		absent, nonEmpty bool
	}{
		{nil, true, false}, {unset, true, false}, {nilStr, true, false}, {(*int)(nil), true, false},
		{[]int(nil), true, false}, {map[string]int(nil), true, false},
		{&s, false, true}, {"", false, true}, {0, false, true}, {false, false, true},
		{[]int{}, false, false}, {[]int{1}, false, true}, {&[]int{}, false, false}, {[2]int{}, false, true},
	} {
		if got := absent(tc.v, unset); got != tc.absent {
			t.Errorf("absent(%#v) = %v", tc.v, got)
		}
		if got := nonEmpty(tc.v, unset); got != tc.nonEmpty {
			t.Errorf("nonEmpty(%#v) = %v", tc.v, got)
		}
	}
}

func TestKeymigrateCollectionTTL(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		in   []*int
		want int
	}{{nil, 0}, {[]*int{n(300)}, 300}, {[]*int{n(100), n(300)}, 300}, {[]*int{n(300), nil}, 0}, {[]*int{n(0), n(5)}, 0}} {
		if got := collectionTTL(tc.in, nil); got != tc.want {
			t.Errorf("collectionTTL(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestKeymigrateDecoders(t *testing.T) {
	i32 := func(v int32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	list := append(append(append(i32(2), i32(4)...), i32(30)...), i32(-1)...)
	got, err := intList(list)
	if err != nil || len(got) != 2 || *got[0] != 30 || got[1] != nil {
		t.Fatalf("intList = %v, %v", got, err)
	}
	if _, err := intList(list[:10]); err == nil {
		t.Fatal("a cut list decoded")
	}
	if v, err := optInt(nil); v != nil || err != nil {
		t.Fatal("NULL int")
	}
	if _, err := decodeBigint([]byte{1}); err == nil {
		t.Fatal("a short bigint decoded")
	}
	ts, err := decodeTimestamp([]byte{0, 0, 0, 0, 0, 0, 0x03, 0xe8})
	if err != nil || !ts.Equal(time.Unix(1, 0)) || ts.Location() != time.UTC {
		t.Fatalf("timestamp %v %v", ts, err)
	}
	if s := uuidString([16]byte{0x55, 0x0e, 0x84, 0, 0xe2, 0x9b, 0x41, 0xd4, 0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0, 0}); s != "550e8400-e29b-41d4-a716-446655440000" {
		t.Fatalf("uuidString = %s", s)
	}
}
