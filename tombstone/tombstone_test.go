package tombstone

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

func TestTombstoneNewRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	for _, tc := range [][2]string{{"", "tombstones"}, {"app", ""}, {"app", `t"x`}} {
		if _, err := New(ctx, &gocql.Session{}, tc[0], tc[1]); !errors.Is(err, ErrInvalidName) {
			t.Errorf("New(%q, %q) = %v", tc[0], tc[1], err)
		}
	}
	if _, err := New(ctx, nil, "app", "tombstones"); err == nil {
		t.Error("nil session accepted")
	}
	for _, o := range []Option{WithTTL(0), WithTTL(1500 * time.Millisecond), WithRetryPolicy(nil), WithRetryPolicy(retry.NewPolicy(retry.WithBackoff(0, 0)))} {
		c := defaults()
		if err := o(&c); err == nil {
			t.Error("bad option accepted")
		}
	}
}

func TestTombstoneDeleteRejectsBeforeReading(t *testing.T) {
	st := &Store{cfg: defaults()}
	if _, err := st.Delete(context.Background(), nil, map[string]any{}, "c"); err == nil {
		t.Fatal("nil table accepted")
	}
}

func TestTombstoneCellTTL(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		ttl   *int
		elems []int
		want  int
	}{
		{nil, nil, 0},         // null TTL: none
		{n(30), nil, 30},      // a scalar's own
		{nil, []int{5, 9}, 9}, // a collection: the longest, so no element goes early
		{nil, []int{5, 0}, 0}, // an element without TTL: none
	} {
		if got := cellTTL(tc.ttl, tc.elems); got != tc.want {
			t.Errorf("cellTTL(%v, %v) = %d, want %d", tc.ttl, tc.elems, got, tc.want)
		}
	}
}

func TestTombstoneSplitTimes(t *testing.T) {
	wts, exps := splitTimes(map[string]int64{"a": 10, expiresKey + "a": 1_800_000_000, "b": 20})
	if len(wts) != 2 || wts["a"] != 10 || wts["b"] != 20 || len(exps) != 1 || exps["a"].Unix() != 1_800_000_000 {
		t.Fatalf("splitTimes: %v %v", wts, exps)
	}
}

func TestTombstoneSettleDelayRejectsNegative(t *testing.T) {
	c := defaults()
	if err := WithSettleDelay(-time.Second)(&c); err == nil {
		t.Fatal("negative settle delay accepted")
	}
	if err := WithSettleDelay(0)(&c); err != nil || c.settle != 0 {
		t.Fatalf("zero settle delay: %v, %v", err, c.settle)
	}
}

func TestTombstoneRestoreErrorMatches(t *testing.T) {
	cause := gocql.ErrTimeoutNoResponse
	err := error(&RestoreError{Table: "k.t", Err: ErrNotRestored, Cause: cause})
	var re *RestoreError
	if !errors.Is(err, ErrNotRestored) || !errors.Is(err, cause) || errors.Is(err, ErrRestoreShadowed) || !errors.As(err, &re) {
		t.Fatalf("%v: sentinel or cause not matched", err)
	}
}
