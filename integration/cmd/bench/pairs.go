package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

// env is what every pair shares: the node, a keyspace, a session.
type env struct {
	node    *harness.Node
	s       *gocql.Session
	ks      string
	quick   bool
	kmRows  int
	workers int
}

func (e *env) exec(ctx context.Context, stmts ...string) error {
	for _, st := range stmts {
		if err := e.s.Query(st).WithContext(ctx).Exec(); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
	}
	return e.s.AwaitSchemaAgreement(ctx)
}

// flush flushes the whole benchmark keyspace (nodetool flush via CQLSAFE_NODETOOL).
func (e *env) flush(ctx context.Context) error {
	_, err := e.node.Nodetool(ctx, "flush", e.ks)
	return err
}

func (e *env) n(full, quick int) int {
	if e.quick {
		return quick
	}
	return full
}

// partition is a key no other round or side uses: fresh partitions every round.
func partition(r, side, i int) int { return (r*4+side)*10_000_000 + i }

// wideCols are the 20 columns given of t40's 40.
func wideCols() []string {
	cols := []string{"id", "seq"}
	for i := 1; i <= 20; i++ {
		cols = append(cols, fmt.Sprintf("c%02d", i))
	}
	return cols
}

func wideRow(id int) map[string]any {
	row := map[string]any{"id": id, "seq": 0}
	for i := 1; i <= 20; i++ {
		row[fmt.Sprintf("c%02d", i)] = fmt.Sprintf("value %d", i)
	}
	return row
}

// overwritePairs: overwrite.Row against a raw INSERT of the same 20 columns, and
// against the physical floor — the same unlogged DELETE at N + INSERT at N+1 batch,
// built by hand from the statements overwrite.Row was seen to send.
func overwritePairs(ctx context.Context, e *env) ([]*pair, error) {
	cols := make([]string, 40)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%02d text", i+1)
	}
	if err := e.exec(ctx, fmt.Sprintf(`CREATE TABLE t40 (id int, seq int, %s, PRIMARY KEY (id, seq))`, strings.Join(cols, ", "))); err != nil {
		return nil, err
	}
	tbl, err := overwrite.Describe(ctx, e.s, e.ks, "t40")
	if err != nil {
		return nil, err
	}
	pol := retry.NewPolicy()
	given := wideCols()
	rawCQL := fmt.Sprintf(`INSERT INTO t40 (%s) VALUES (%s)`, strings.Join(given, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(given)), ", "))
	del, ins, insCols, err := observeOverwrite(ctx, e, tbl)
	if err != nil {
		return nil, err
	}
	row := func() side {
		return side{name: "overwrite.Row", workers: e.workers, prepare: func(_ context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			rows := make([]map[string]any, n) // built before the clock starts: only the client's work is measured
			for i := range rows {
				rows[i] = wideRow(partition(r, 0, i))
			}
			return func(ctx context.Context, i int) error {
				_, err := overwrite.Row(ctx, e.s, tbl, rows[i], overwrite.WithRetryPolicy(pol))
				return err
			}, nil, nil
		}}
	}
	raw := side{name: "raw INSERT", workers: e.workers, prepare: func(_ context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
		vals := make([][]any, n)
		for i := range vals {
			row := wideRow(partition(r, 1, i))
			vals[i] = make([]any, len(given))
			for k, c := range given {
				vals[i][k] = row[c]
			}
		}
		return func(ctx context.Context, i int) error {
			return e.s.Query(rawCQL, vals[i]...).WithContext(ctx).Exec()
		}, nil, nil
	}}
	floor := side{name: "raw DELETE N + INSERT N+1 batch", workers: e.workers, prepare: func(_ context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
		type input struct {
			key  [2]any
			vals []any
		}
		in := make([]input, n)
		for i := range in {
			row := wideRow(partition(r, 2, i))
			vals := make([]any, 0, len(insCols)+2)
			for _, c := range insCols {
				if v, ok := row[c]; ok {
					vals = append(vals, v)
				} else {
					vals = append(vals, gocql.UnsetValue)
				}
			}
			in[i] = input{key: [2]any{row["id"], row["seq"]}, vals: append(vals, gocql.UnsetValue, nil)} // USING TTL (unset: the table default) AND TIMESTAMP
		}
		return func(ctx context.Context, i int) error {
			n := pol.Clock().Reserve(2)
			vals := in[i].vals
			vals[len(vals)-1] = n + 1
			b := e.s.NewBatch(gocql.UnloggedBatch).WithContext(ctx)
			b.Entries = make([]gocql.BatchEntry, 0, 2)
			b.Query(del, n, in[i].key[0], in[i].key[1])
			b.Query(ins, vals...)
			b.WithTimestamp(n + 1)
			return e.s.ExecuteBatch(b)
		}, nil, nil
	}}
	n := e.n(10_000, 400)
	return []*pair{
		{key: "overwrite_vs_insert", title: "`overwrite.Row` (20 of 40 columns) vs prepared INSERT of the same 20 columns", a: row(), b: raw, n: n, flush: e.flush,
			targets: []target{
				{"throughput ≥ 0.95× raw INSERT", func(r result) bool { return spreadOf(r.ratios()).median >= 0.95 }},
			}},
		{key: "overwrite_vs_floor", title: "`overwrite.Row` vs the physical floor: a hand-built unlogged batch of the same DELETE at N + INSERT at N+1", a: row(), b: floor, n: n, flush: e.flush,
			targets: []target{
				{"throughput ≥ 1.00× the floor", func(r result) bool { return spreadOf(r.ratios()).median >= 1.00 }},
				{"client allocations ≤ the floor's + 4", func(r result) bool { return r.allocExtra() <= 4 }},
			}},
	}, nil
}

