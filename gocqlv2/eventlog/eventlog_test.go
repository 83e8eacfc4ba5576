package eventlog

import (
	"errors"
	"fmt"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/clientid"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
)

func TestEventlogNewRejectsBadNames(t *testing.T) {
	for _, tc := range [][2]string{{"", "events"}, {"app", ""}, {"app", `ev"il`}, {"app", "x234567890123456789012345678901234567890123"}} {
		if _, err := New(&gocql.Session{}, tc[0], tc[1]); !errors.Is(err, ErrInvalidName) {
			t.Errorf("New(%q, %q) = %v", tc[0], tc[1], err)
		}
	}
	if _, err := New(&gocql.Session{}, "app", "events", WithBucketWidth(time.Millisecond)); err == nil {
		t.Error("sub-second width accepted")
	}
}

func TestEventlogAppendValidatesBeforeWriting(t *testing.T) {
	// A Log on a zero Session: any attempt to write would fail loudly, so these
	// rejections prove validation happens first.
	l, err := New(&gocql.Session{}, "app", "events", WithMaxPayload(4), WithMaxFuture(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range []struct {
		stream string
		ev     Event
		want   error
	}{
		{"", Event{Time: now}, ErrEmptyStream},
		{"s", Event{}, ErrBadTime},
		{"s", Event{Time: now.Add(time.Hour)}, ErrBadTime},
		{"s", Event{Time: now, Payload: []byte("12345")}, ErrPayloadTooLarge},
		{"s", Event{Time: now, ID: gocql.MustRandomUUID()}, ErrBadTime},
		{"s", Event{ID: gocql.MustRandomUUID()}, ErrBadTime},
		{"s", Event{Time: now, ID: clientid.NewTimeUUID(now.Add(-time.Hour))}, ErrIDTimeMismatch},
		{"s", Event{Time: now, ID: clientid.NewTimeUUID(now.Add(100 * time.Nanosecond))}, ErrIDTimeMismatch},
		{"s", Event{ID: clientid.NewTimeUUID(now.Add(2 * time.Minute))}, ErrBadTime},
	} {
		if _, err := l.Append(t.Context(), tc.stream, Event{Time: now}, tc.ev); !errors.Is(err, tc.want) {
			t.Errorf("Append(%q, %+v) = %v, want %v", tc.stream, tc.ev, err, tc.want)
		}
	}
}

func TestEventlogFold(t *testing.T) {
	base := time.Now()
	mk := func(typ string, off time.Duration, v string) Event {
		id := gocql.UUIDFromTime(base.Add(off * time.Second))
		return Event{Type: typ, ID: id, Payload: []byte(v)}
	}
	evs := []Event{mk("email", 2, "b@x"), mk("name", 1, "Ann"), mk("email", 1, "a@x"), mk("name", 3, "Anne")}
	state, err := Fold(func(yield func(Event, error) bool) {
		for _, e := range evs {
			if !yield(e, nil) {
				return
			}
		}
	})
	if err != nil || string(state["email"].Payload) != "b@x" || string(state["name"].Payload) != "Anne" {
		t.Fatalf("state %v, %v", state, err)
	}
}

func TestEventlogAppendErrorMatches(t *testing.T) {
	ou := &retry.OutcomeUnknownError{Err: errors.New("timeout")}
	var err error = &AppendError{Stream: "s", Events: []Event{{Type: "a"}}, Err: fmt.Errorf("eventlog: append to bucket 1: %w", ou)}
	var ae *AppendError
	if !errors.Is(err, ErrAppendIncomplete) || !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.As(err, &ae) || len(ae.Events) != 1 {
		t.Fatalf("%v does not match", err)
	}
}
