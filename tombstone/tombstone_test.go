package tombstone

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func TestNewRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	for _, tc := range [][2]string{{"", "tombstones"}, {"app", ""}, {"app", `t"x`}} {
		if _, err := New(ctx, &gocql.Session{}, tc[0], tc[1]); !errors.Is(err, ErrInvalidName) {
			t.Errorf("New(%q, %q) = %v", tc[0], tc[1], err)
		}
	}
	if _, err := New(ctx, nil, "app", "tombstones"); err == nil {
		t.Error("nil session accepted")
	}
	for _, o := range []Option{WithTTL(0), WithTTL(1500 * time.Millisecond), WithClock(nil), WithRetryPolicy(nil)} {
		c := defaults()
		if err := o(&c); err == nil {
			t.Error("bad option accepted")
		}
	}
}

func TestDeleteRejectsBeforeReading(t *testing.T) {
	st := &Store{cfg: defaults()}
	if _, err := st.Delete(context.Background(), nil, map[string]any{}, "c"); err == nil {
		t.Fatal("nil table accepted")
	}
}