// batchCapture is a BatchObserver keeping the first batch it sees.
type batchCapture struct {
	mu    sync.Mutex
	stmts []string
}

func (c *batchCapture) ObserveBatch(_ context.Context, b gocql.ObservedBatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stmts == nil {
		c.stmts = append([]string(nil), b.Statements...)
	}
}

// observeOverwrite runs one overwrite.Row on a session that observes batches and
// returns the DELETE and INSERT texts it sent and the INSERT's column list, so the floor
// sends exactly the same statements.
func observeOverwrite(ctx context.Context, e *env, tbl *overwrite.Table) (del, ins string, cols []string, err error) {
	cl := e.node.Cluster(e.ks)
	capture := &batchCapture{}
	cl.BatchObserver = capture
	s, err := cl.CreateSession()
	if err != nil {
		return "", "", nil, err
	}
	defer s.Close()
	if _, err := overwrite.Row(ctx, s, tbl, wideRow(-1)); err != nil {
		return "", "", nil, err
	}
	capture.mu.Lock()
	stmts := capture.stmts
	capture.mu.Unlock()
	if len(stmts) != 2 || !strings.HasPrefix(stmts[0], "DELETE") || !strings.HasPrefix(stmts[1], "INSERT") {
		return "", "", nil, fmt.Errorf("overwrite.Row sent %q: not DELETE + INSERT", stmts)
	}
	open, closing := strings.Index(stmts[1], "("), strings.Index(stmts[1], ")")
	if open < 0 || closing < open {
		return "", "", nil, fmt.Errorf("no column list in %q", stmts[1])
	}
	for _, c := range strings.Split(stmts[1][open+1:closing], ",") {
		cols = append(cols, strings.Trim(strings.TrimSpace(c), `"`))
	}
	if !strings.Contains(stmts[1], "USING TTL ? AND TIMESTAMP ?") || strings.Count(stmts[0], "?") != 3 {
		return "", "", nil, fmt.Errorf("overwrite.Row's statements changed shape (%q, %q): update the floor", stmts[0], stmts[1])
	}
	return stmts[0], stmts[1], cols, nil
}

// appendPair: eventlog.Append of one event against a raw INSERT of the same row.
func appendPair(ctx context.Context, e *env) (*pair, error) {
	if err := schema.ApplyTemplate(ctx, e.s, "eventlog", schema.Params{Keyspace: e.ks}); err != nil {
		return nil, err
	}
	l, err := eventlog.New(e.s, e.ks, "events")
	if err != nil {
		return nil, err
	}
	payload := []byte("payload-0123456789")
	insert := `INSERT INTO events (stream_id, bucket, event_id, type, payload, writer) VALUES (?, ?, ?, ?, ?, ?)`
	var seq atomic.Int64
	return &pair{key: "append_vs_insert", title: "`eventlog.Append` (1 event) vs raw INSERT of the same row", n: e.n(10_000, 400), flush: e.flush,
		a: side{name: "eventlog.Append", workers: e.workers, prepare: func(_ context.Context, r, _ int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			stream := fmt.Sprintf("append-r%d", r)
			return func(ctx context.Context, _ int) error {
				_, err := l.Append(ctx, stream, eventlog.Event{Time: time.Now(), Type: "e", Payload: payload, Writer: "w"})
				return err
			}, nil, nil
		}},
		b: side{name: "raw INSERT", workers: e.workers, prepare: func(_ context.Context, r, _ int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			stream := fmt.Sprintf("raw-r%d", r)
			return func(ctx context.Context, _ int) error {
				at := time.Now().Add(time.Duration(seq.Add(1)))
				bucket, _ := clientid.Bucket(at, 24*time.Hour)
				return e.s.Query(insert, stream, bucket, clientid.NewTimeUUID(at), "e", payload, "w").WithContext(ctx).Exec()
			}, nil, nil
		}},
	}, nil
}

