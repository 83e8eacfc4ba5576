package suite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/gocql/gocql"
)

func newLog(t testing.TB, s *gocql.Session, ks string, opts ...eventlog.Option) *eventlog.Log {
	t.Helper()
	if err := schema.ApplyTemplate(context.Background(), s, "eventlog", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.New(s, ks, "events", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

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

// TestEventlogAppendUnderDroppedResponses: 20% of the write responses are dropped; N events
// spanning four buckets go in, exactly N come back, in time order.
func TestEventlogAppendUnderDroppedResponses(t *testing.T) {
	s0, ks := node.Keyspace(t)
	newLog(t, s0, ks)
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
			evs = append(evs, eventlog.Event{Time: base.Add(time.Duration(j) * time.Minute), Type: "tick", Payload: []byte(fmt.Sprint(j))})
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
		if got[i].ID != want[i] {
			t.Fatalf("event %d: %s, want %s", i, got[i].ID, want[i])
		}
	}
	t.Logf("%d events in %d buckets; %d responses dropped", len(got), len(buckets), px.Stats().Dropped.Load())
	// Backward, bounded, limited.
	back := readAll(t, l, "s1", eventlog.Backward(), eventlog.Limit(5))
	if len(back) != 5 || back[0].ID != want[n-1] {
		t.Fatalf("backward read: %d events, first %v", len(back), back[0].ID)
	}
	from, to := base.Add(30*time.Minute), base.Add(150*time.Minute)
	mid := readAll(t, l, "s1", eventlog.From(from), eventlog.To(to))
	if len(mid) != 121 || mid[0].Time.Before(from) || mid[len(mid)-1].Time.After(to) {
		t.Fatalf("bounded read: %d events (%v..%v)", len(mid), mid[0].Time, mid[len(mid)-1].Time)
	}
}

// TestEventlogAppendIdempotentAndConcurrent: re-appending events with idempotency keys adds
// nothing; concurrent appenders to one stream lose nothing.
func TestEventlogAppendIdempotentAndConcurrent(t *testing.T) {
	s, ks := node.Keyspace(t)
	l := newLog(t, s, ks)
	ctx := context.Background()
	at := time.Now().Add(-time.Minute)
	keyed := []eventlog.Event{{Time: at, Key: []byte("req-1"), Type: "a"}, {Time: at, Key: []byte("req-2"), Type: "b"}}
	for i := 0; i < 3; i++ {
		if _, err := l.Append(ctx, "keyed", keyed...); err != nil {
			t.Fatal(err)
		}
	}
	if got := readAll(t, l, "keyed"); len(got) != 2 {
		t.Fatalf("re-appended keyed events: %d rows, want 2", len(got))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, err := l.Append(ctx, "shared", eventlog.Event{Time: time.Now(), Type: fmt.Sprint(w)}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := readAll(t, l, "shared")
	per := map[string]int{}
	for _, e := range got {
		per[e.Type]++
	}
	if len(got) != 800 || len(per) != 8 {
		t.Fatalf("concurrent appenders: %d events (%v), want 800", len(got), per)
	}
	sizes, err := l.Sizes(ctx, "shared")
	if err != nil || len(sizes) == 0 || sizes[0].Rows == 0 || sizes[0].TooBig {
		t.Fatalf("sizes %+v %v", sizes, err)
	}
}

// TestEventlogReplayMillionEventsFlatMemory: 1,000,000 events replayed with the heap bounded.
func TestEventlogReplayMillionEventsFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,000,000 events")
	}
	s, ks := node.Keyspace(t)
	l := newLog(t, s, ks, eventlog.WithBucketWidth(time.Hour), eventlog.WithPageSize(2000))
	const n = 1_000_000
	base := time.Now().Add(-30 * time.Hour)
	written := appendMany(t, l, "big", base, n, 30*time.Hour)
	rate, growth, count := replay(t, l, "big")
	t.Logf("wrote %d events (%.0f/s); replayed %d at %.0f events/s, peak heap growth %.1f MB", n, written, count, rate, float64(growth)/(1<<20))
	if count != n {
		t.Fatalf("replayed %d events, want %d", count, n)
	}
	if growth > 16<<20 {
		t.Fatalf("heap grew %d MB during replay, want < 16 MB", growth>>20)
	}
}

// appendMany appends n events spread over span, 100 per call from 16 goroutines, and
// returns events/s.
func appendMany(t testing.TB, l *eventlog.Log, stream string, base time.Time, n int, span time.Duration) float64 {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	step := span / time.Duration(n)
	work := make(chan int, 64)
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := range work {
				evs := make([]eventlog.Event, 0, 100)
				for i := first; i < first+100 && i < n; i++ {
					evs = append(evs, eventlog.Event{Time: base.Add(time.Duration(i) * step), Type: "e", Payload: []byte("payload-0123456789")})
				}
				if _, err := l.Append(context.Background(), stream, evs...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < n; i += 100 {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return float64(n) / time.Since(start).Seconds()
}

// replay reads the whole stream, sampling the heap, and returns events/s, the peak heap
// growth over the starting heap and the count.
func replay(t testing.TB, l *eventlog.Log, stream string) (float64, uint64, int) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, peak := ms.HeapAlloc, ms.HeapAlloc
	start := time.Now()
	count := 0
	var prev gocql.UUID
	for e, err := range l.Read(context.Background(), stream) {
		if err != nil {
			t.Fatal(err)
		}
		if count > 0 && clientid.Compare(prev, e.ID) >= 0 {
			t.Fatalf("replay out of order at %d", count)
		}
		prev = e.ID
		count++
		if count%50_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	growth := uint64(0)
	if peak > baseHeap {
		growth = peak - baseHeap
	}
	return float64(count) / time.Since(start).Seconds(), growth, count
}

// TestEventlogResubmitAfterDroppedResponse: the response to an applied batch of key-less
// events is dropped and the policy may not retry; re-submitting what Append gave back
// must not duplicate the events.
func TestEventlogResubmitAfterDroppedResponse(t *testing.T) {
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

// TestEventlogCallerIDBucketedByItsTime: an event with a caller-supplied id is found by a
// bounded Read around its time, or refused before anything is written.
func TestEventlogCallerIDBucketedByItsTime(t *testing.T) {
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

// TestEventlogIndexOutlivesEventsTTL: on a table with a default TTL, an event appended to a
// bucket later than the first one must stay readable as long as it lives: the bucket's
// index row may not expire before it.
func TestEventlogIndexOutlivesEventsTTL(t *testing.T) {
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
