package v2suite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/clientid"
	"github.com/cqlsafe/cqlsafe/gocqlv2/eventlog"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/schema"
)

func readAll(t testing.TB, l *eventlog.Log, stream string, opts ...eventlog.ReadOption) []eventlog.Event {
	t.Helper()
	var out []eventlog.Event
	for e, err := range l.Read(context.Background(), stream, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestV2EventlogAppendUnderDroppedResponses: 20 % of the write responses are dropped;
// 240 events spanning four hour buckets go in through the v2 driver, exactly 240 come
// back in time order, with the ids Append assigned; backward, limited and bounded
// reads hold what they should; Fold keeps the latest event of each type.
func TestV2EventlogAppendUnderDroppedResponses(t *testing.T) {
	s0, ks := node.Keyspace(t)
	if err := schema.ApplyTemplate(context.Background(), s0, "eventlog", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(10), retry.WithBackoff(time.Millisecond, 20*time.Millisecond))
	l, err := eventlog.New(s, ks, "events", eventlog.WithBucketWidth(time.Hour), eventlog.WithRetryPolicy(p), eventlog.WithMaxBatch(7))
	if err != nil {
		t.Fatal(err)
	}
	px.SetRule(faultproxy.DropFraction(0.2, 11, faultproxy.Writes("")))
	base := time.Now().Add(-4 * time.Hour).Truncate(time.Hour)
	const n = 240
	var want []gocql.UUID
	for i := 0; i < n; i += 12 {
		var evs []eventlog.Event
		for j := i; j < i+12; j++ {
			evs = append(evs, eventlog.Event{Time: base.Add(time.Duration(j) * time.Minute), Type: fmt.Sprint("t", j%3), Payload: []byte(fmt.Sprint(j))})
		}
		got, err := l.Append(context.Background(), "s1", evs...)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			want = append(want, e.ID)
		}
	}
	if px.Stats().Dropped.Load() == 0 {
		t.Fatal("no responses dropped")
	}
	px.SetRule(nil)
	got := readAll(t, l, "s1")
	buckets := map[int64]bool{}
	for i, e := range got {
		buckets[e.Bucket] = true
		if i > 0 && clientid.Compare(got[i-1].ID, e.ID) >= 0 {
			t.Fatalf("out of order at %d", i)
		}
	}
	if len(got) != n || len(buckets) < 3 {
		t.Fatalf("read %d events in %d buckets, want %d in >= 3", len(got), len(buckets), n)
	}
	for i := range want {
		if got[i].ID != want[i] || string(got[i].Payload) != fmt.Sprint(i) {
			t.Fatalf("event %d: %s %q, want %s %q", i, got[i].ID, got[i].Payload, want[i], fmt.Sprint(i))
		}
	}
	t.Logf("%d events in %d buckets; %d responses dropped", len(got), len(buckets), px.Stats().Dropped.Load())
	back := readAll(t, l, "s1", eventlog.Backward(), eventlog.Limit(5))
	if len(back) != 5 || back[0].ID != want[n-1] {
		t.Fatalf("backward read: %d events, first %v", len(back), back[0].ID)
	}
	from, to := base.Add(30*time.Minute), base.Add(150*time.Minute)
	mid := readAll(t, l, "s1", eventlog.From(from), eventlog.To(to))
	if len(mid) != 121 || mid[0].Time.Before(from) || mid[len(mid)-1].Time.After(to) {
		t.Fatalf("bounded read: %d events (%v..%v)", len(mid), mid[0].Time, mid[len(mid)-1].Time)
	}
	state, err := eventlog.Fold(l.Read(context.Background(), "s1"))
	if err != nil || len(state) != 3 || string(state["t2"].Payload) != fmt.Sprint(n-1) {
		t.Fatalf("fold: %d types, t2 = %q (%v); want 3 types, t2 = %q", len(state), state["t2"].Payload, err, fmt.Sprint(n-1))
	}
}

// TestV2EventlogResubmitAfterDroppedResponse: the events batch's response is dropped and
// not retried (one attempt): Append returns an AppendError carrying the events with
// their ids; re-submitting them appends each event once.
func TestV2EventlogResubmitAfterDroppedResponse(t *testing.T) {
	s0, ks := node.Keyspace(t)
	if err := schema.ApplyTemplate(context.Background(), s0, "eventlog", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	s, px := proxied(t, ks, 300*time.Millisecond)
	l, err := eventlog.New(s, ks, "events", eventlog.WithRetryPolicy(retry.NewPolicy(retry.WithMaxAttempts(1))))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	var evs []eventlog.Event
	for i := range 5 {
		evs = append(evs, eventlog.Event{Time: base.Add(time.Duration(i) * time.Second), Type: "tick", Payload: []byte(fmt.Sprint(i))})
	}
	ctx := context.Background()
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
	var wt int64
	if err := s0.Query(`SELECT WRITETIME(type) FROM events WHERE stream_id = 's' AND bucket = ? AND event_id = ?`,
		read[0].Bucket, [16]byte(read[0].ID)).Scan(&wt); err != nil {
		t.Fatal(err)
	}
	if wt != read[0].Time.UnixMicro() {
		t.Fatalf("WRITETIME %d, want the event time %d", wt, read[0].Time.UnixMicro())
	}
}

// TestV2EventlogIndexOutlivesEventsTTL: on a table with a default_time_to_live (4 s),
// read by the v2 adapter, the bucket's index row is written with the events' TTL plus
// a margin: after the first event expired, the index row and the second event are
// still there and Read finds it.
func TestV2EventlogIndexOutlivesEventsTTL(t *testing.T) {
	s0, ks := node.Keyspace(t)
	const ttl = 4 * time.Second
	if err := schema.ApplyTemplate(context.Background(), s0, "eventlog", schema.Params{Keyspace: ks, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
	s, _ := proxied(t, ks, 5*time.Second)
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
	var live, secondTTL, indexRows int
	if err := s0.Query(`SELECT COUNT(*) FROM events WHERE stream_id = 's' AND bucket = ?`, first[0].Bucket).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if err := s0.Query(`SELECT TTL(type) FROM events WHERE stream_id = 's' AND bucket = ?`, first[0].Bucket).Scan(&secondTTL); err != nil {
		t.Fatal(err)
	}
	if live != 1 || secondTTL <= 0 {
		t.Fatalf("events alive %d (TTL %d), want the second only: timing off", live, secondTTL)
	}
	if err := s0.Query(`SELECT COUNT(*) FROM events_buckets WHERE stream_id = 's'`).Scan(&indexRows); err != nil {
		t.Fatal(err)
	}
	read := readAll(t, l, "s")
	if indexRows != 1 || len(read) != 1 || read[0].Type != "second" {
		t.Fatalf("a live event (TTL left %ds): index rows %d, Read found %d events", secondTTL, indexRows, len(read))
	}
}