// execPair: retry.Policy.Exec of an idempotent INSERT against the raw gocql Exec of the
// same statement with a client timestamp and the idempotent flag — what a careful
// hand-written write sends. The difference is the Policy's work: the verdict (cached),
// the pinned timestamp, the per-execution retry policy.
func execPair(ctx context.Context, e *env) (*pair, error) {
	if err := e.exec(ctx, `CREATE TABLE kv (id bigint PRIMARY KEY, v text, n int)`); err != nil {
		return nil, err
	}
	const insert = `INSERT INTO kv (id, v, n) VALUES (?, ?, ?)`
	pol := retry.NewPolicy()
	var seq atomic.Int64
	return &pair{key: "exec_vs_raw", title: "`retry.Policy.Exec` of an idempotent INSERT vs raw gocql Exec with a client timestamp", n: e.n(10_000, 400), flush: e.flush,
		targets: []target{
			{"throughput ≥ 0.98× raw Exec", func(r result) bool { return spreadOf(r.ratios()).median >= 0.98 }},
			{"client allocations ≤ raw's + 4", func(r result) bool { return r.allocExtra() <= 4 }},
		},
		a: side{name: "Policy.Exec", workers: e.workers, prepare: func(context.Context, int, int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			return func(ctx context.Context, _ int) error {
				return pol.Exec(ctx, e.s.Query(insert, seq.Add(1), "value-0123456789", 7))
			}, nil, nil
		}},
		b: side{name: "raw Exec", workers: e.workers, prepare: func(context.Context, int, int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			return func(ctx context.Context, _ int) error {
				return e.s.Query(insert, seq.Add(1), "value-0123456789", 7).WithContext(ctx).
					Idempotent(true).WithTimestamp(pol.Clock().Next()).Exec()
			}, nil, nil
		}},
	}, nil
}

// tombstonePair: tombstone.Delete against a plain DELETE of the same kind of row; the
// rows are inserted before each side's run (untimed).
func tombstonePair(ctx context.Context, e *env) (*pair, error) {
	if err := e.exec(ctx, `CREATE TABLE accounts (org text, id int, name text, balance bigint, active boolean, avatar blob,
		tags set<text>, history frozen<list<int>>, opened timestamp, ref uuid, PRIMARY KEY (org, id))`); err != nil {
		return nil, err
	}
	if err := schema.ApplyTemplate(ctx, e.s, "tombstones", schema.Params{Keyspace: e.ks}); err != nil {
		return nil, err
	}
	tbl, err := overwrite.Describe(ctx, e.s, e.ks, "accounts")
	if err != nil {
		return nil, err
	}
	st, err := tombstone.New(ctx, e.s, e.ks, "tombstones")
	if err != nil {
		return nil, err
	}
	fill := func(ctx context.Context, org string, n int) error {
		_, err := parallel(ctx, n, 32, func(ctx context.Context, i int) error {
			//cqlsafe:ignore list-assignment history is frozen<list<int>>
			return e.s.Query(`INSERT INTO accounts (org, id, name, balance, active, avatar, tags, history, opened, ref) VALUES (?, ?, 'name-0123456789', 100, true, 0xCAFE, {'a', 'b'}, [1, 2], '2026-01-02', 5c7f3f8e-4a4e-4c4e-9f0e-8b3c2d1e0f00)`,
				org, i).WithContext(ctx).Exec()
		})
		return err
	}
	n := e.n(3_000, 200)
	return &pair{key: "tombstone_vs_delete", title: "`tombstone.Delete` vs plain DELETE", n: n, flush: e.flush,
		a: side{name: "tombstone.Delete", workers: e.workers, prepare: func(ctx context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			org := fmt.Sprintf("ts-r%d", r)
			if err := fill(ctx, org, n); err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context, i int) error {
				_, err := st.Delete(ctx, tbl, map[string]any{"org": org, "id": i}, "bench")
				return err
			}, nil, nil
		}},
		b: side{name: "plain DELETE", workers: e.workers, prepare: func(ctx context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			org := fmt.Sprintf("plain-r%d", r)
			if err := fill(ctx, org, n); err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context, i int) error {
				return e.s.Query(`DELETE FROM accounts WHERE org = ? AND id = ?`, org, i).WithContext(ctx).Exec()
			}, nil, nil
		}},
	}, nil
}

