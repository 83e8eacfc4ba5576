package tombstone

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/tombstone"
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
		c := core.Defaults(retry.NewPolicy())
		if err := o(&c); err == nil {
			t.Error("bad option accepted")
		}
	}
}

func TestTombstoneDeleteRejectsBeforeReading(t *testing.T) {
	st := &Store{new(core.Store[gocql.TypeInfo, gocql.UUID, *retry.Policy])}
	if _, err := st.Delete(context.Background(), nil, map[string]any{}, "c"); err == nil {
		t.Fatal("nil table accepted")
	}
}

func TestTombstoneSettleDelayRejectsNegative(t *testing.T) {
	c := core.Defaults(retry.NewPolicy())
	if err := WithSettleDelay(-time.Second)(&c); err == nil {
		t.Fatal("negative settle delay accepted")
	}
	if err := WithSettleDelay(0)(&c); err != nil || c.Settle != 0 {
		t.Fatalf("zero settle delay: %v, %v", err, c.Settle)
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
