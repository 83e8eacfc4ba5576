package suite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// TestAppendResubmitAfterDroppedResponse: the response to an applied batch of key-less
// events is dropped and the policy may not retry; re-submitting what Append gave back
// must not duplicate the events.
func TestAppendResubmitAfterDroppedResponse(t *testing.T) {
	s0, ks := node.Keyspace(t)
	newLog(t, s0, ks)
	s, px := proxied(t, ks, 300*time.Millisecond)
	l, err := eventlog.New(s, ks, "events", eventlog.WithRetryPolicy(retry.NewPolicy(retry.WithMaxAttempts(1))))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	var evs []eventlog.Event
	for i := 0; i < 5; i++ {
		evs = append(evs, eventlog.Event{Time: base.Add(time.Duration(i) * time.Second), Type: "tick", Payload: []byte(fmt.Sprint(i))})
	}
	ctx := context.Background()
	// Drop the events batch's response (not the index row's).
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("event_id, type")))
	got, err := l.Append(ctx, "s", evs...)
	if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, eventlog.ErrAppendIncomplete) {
		t.Fatalf("append with a dropped response: %v", err)
	}
	if px.Stats().Dropped.Load() != 1 {
		t.Fatalf("%d responses dropped, want 1", px.Stats().Dropped.Load())
	}
	var ae *eventlog.AppendError
	if !errors.As(err, &ae) || len(ae.Events) != len(evs) || len(got) != len(evs) {
		t.Fatalf("the error carries %v, Append returned %d events; want the %d events with their ids", ae, len(got), len(evs))
	}
	for i, e := range ae.Events {
		if e.ID != got[i].ID || e.ID.Time() != e.Time || e.Type != evs[i].Type {
			t.Fatalf("event %d: error carries %+v, Append returned %+v", i, e, got[i])
		}
	}
	if _, err := l.Append(ctx, "s", ae.Events...); err != nil {
		t.Fatal(err)
	}
	read := readAll(t, l, "s")
	if len(read) != len(evs) {
		t.Fatalf("after re-submitting: %d events in the stream, want %d", len(read), len(evs))
	}
	for i, e := range read {
		if e.ID != got[i].ID {
			t.Fatalf("event %d: %s, want %s", i, e.ID, got[i].ID)
		}
	}
}

// TestAppendCallerIDBucketedByItsTime: an event with a caller-supplied id is found by a
// bounded Read around its time, or refused before anything is written.
func TestAppendCallerIDBucketedByItsTime(t *testing.T) {
	s, ks := node.Keyspace(t)
	l := newLog(t, s, ks, eventlog.WithBucketWidth(time.Hour))
	ctx := context.Background()
	at := time.Now().Add(-5 * time.Hour).Truncate(time.Hour).Add(10 * time.Minute)
	idTime := at.Add(-2 * time.Hour) // another bucket
	ev := eventlog.Event{Time: at, ID: clientid.NewTimeUUID(idTime), Type: "x"}
	got, err := l.Append(ctx, "mismatch", ev)
	if err == nil {
		when := got[0].Time
		t.Fatalf("mismatched id accepted: bounded read around its time %v (event time given %v) finds %d events, unbounded %d",
			when, at, len(readAll(t, l, "mismatch", eventlog.From(when.Add(-time.Minute)), eventlog.To(when.Add(time.Minute)))),
			len(readAll(t, l, "mismatch")))
	}
	if !errors.Is(err, eventlog.ErrIDTimeMismatch) {
		t.Fatalf("mismatched id: %v", err)
	}
	if n := len(readAll(t, l, "mismatch")); n != 0 {
		t.Fatalf("refused append wrote %d events", n)
	}
	// An id made from the event's own time (to 100 ns) is accepted and found.
	exact := at.Add(37 * time.Nanosecond)
	ok := eventlog.Event{Time: exact, ID: clientid.NewTimeUUID(exact), Type: "y"}
	if _, err := l.Append(ctx, "match", ok); err != nil {
		t.Fatal(err)
	}
	// With an id and no time, the id's time is the event's.
	if _, err := l.Append(ctx, "match", eventlog.Event{ID: clientid.NewTimeUUID(idTime), Type: "z"}); err != nil {
		t.Fatal(err)
	}
	for _, when := range []time.Time{at, idTime} {
		if n := len(readAll(t, l, "match", eventlog.From(when.Add(-time.Second)), eventlog.To(when.Add(time.Second)))); n != 1 {
			t.Fatalf("bounded read around %v found %d events, want 1", when, n)
		}
	}
}

// TestAppendIndexOutlivesEventsTTL: on a table with a default TTL, an event appended to a
// bucket later than the first one must stay readable as long as it lives: the bucket's
// index row may not expire before it.
func TestAppendIndexOutlivesEventsTTL(t *testing.T) {
	s, ks := node.Keyspace(t)
	const ttl = 4 * time.Second
	if err := schema.ApplyTemplate(context.Background(), s, "eventlog", schema.Params{Keyspace: ks, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.New(s, ks, "events", eventlog.WithBucketWidth(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t1 := time.Now().Truncate(time.Hour).Add(-30 * time.Minute)
	start := time.Now()
	first, err := l.Append(ctx, "s", eventlog.Event{Time: t1, Type: "first"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if _, err := l.Append(ctx, "s", eventlog.Event{Time: t1.Add(time.Second), Type: "second"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(start.Add(ttl + 500*time.Millisecond)))
	var live, secondTTL int
	if err := s.Query(`SELECT COUNT(*) FROM events WHERE stream_id = 's' AND bucket = ?`, first[0].Bucket).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`SELECT TTL(type) FROM events WHERE stream_id = 's' AND bucket = ?`, first[0].Bucket).Scan(&secondTTL); err != nil {
		t.Fatal(err)
	}
	if live != 1 || secondTTL <= 0 {
		t.Fatalf("events alive %d (TTL %d), want the second only: timing off", live, secondTTL)
	}
	var indexRows int
	if err := s.Query(`SELECT COUNT(*) FROM events_buckets WHERE stream_id = 's'`).Scan(&indexRows); err != nil {
		t.Fatal(err)
	}
	read := readAll(t, l, "s")
	if indexRows != 1 || len(read) != 1 || read[0].Type != "second" {
		t.Fatalf("a live event (TTL left %ds): index rows %d, Read found %d events", secondTTL, indexRows, len(read))
	}
}