// proxiedSession is a session whose every connection goes through a fault proxy; with
// hedge, hosts are picked through retry.HedgingHosts.
func proxiedSession(e *env, timeout time.Duration, hedge bool) (*gocql.Session, *faultproxy.Proxy, error) {
	px, err := faultproxy.Start(e.node.Hosts()[0])
	if err != nil {
		return nil, nil, err
	}
	cl, err := e.node.ClusterVia(px.Addr(), e.ks)
	if err != nil {
		px.Close()
		return nil, nil, err
	}
	cl.Timeout = timeout
	cl.NumConns = 2
	if hedge {
		cl.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.RoundRobinHostPolicy())
	}
	s, err := cl.CreateSession()
	if err != nil {
		px.Close()
		return nil, nil, err
	}
	return s, px, nil
}

// parts hands out the partitions of writeSide's runs.
var parts atomic.Int64

// writeSide writes n events through a retry policy on s (behind px) with fraction of
// the write responses dropped, then reads every row back with WRITETIME: none may be
// lost, duplicated, or carry another timestamp than the one pinned.
func writeSide(e *env, name string, s *gocql.Session, px *faultproxy.Proxy, p *retry.Policy, fraction float64, sideNo int) side {
	return side{name: name, workers: 64, prepare: func(ctx context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
		part := int(parts.Add(1)) // fresh for every run: sides are shared between pairs
		ids := make([]gocql.UUID, n)
		ts := make([]int64, n)
		base := time.Now()
		for i := range ids {
			ids[i] = clientid.NewTimeUUID(base.Add(time.Duration(i) * time.Microsecond))
		}
		if fraction > 0 {
			px.SetRule(faultproxy.DropFraction(fraction, uint64(part), faultproxy.Writes("INSERT INTO ev")))
		} else {
			px.SetRule(nil)
		}
		dropped0 := px.Stats().Dropped.Load()
		requests0 := px.Stats().Requests.Load()
		var failed atomic.Int64
		op := func(ctx context.Context, i int) error {
			ts[i] = p.Clock().Next()
			if err := p.Exec(ctx, s.Query(`INSERT INTO ev (p, id, v) VALUES (?, ?, ?)`, part, ids[i], i), retry.AtTimestamp(ts[i])); err != nil {
				failed.Add(1) // an unknown outcome is counted, not fatal: the read-back judges
			}
			return nil
		}
		check := func(ctx context.Context) (string, error) {
			px.SetRule(nil)
			want := make(map[gocql.UUID]int, n)
			for i, id := range ids {
				want[id] = i
			}
			seen := map[gocql.UUID]bool{}
			var dup int
			iter := e.s.Query(`SELECT id, v, WRITETIME(v) FROM ev WHERE p = ?`, part).WithContext(ctx).PageSize(5000).Iter()
			var id gocql.UUID
			var v int
			var wt int64
			for iter.Scan(&id, &v, &wt) {
				i, ok := want[id]
				if !ok || seen[id] || v != i || wt != ts[i] {
					dup++
				}
				seen[id] = true
			}
			if err := iter.Close(); err != nil {
				return "", err
			}
			lost := n - len(seen)
			note := fmt.Sprintf("[%s: %d lost, %d duplicated or wrong WRITETIME, %d failed, %d responses dropped, %d requests]",
				name, lost, dup, failed.Load(), px.Stats().Dropped.Load()-dropped0, px.Stats().Requests.Load()-requests0)
			if lost != 0 || dup != 0 {
				return note, errors.New("writes lost or duplicated " + note)
			}
			return note, nil
		}
		return op, check, nil
	}}
}

