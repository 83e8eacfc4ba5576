package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

func policy() *retry.Policy {
	return retry.NewPolicy(retry.WithMaxAttempts(8), retry.WithBackoff(20*time.Millisecond, 500*time.Millisecond), retry.WithTimeoutsOnNextHost())
}

// TestOverwriteWhileNodeKilled: a stream of overwrites at QUORUM while one node is
// killed (SIGKILL) and restarted. Every row must end at its last acknowledged overwrite
// or a later one whose outcome was unknown, with no mix of two overwrites' columns.
func TestOverwriteWhileNodeKilled(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	ctx := context.Background()
	e.exec(t, `CREATE TABLE shapes (id int PRIMARY KEY, a text, b text, c text, gen int)`)
	tbl, err := overwrite.Describe(ctx, e.s, e.ks, "shapes")
	if err != nil {
		t.Fatal(err)
	}
	p := policy()
	overwriteWhileNodeKilled(t, e, "1. overwrite.Row stream at QUORUM", func(ctx context.Context, row map[string]any) error {
		_, err := overwrite.Row(ctx, e.s, tbl, row, overwrite.WithRetryPolicy(p))
		return err
	})
}

// overwriteWhileNodeKilled is the overwrite scenario on one driver: 4 writers overwrite
// 40 rows of shapes (id, a, b, c, gen) 30 times each through write (an even generation
// sets a, an odd one b and c) while node 2 is killed (SIGKILL) for 4 s and restarted.
// Every row must end at its last acknowledged overwrite or a later one whose outcome was
// unknown, with no mix of two overwrites' columns; the errors of the overwrites not
// acknowledged are logged by kind.
func overwriteWhileNodeKilled(t *testing.T, e *env, scenario string, write func(ctx context.Context, row map[string]any) error) {
	t.Helper()
	ctx := context.Background()
	const rows, gens, writers = 40, 30, 4
	type state struct {
		mu      sync.Mutex
		acked   int
		unknown map[int]bool
	}
	st := make([]state, rows)
	for i := range st {
		st[i].unknown = map[int]bool{}
	}
	var attempted, acked atomic.Int64
	var lat latencies
	var errMu sync.Mutex
	errKinds := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for g := 1; g <= gens; g++ {
				for id := w; id < rows; id += writers {
					row := map[string]any{"id": id, "gen": g}
					if g%2 == 0 {
						row["a"] = fmt.Sprint("a", g)
					} else {
						row["b"], row["c"] = fmt.Sprint("b", g), fmt.Sprint("c", g)
					}
					attempted.Add(1)
					t0 := time.Now()
					err := write(ctx, row)
					st[id].mu.Lock()
					if err == nil {
						acked.Add(1)
						lat.add(time.Since(t0))
						st[id].acked = g
					} else {
						st[id].unknown[g] = true
						errMu.Lock()
						errKinds[stamp.ReplaceAllString(err.Error(), "")]++
						errMu.Unlock()
					}
					st[id].mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}(w)
	}
	time.Sleep(3 * time.Second)
	if err := cluster.Kill(ctx, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if err := cluster.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for msg, k := range errKinds {
		t.Logf("%d overwrite(s) not acknowledged: %s", k, msg)
	}
	var lost, mixed int64
	iter := e.direct.Query(`SELECT id, a, b, c, gen FROM shapes`).Iter()
	var id, gen int
	var a, b, c *string
	seen := make([]bool, rows)
	for iter.Scan(&id, &a, &b, &c, &gen) {
		seen[id] = true
		s := &st[id]
		if gen < s.acked || (gen > s.acked && !s.unknown[gen]) {
			lost++
			t.Errorf("row %d at gen %d; last acknowledged %d", id, gen, s.acked)
		}
		even := a != nil && b == nil && c == nil
		odd := a == nil && b != nil && c != nil
		if (gen%2 == 0 && !even) || (gen%2 == 1 && !odd) {
			mixed++
			t.Errorf("row %d mixes overwrites: a=%v b=%v c=%v gen=%d", id, a, b, c, gen)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	for id, ok := range seen {
		// A row none of whose overwrites was acknowledged may be missing (each may have
		// failed); one with an acknowledged overwrite must be there.
		if !ok && st[id].acked > 0 {
			lost++
			t.Errorf("row %d is missing; its overwrite of gen %d was acknowledged", id, st[id].acked)
		}
	}
	result{scenario, attempted.Load(), acked.Load(), lost, mixed,
		"node 2 killed (SIGKILL) for 4 s, then restarted", lat.p99()}.log(t)
}

// TestEventlogWritersWithDropsAndPause: 4 writers append to one stream with 10% of
// write responses dropped and one node paused for 5 s. Every event exactly once, in
// order per writer.
func TestEventlogWritersWithDropsAndPause(t *testing.T) {
	e := newEnv(t, 1*time.Second)
	ctx := context.Background()
	if err := schema.ApplyTemplate(ctx, e.direct, "eventlog", schema.Params{Keyspace: e.ks, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.New(e.s, e.ks, "events", eventlog.WithBucketWidth(time.Hour), eventlog.WithRetryPolicy(policy()))
	if err != nil {
		t.Fatal(err)
	}
	eventlogUnderDropsAndPause(t, e, "2. eventlog.Append, 4 writers",
		func(ctx context.Context, evs []appended) error {
			out := make([]eventlog.Event, len(evs))
			for i, ev := range evs {
				out[i] = eventlog.Event{Time: ev.at, Key: []byte(ev.key), Type: "e", Payload: []byte(ev.payload), Writer: ev.writer}
			}
			_, err := l.Append(ctx, "stream", out...)
			return err
		},
		func(ctx context.Context, yield func(writer, payload string) bool) error {
			for ev, err := range l.Read(ctx, "stream") {
				if err != nil {
					return err
				}
				if !yield(ev.Writer, string(ev.Payload)) {
					break
				}
			}
			return nil
		})
}

// appended is one event of eventlogUnderDropsAndPause, for either driver's Log.
type appended struct {
	at                   time.Time
	key, payload, writer string
}

// eventlogUnderDropsAndPause is the eventlog scenario on one driver's Log: 4 writers
// append keyed events through add (re-appending is idempotent) with 10% of write
// responses dropped and node 3 paused for 5 s; read then walks the stream (writer and
// payload of each event, in order). Every acknowledged event exactly once, in order per
// writer.
func eventlogUnderDropsAndPause(t *testing.T, e *env, scenario string, add func(context.Context, []appended) error,
	read func(ctx context.Context, yield func(writer, payload string) bool) error) {
	t.Helper()
	ctx := context.Background()
	e.setRule(faultproxy.DropFraction(0.10, 42, faultproxy.Writes("")))
	const writers, perWriter = 4, 150
	var attempted, acked atomic.Int64
	var lat latencies
	base := time.Now().Add(-2 * time.Hour)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i += 5 {
				var evs []appended
				for j := i; j < i+5; j++ {
					at := base.Add(time.Duration(j)*time.Second + time.Duration(w)*time.Millisecond)
					evs = append(evs, appended{at: at, key: fmt.Sprintf("w%d-%d", w, j), payload: fmt.Sprint(j), writer: fmt.Sprint("w", w)})
				}
				attempted.Add(int64(len(evs)))
				t0 := time.Now()
				for try := 0; ; try++ { // keyed events: re-appending is idempotent
					if err := add(ctx, evs); err == nil {
						break
					} else if try == 20 {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				lat.add(time.Since(t0))
				acked.Add(int64(len(evs)))
			}
		}(w)
	}
	time.Sleep(2 * time.Second)
	if err := cluster.Pause(ctx, 2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if err := cluster.Resume(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	e.setRule(nil)
	count := map[string]int{}
	last := map[string]int{}
	var dups, outOfOrder int64
	err := read(ctx, func(writer, payload string) bool {
		k := writer + "/" + payload
		count[k]++
		if count[k] > 1 {
			dups++
		}
		var seq int
		fmt.Sscan(payload, &seq)
		if prev, ok := last[writer]; ok && seq <= prev {
			outOfOrder++
		}
		last[writer] = seq
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	lost := acked.Load() - int64(len(count))
	if e.dropped() == 0 {
		t.Error("no response was dropped: the fault was not injected")
	}
	if lost != 0 || dups != 0 || outOfOrder != 0 {
		t.Errorf("lost %d, duplicated %d, out of order %d", lost, dups, outOfOrder)
	}
	result{scenario, attempted.Load(), acked.Load(), lost, dups,
		fmt.Sprintf("10%% of write responses dropped (%d), node 3 paused (SIGSTOP) 5 s", e.dropped()), lat.p99()}.log(t)
}

// TestDoUnderConnectionResets: two-statement workflows through retry.Do while every
// client connection is reset every 100 ms. Each acknowledged workflow's two rows exist
// exactly once.
func TestDoUnderConnectionResets(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	e.exec(t, `CREATE TABLE events (id uuid PRIMARY KEY, user_id int)`,
		`CREATE TABLE user_events (user_id int, event_id uuid, PRIMARY KEY (user_id, event_id))`)
	doUnderResets(t, e, "3. retry.Do two-statement workflows", func(ctx context.Context, id gocql.UUID, user int) error {
		return retry.Do(ctx, func(ctx context.Context) error {
			if err := retry.Exec(ctx, e.s.Query(`INSERT INTO events (id, user_id) VALUES (?, ?)`, id, user)); err != nil {
				return err
			}
			return retry.Exec(ctx, e.s.Query(`INSERT INTO user_events (user_id, event_id) VALUES (?, ?)`, user, id))
		}, retry.WithMaxAttempts(10), retry.WithBackoff(20*time.Millisecond, 300*time.Millisecond), retry.WithTimeoutsOnNextHost())
	})
}

// stamp is what differs between two errors of one kind: the timestamp, a local port.
var stamp = regexp.MustCompile(`\(timestamp \d+\)|127\.0\.0\.1:\d+->`)

// doUnderResets is the Do scenario on one driver: 400 workflows (workflow writes event
// id into events and user_events, 8 at a time) while every client connection is reset
// every 100 ms. Each acknowledged workflow's two rows exist exactly once, and no row
// twice; the errors of the others are logged by kind.
func doUnderResets(t *testing.T, e *env, scenario string, workflow func(ctx context.Context, id gocql.UUID, user int) error) {
	t.Helper()
	ctx := context.Background()
	stop := make(chan struct{})
	var resets atomic.Int64
	go func() {
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				for _, p := range e.proxies {
					p.ResetAll()
				}
				resets.Add(1)
			}
		}
	}()
	const workflows = 400
	ids := make([]gocql.UUID, workflows)
	var attempted, acked atomic.Int64
	ok := make([]bool, workflows)
	var lat latencies
	var wg sync.WaitGroup
	var errMu sync.Mutex
	errKinds := map[string]int{}
	sem := make(chan struct{}, 8)
	for i := 0; i < workflows; i++ {
		ids[i] = clientid.NewTimeUUID(time.Now())
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			attempted.Add(1)
			t0 := time.Now()
			if err := workflow(ctx, ids[i], i%10); err != nil {
				errMu.Lock()
				errKinds[stamp.ReplaceAllString(err.Error(), "")]++
				errMu.Unlock()
				return
			}
			acked.Add(1)
			ok[i] = true
			lat.add(time.Since(t0))
		}(i)
	}
	wg.Wait()
	close(stop)
	for msg, k := range errKinds {
		t.Logf("%d workflow(s) not acknowledged: %s", k, msg)
	}
	var lost, dups int64
	for i, id := range ids {
		var n1, n2 int
		if err := e.direct.Query(`SELECT COUNT(*) FROM events WHERE id = ?`, id).Scan(&n1); err != nil {
			t.Fatal(err)
		}
		if err := e.direct.Query(`SELECT COUNT(*) FROM user_events WHERE user_id = ? AND event_id = ?`, i%10, id).Scan(&n2); err != nil {
			t.Fatal(err)
		}
		if ok[i] && (n1 != 1 || n2 != 1) {
			lost++
		}
		if n1 > 1 || n2 > 1 {
			dups++
		}
	}
	if lost != 0 || dups != 0 || acked.Load() == 0 || resets.Load() == 0 {
		t.Errorf("acked %d, lost %d, duplicated %d, resets %d", acked.Load(), lost, dups, resets.Load())
	}
	result{scenario, attempted.Load(), acked.Load(), lost, dups,
		fmt.Sprintf("all connections reset every 100 ms (%d resets)", resets.Load()), lat.p99()}.log(t)
}

// TestTombstoneRacingWritesUnderLatency: deletes through the tombstone store race
// writes with pinned timestamps under 20 ms of added latency. Afterwards every row holds
// exactly what Cassandra's rule says: the newest write newer than the newest delete.
func TestTombstoneRacingWritesUnderLatency(t *testing.T) {
	e := newEnv(t, 3*time.Second)
	ctx := context.Background()
	e.exec(t, `CREATE TABLE items (id int PRIMARY KEY, v int)`)
	if err := schema.ApplyTemplate(ctx, e.direct, "tombstones", schema.Params{Keyspace: e.ks, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	tbl, err := overwrite.Describe(ctx, e.s, e.ks, "items")
	if err != nil {
		t.Fatal(err)
	}
	store, err := tombstone.New(ctx, e.s, e.ks, "tombstones", tombstone.WithRetryPolicy(policy()))
	if err != nil {
		t.Fatal(err)
	}
	tombstoneRacingWrites(t, e, "4. tombstone.Delete racing writes", racingOps{
		seed: func(id, v int, ts int64) error {
			return e.s.Query(`INSERT INTO items (id, v) VALUES (?, ?)`, id, v).WithTimestamp(ts).Exec()
		},
		write: func(ctx context.Context, id, v int) (int64, error) {
			pol := policy()
			ts := pol.Clock().Next()
			return ts, pol.Exec(ctx, e.s.Query(`UPDATE items SET v = ? WHERE id = ?`, v, id), retry.AtTimestamp(ts))
		},
		delete: func(ctx context.Context, id int, commandID string) (int64, error) {
			rec, err := store.Delete(ctx, tbl, map[string]any{"id": id}, commandID)
			return rec.Timestamp, err
		},
	})
}

// racingOps is one driver's side of tombstoneRacingWrites, on the table items (id int
// PRIMARY KEY, v int).
type racingOps struct {
	// seed writes v into row id at timestamp ts.
	seed func(id, v int, ts int64) error
	// write sets v of row id through a retry policy at a timestamp it pins, and returns it.
	write func(ctx context.Context, id, v int) (ts int64, err error)
	// delete deletes row id through the tombstone store and returns the delete's
	// timestamp (Record.Timestamp); tombstone.ErrNoRow when there is no row.
	delete func(ctx context.Context, id int, commandID string) (ts int64, err error)
}

// tombstoneRacingWrites is the tombstone scenario on one driver: 20 seeded rows, 3
// writers setting v 60 times each at pinned timestamps and 2 deleters deleting 25 times
// each through the store, under 20 ms of added latency each way. Afterwards every row
// holds exactly what Cassandra's rule says: the newest write newer than the newest
// delete (a tombstone shadows cells at or below its timestamp).
func tombstoneRacingWrites(t *testing.T, e *env, scenario string, ops racingOps) {
	t.Helper()
	ctx := context.Background()
	for _, p := range e.proxies {
		p.SetLatency(20 * time.Millisecond)
	}
	const rows = 20
	clock := clientid.ProcessClock()
	type write struct {
		ts int64
		v  int
	}
	var mu sync.Mutex
	writes := make([][]write, rows)
	deletes := make([][]int64, rows)
	for id := 0; id < rows; id++ {
		ts := clock.Next()
		if err := ops.seed(id, 0, ts); err != nil {
			t.Fatal(err)
		}
		writes[id] = append(writes[id], write{ts, 0})
	}
	var attempted, acked atomic.Int64
	var lat latencies
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 1; i <= 60; i++ {
				id := rng.IntN(rows)
				v := w*1000 + i
				attempted.Add(1)
				t0 := time.Now()
				if ts, err := ops.write(ctx, id, v); err == nil {
					acked.Add(1)
					lat.add(time.Since(t0))
					mu.Lock()
					writes[id] = append(writes[id], write{ts, v})
					mu.Unlock()
				}
			}
		}(w)
	}
	for d := 0; d < 2; d++ {
		wg.Add(1)
		go func(d int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				id := (i*7 + d*3) % rows
				attempted.Add(1)
				t0 := time.Now()
				ts, err := ops.delete(ctx, id, fmt.Sprintf("deleter-%d-%d", d, i))
				if errors.Is(err, tombstone.ErrNoRow) {
					continue
				}
				if err != nil {
					t.Errorf("delete: %v", err)
					continue
				}
				acked.Add(1)
				lat.add(time.Since(t0))
				mu.Lock()
				deletes[id] = append(deletes[id], ts)
				mu.Unlock()
			}
		}(d)
	}
	wg.Wait()
	for _, p := range e.proxies {
		p.SetLatency(0)
	}
	var lost, wrong int64
	for id := 0; id < rows; id++ {
		var maxDel int64
		for _, d := range deletes[id] {
			maxDel = max(maxDel, d)
		}
		want := -1
		var wantTS int64
		for _, w := range writes[id] {
			if w.ts > maxDel && w.ts > wantTS {
				want, wantTS = w.v, w.ts
			}
		}
		var v *int
		err := e.direct.Query(`SELECT v FROM items WHERE id = ?`, id).Scan(&v)
		got := -1
		if err == nil && v != nil {
			got = *v
		} else if err != nil && !errors.Is(err, gocql.ErrNotFound) {
			t.Fatal(err)
		}
		if got != want {
			if want >= 0 {
				lost++
			} else {
				wrong++
			}
			t.Errorf("row %d: v=%d, want %d (newest write %d, newest delete %d)", id, got, want, wantTS, maxDel)
		}
	}
	result{scenario, attempted.Load(), acked.Load(), lost, wrong,
		"20 ms latency each way on every connection", lat.p99()}.log(t)
}
