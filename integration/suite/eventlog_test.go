package suite

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// TestTemplatesApply: every template applies cleanly to Cassandra 5.0, twice.
func TestTemplatesApply(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	for _, tm := range schema.Templates() {
		p := schema.Params{Keyspace: ks}
		if tm.Name == "keyspace" {
			p.Keyspace = ks + "_k"
			t.Cleanup(func() { s.Query(`DROP KEYSPACE IF EXISTS ` + p.Keyspace).Exec() })
		}
		for i := 0; i < 2; i++ {
			if err := schema.ApplyTemplate(ctx, s, tm.Name, p); err != nil {
				t.Fatalf("%s (pass %d): %v", tm.Name, i+1, err)
			}
		}
	}
	km, err := s.KeyspaceMetadata(ks)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"events", "events_buckets", "attributes", "tombstones", "items"} {
		if _, ok := km.Tables[table]; !ok {
			t.Errorf("table %s missing after Apply", table)
		}
	}
	if err := schema.Apply(ctx, s, `CREATE TABLE plain (k int PRIMARY KEY)`); err == nil {
		t.Fatal("Apply ran DDL that is not safe to repeat")
	}
}

// TestApplyConcurrent: several goroutines apply the same schema at once; all succeed
// and the schema agrees.
func TestApplyConcurrent(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- schema.ApplyTemplate(ctx, s, "eventlog", schema.Params{Keyspace: ks})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AwaitSchemaAgreement(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM system_schema.tables WHERE keyspace_name = ?`, ks).Scan(&n); err != nil || n != 2 {
		t.Fatalf("tables in keyspace: %d, %v", n, err)
	}
}

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

// TestAppendUnderDroppedResponses: 20% of the write responses are dropped; N events
// spanning four buckets go in, exactly N come back, in time order.
func TestAppendUnderDroppedResponses(t *testing.T) {
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

// TestAppendIdempotentAndConcurrent: re-appending events with idempotency keys adds
// nothing; concurrent appenders to one stream lose nothing.
func TestAppendIdempotentAndConcurrent(t *testing.T) {
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

// TestReplayMillionEventsFlatMemory: 1,000,000 events replayed with the heap bounded.
func TestReplayMillionEventsFlatMemory(t *testing.T) {
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