// droppedPairs: 10% of write responses dropped vs fault-free, without and with hedging
// (on one node a hedge goes to the same node again: see retry.HedgingHosts), and the
// cost of hedging when nothing is wrong.
func droppedPairs(ctx context.Context, e *env, closers *[]func()) ([]*pair, error) {
	if err := e.exec(ctx, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`); err != nil {
		return nil, err
	}
	const timeout = 250 * time.Millisecond
	plainS, plainPx, err := proxiedSession(e, timeout, false)
	if err != nil {
		return nil, err
	}
	cleanS, cleanPx, err := proxiedSession(e, timeout, false)
	if err != nil {
		return nil, err
	}
	hedgeS, hedgePx, err := proxiedSession(e, timeout, true)
	if err != nil {
		return nil, err
	}
	*closers = append(*closers, plainS.Close, cleanS.Close, hedgeS.Close,
		func() { plainPx.Close() }, func() { cleanPx.Close() }, func() { hedgePx.Close() })
	opts := []retry.Option{retry.WithMaxAttempts(10), retry.WithBackoff(2*time.Millisecond, 50*time.Millisecond)}
	plain := retry.NewPolicy(opts...)
	hedged := retry.NewPolicy(append(opts, retry.WithHedging())...)
	n := e.n(10_000, 1_000)
	return []*pair{
		{key: "dropped_vs_clean", title: "idempotent writes, 10% of responses dropped vs fault-free (250 ms client timeout, 64 workers, no hedging)", n: n,
			a: writeSide(e, "10% dropped", plainS, plainPx, plain, 0.10, 0), b: writeSide(e, "fault-free", cleanS, cleanPx, plain, 0, 1)},
		{key: "dropped_hedged_vs_clean", title: "the same with `retry.WithHedging` (10% dropped, hedged) vs fault-free (not hedged)", n: n,
			a: writeSide(e, "10% dropped, hedged", hedgeS, hedgePx, hedged, 0.10, 2), b: writeSide(e, "fault-free", cleanS, cleanPx, plain, 0, 1),
			note: "one node: the hedge goes to the same node (the issue's ≥ 0.6× target is for three nodes: FAULTS.md row 9)"},
		{key: "hedging_cost", title: "hedging when nothing is wrong: fault-free hedged vs fault-free not hedged", n: n,
			a: writeSide(e, "fault-free, hedged", hedgeS, hedgePx, hedged, 0, 2), b: writeSide(e, "fault-free", cleanS, cleanPx, plain, 0, 1),
			note: "one node: no other node to hedge to (the ≤ 5% cost target is for three nodes: FAULTS.md row 11)"},
	}, nil
}

// backfillPairs: keymigrate Backfill vs a naive SELECT-then-INSERT copy of the same
// table, both 16–32 wide; and RunWorker with three workers vs one (goroutines of one
// process sharing its session, 16 rows in flight each). Each round copies into a
// fresh target table.
func backfillPairs(ctx context.Context, e *env) ([]*pair, error) {
	rows := e.kmRows
	if err := e.exec(ctx, `CREATE TABLE comments_v1 (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`); err != nil {
		return nil, err
	}
	_, err := parallel(ctx, (rows+99)/100, 16, func(ctx context.Context, k int) error {
		b := e.s.NewBatch(gocql.UnloggedBatch).WithContext(ctx)
		for i := k * 100; i < (k+1)*100 && i < rows; i++ {
			b.Query(`INSERT INTO comments_v1 (post_id, comment_key, author, body) VALUES (?, ?, 'author', 'a comment body of some length')`,
				fmt.Sprint("post-", i/1000), fmt.Sprintf("%010d", i))
		}
		return e.s.ExecuteBatch(b)
	})
	if err != nil {
		return nil, err
	}
	if err := e.flush(ctx); err != nil {
		return nil, err
	}
	target := func(ctx context.Context, name string) error {
		return e.exec(ctx, fmt.Sprintf(`CREATE TABLE %s (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`, name))
	}
	transform := func(old map[string]any) (map[string]any, error) {
		key, _ := old["comment_key"].(string)
		ticks, err := strconv.ParseInt(key, 10, 64) // not Sscan: a leading 0 would read as octal
		if err != nil {
			return nil, fmt.Errorf("comment_key %q: %w", key, err)
		}
		return map[string]any{"post_id": old["post_id"], "comment_key": clientid.SortableInt64(ticks)}, nil
	}
	counted := func(name string) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			var got int
			if err := e.s.Query(`SELECT COUNT(*) FROM ` + name).WithContext(ctx).Scan(&got); err != nil {
				return "", err
			}
			if got != rows {
				var src int
				e.s.Query(`SELECT COUNT(*) FROM comments_v1`).WithContext(ctx).Scan(&src)
				return "", fmt.Errorf("%s holds %d rows, want %d (comments_v1 holds %d)", name, got, rows, src)
			}
			return "", nil
		}
	}
	old, err := overwrite.Describe(ctx, e.s, e.ks, "comments_v1")
	if err != nil {
		return nil, err
	}
	// workers copies the table with n RunWorker goroutines under migration id.
	workers := func(n int, prefix string) side {
		return side{name: fmt.Sprintf("%d worker(s)", n), whole: func(ctx context.Context, r int) (int, func(context.Context) (string, error), error) {
			name := fmt.Sprintf("comments_%s_r%d", prefix, r)
			if err := target(ctx, name); err != nil {
				return 0, nil, err
			}
			nt, err := overwrite.Describe(ctx, e.s, e.ks, name)
			if err != nil {
				return 0, nil, err
			}
			m, err := keymigrate.New(e.s, fmt.Sprintf("bench-%s-r%d", prefix, r), old, nt, transform)
			if err != nil {
				return 0, nil, err
			}
			reps := make([]keymigrate.WorkerReport, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for w := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					reps[w], errs[w] = m.RunWorker(ctx, keymigrate.WorkerID(fmt.Sprintf("bench-%s-r%d-w%d", prefix, r, w)), keymigrate.WorkerRanges(64))
				}()
			}
			wg.Wait()
			copied := 0
			for w := range n {
				if errs[w] != nil {
					return 0, nil, errs[w]
				}
				copied += int(reps[w].Rows)
			}
			if copied != rows {
				return 0, nil, fmt.Errorf("%d workers copied %d rows, want %d", n, copied, rows)
			}
			return copied, counted(name), nil
		}}
	}
	return []*pair{{key: "workers_3_vs_1", title: fmt.Sprintf("`keymigrate` RunWorker, 3 workers vs 1 (one process, one session, 64 ranges), %d rows", rows),
		a: workers(3, "w3"), b: workers(1, "w1")}, {key: "backfill_vs_naive", title: fmt.Sprintf("`keymigrate` Backfill vs naive SELECT-then-INSERT copy, %d rows", rows), rounds: 0,
		a: side{name: "Backfill", whole: func(ctx context.Context, r int) (int, func(context.Context) (string, error), error) {
			name := fmt.Sprintf("comments_bf_r%d", r)
			if err := target(ctx, name); err != nil {
				return 0, nil, err
			}
			nt, err := overwrite.Describe(ctx, e.s, e.ks, name)
			if err != nil {
				return 0, nil, err
			}
			m, err := keymigrate.New(e.s, fmt.Sprintf("bench-r%d", r), old, nt, transform)
			if err != nil {
				return 0, nil, err
			}
			prog, err := m.Backfill(ctx, keymigrate.WithConcurrency(32), keymigrate.WithoutDuplicateCheck())
			if err == nil && prog.Rows != int64(rows) {
				err = fmt.Errorf("backfill copied %d rows (%d writes, %d/%d ranges), want %d", prog.Rows, prog.Writes, prog.RangesDone, prog.RangesTotal, rows)
			}
			return int(prog.Rows), counted(name), err
		}},
		b: side{name: "naive copy", whole: func(ctx context.Context, r int) (int, func(context.Context) (string, error), error) {
			name := fmt.Sprintf("comments_nv_r%d", r)
			if err := target(ctx, name); err != nil {
				return 0, nil, err
			}
			ins := fmt.Sprintf(`INSERT INTO %s (post_id, comment_key, author, body) VALUES (?, ?, ?, ?)`, name)
			ch := make(chan [4]string, 1000)
			var copied atomic.Int64
			var firstErr error
			var once sync.Once
			var wg sync.WaitGroup
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for row := range ch {
						if err := e.s.Query(ins, row[0], row[1], row[2], row[3]).WithContext(ctx).Exec(); err != nil {
							once.Do(func() { firstErr = err })
							continue
						}
						copied.Add(1)
					}
				}()
			}
			iter := e.s.Query(`SELECT post_id, comment_key, author, body FROM comments_v1`).WithContext(ctx).PageSize(1000).Iter()
			var row [4]string
			for iter.Scan(&row[0], &row[1], &row[2], &row[3]) {
				nk, err := transform(map[string]any{"post_id": row[0], "comment_key": row[1]})
				if err != nil {
					once.Do(func() { firstErr = err })
					break
				}
				row[1] = nk["comment_key"].(string)
				ch <- row
			}
			close(ch)
			wg.Wait()
			if err := iter.Close(); err != nil {
				return 0, nil, err
			}
			return int(copied.Load()), counted(name), firstErr
		}},
	}}, nil
}
