package v2suite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/gocqlv2/overwrite"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// TestV2OverwriteRowReadBackAndTombstones: overwrite.Row on the v2 driver replaces a row
// of a 40-column table given 20 columns: the absent ones read back NULL, the given ones
// at WRITETIME N+1, a sibling row survives (a row deletion), and Cassandra's trace of
// the read counts 0 tombstone cells — where the same row inserted naively with NULLs
// counts 20. On a table with a default TTL the written cells keep it.
func TestV2OverwriteRowReadBackAndTombstones(t *testing.T) {
	s1, ks := node.Keyspace(t)
	cols := make([]string, 40)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%02d text", i+1)
	}
	harness.Exec(t, s1, fmt.Sprintf(`CREATE TABLE t40 (id int, seq int, %s, PRIMARY KEY (id, seq))`, strings.Join(cols, ", ")),
		`CREATE TABLE ttl (id int PRIMARY KEY, v text, n int) WITH default_time_to_live = 3600`)
	ctx := context.Background()
	s2, _ := proxied(t, ks, 5*time.Second)
	tbl, err := overwrite.Describe(ctx, s2, ks, "t40")
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]any{"id": 1, "seq": 1}
	naive := []any{2, 1}
	for i := 1; i <= 40; i++ {
		var v any
		if i <= 20 {
			v = fmt.Sprintf("value %d", i)
			row[fmt.Sprintf("c%02d", i)] = v
		}
		naive = append(naive, v)
	}
	if err := s1.Query(`INSERT INTO t40 (id, seq, c01) VALUES (1, 2, 'sibling')`).Exec(); err != nil {
		t.Fatal(err)
	}
	res, err := overwrite.Row(ctx, s2, tbl, row)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scope != overwrite.ScopeRow || res.Batches != 1 || res.Rows != 1 {
		t.Fatalf("result %+v", res)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", 42), ", ")
	names := []string{"id", "seq"}
	for i := 1; i <= 40; i++ {
		names = append(names, fmt.Sprintf("c%02d", i))
	}
	if err := s1.Query(fmt.Sprintf(`INSERT INTO t40 (%s) VALUES (%s)`, strings.Join(names, ", "), marks), naive...).Exec(); err != nil {
		t.Fatal(err)
	}
	var c01 string
	var c21 *string
	var wt int64
	if err := s1.Query(`SELECT c01, c21, WRITETIME(c01) FROM t40 WHERE id = 1 AND seq = 1`).Scan(&c01, &c21, &wt); err != nil {
		t.Fatal(err)
	}
	if c01 != "value 1" || c21 != nil || wt != res.Timestamp+1 {
		t.Fatalf("read back c01=%q c21=%v WRITETIME=%d, want value 1, NULL, N+1=%d", c01, c21, wt, res.Timestamp+1)
	}
	var sibling string
	if err := s1.Query(`SELECT c01 FROM t40 WHERE id = 1 AND seq = 2`).Scan(&sibling); err != nil || sibling != "sibling" {
		t.Fatalf("sibling row: %q %v", sibling, err)
	}
	ow, err := harness.TraceRead(ctx, s1, `SELECT * FROM t40 WHERE id = 1 AND seq = 1`)
	if err != nil {
		t.Fatal(err)
	}
	nv, err := harness.TraceRead(ctx, s1, `SELECT * FROM t40 WHERE id = 2`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("naive NULL insert: %d live rows, %d tombstone cells; overwrite.Row (v2): %d live rows, %d tombstone cells",
		nv.LiveRows, nv.TombstoneCells, ow.LiveRows, ow.TombstoneCells)
	if ow.TombstoneCells != 0 || ow.LiveRows != 1 || nv.TombstoneCells != 20 {
		t.Fatalf("tombstone cells: overwrite %d (live %d), naive %d; want 0 (1), 20", ow.TombstoneCells, ow.LiveRows, nv.TombstoneCells)
	}

	// A table's default TTL applies to what Row writes (the TTL is bound UNSET).
	ttlTbl, err := overwrite.Describe(ctx, s2, ks, "ttl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := overwrite.Row(ctx, s2, ttlTbl, map[string]any{"id": 1, "v": "x"}); err != nil {
		t.Fatal(err)
	}
	var ttl int
	if err := s1.Query(`SELECT TTL(v) FROM ttl WHERE id = 1`).Scan(&ttl); err != nil || ttl < 3500 || ttl > 3600 {
		t.Fatalf("TTL(v) = %d (%v), want the table's default 3600", ttl, err)
	}
	if _, err := overwrite.Row(ctx, s2, ttlTbl, map[string]any{"id": 2, "v": "x"}, overwrite.WithTTL(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s1.Query(`SELECT TTL(v) FROM ttl WHERE id = 2`).Scan(&ttl); err != nil || ttl < 50 || ttl > 60 {
		t.Fatalf("TTL(v) with WithTTL(1m) = %d (%v)", ttl, err)
	}
}

// TestV2OverwriteUnderDroppedResponses: on the v2 driver, an overwrite whose batch
// response is dropped is retried (the same timestamps) and leaves one row at N+1; one
// with a non-empty non-frozen list is not re-sent — an unknown outcome, not idempotent,
// the list [7 8] once; a partition split into several batches holds exactly its rows;
// WithTimestamp with a list, and counter tables, are refused before anything is sent.
func TestV2OverwriteUnderDroppedResponses(t *testing.T) {
	s1, ks := node.Keyspace(t)
	harness.Exec(t, s1, `CREATE TABLE lists (id int, seq int, l list<int>, fl frozen<list<int>>, v text, PRIMARY KEY (id, seq))`,
		`CREATE TABLE counts (id int PRIMARY KEY, n counter)`)
	ctx := context.Background()
	s2, px := proxied(t, ks, 300*time.Millisecond)
	tbl, err := overwrite.Describe(ctx, s2, ks, "lists")
	if err != nil {
		t.Fatal(err)
	}
	p := retry.NewPolicy(retry.WithMaxAttempts(5), retry.WithBackoff(time.Millisecond, 10*time.Millisecond))
	isBatch := func(r faultproxy.Request) bool { return r.Opcode == faultproxy.OpBatch }

	px.SetRule(faultproxy.DropNext(1, isBatch))
	res, err := overwrite.Row(ctx, s2, tbl, map[string]any{"id": 1, "seq": 1, "fl": []int{7, 8}, "v": "x"}, overwrite.WithRetryPolicy(p))
	if err != nil {
		t.Fatalf("repeatable row, dropped response: %v (want retried)", err)
	}
	var fl []int
	var wt int64
	if err := s1.Query(`SELECT fl, WRITETIME(v) FROM lists WHERE id = 1 AND seq = 1`).Scan(&fl, &wt); err != nil || fmt.Sprint(fl) != "[7 8]" || wt != res.Timestamp+1 {
		t.Fatalf("fl=%v WRITETIME=%d (%v), want [7 8] at %d", fl, wt, err, res.Timestamp+1)
	}

	for _, via := range []string{"Row", "Partition"} {
		id := map[string]int{"Row": 2, "Partition": 3}[via]
		row := map[string]any{"id": id, "seq": 1, "l": []int{7, 8}, "v": "x"}
		px.SetRule(faultproxy.DropNext(1, isBatch))
		if via == "Row" {
			_, err = overwrite.Row(ctx, s2, tbl, row, overwrite.WithRetryPolicy(p))
		} else {
			_, err = overwrite.Partition(ctx, s2, tbl, []map[string]any{row}, overwrite.WithRetryPolicy(p))
		}
		var ou *retry.OutcomeUnknownError
		if !errors.As(err, &ou) || ou.Idempotent || !errors.Is(err, retry.ErrNotIdempotent) {
			t.Errorf("%s, list, dropped response: %v, want a non-idempotent unknown outcome", via, err)
		}
		var l []int
		if err := s1.Query(`SELECT l FROM lists WHERE id = ? AND seq = 1`, id).Scan(&l); err != nil || fmt.Sprint(l) != "[7 8]" {
			t.Errorf("%s: l = %v (%v) after a dropped response, want [7 8] (sent once)", via, l, err)
		}
	}
	if got := px.Stats().Dropped.Load(); got != 3 {
		t.Fatalf("dropped %d responses, want 3", got)
	}

	// A partition split into batches: exactly its rows afterwards, all at N+1.
	if err := s1.Query(`INSERT INTO lists (id, seq, v) VALUES (4, 999, 'stale')`).Exec(); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	for i := range 60 {
		rows = append(rows, map[string]any{"id": 4, "seq": i, "v": strings.Repeat("x", 100)})
	}
	px.SetRule(faultproxy.DropNext(1, isBatch))
	res, err = overwrite.Partition(ctx, s2, tbl, rows, overwrite.WithMaxBatchBytes(2048), overwrite.WithRetryPolicy(p))
	if err != nil || res.Batches < 2 || res.Scope != overwrite.ScopePartition || res.Rows != 60 {
		t.Fatalf("split partition: %+v %v", res, err)
	}
	var n int
	if err := s1.Query(`SELECT COUNT(*) FROM lists WHERE id = 4`).Scan(&n); err != nil || n != 60 {
		t.Fatalf("partition holds %d rows (%v), want 60 (the stale one deleted)", n, err)
	}
	if err := s1.Query(`SELECT WRITETIME(v) FROM lists WHERE id = 4 AND seq = 59`).Scan(&wt); err != nil || wt != res.Timestamp+1 {
		t.Fatalf("last batch's WRITETIME %d (%v), want %d", wt, err, res.Timestamp+1)
	}
	t.Logf("60 rows in %d batches", res.Batches)

	// Refused before anything is sent.
	sent := px.Stats().Requests.Load()
	if _, err := overwrite.Row(ctx, s2, tbl, map[string]any{"id": 5, "seq": 1, "l": []int{1}}, overwrite.WithTimestamp(res.Timestamp+10)); !errors.Is(err, overwrite.ErrListNotRepeatable) {
		t.Fatalf("WithTimestamp and a list: %v", err)
	}
	if _, err := overwrite.Row(ctx, s2, tbl, map[string]any{"id": 5, "v": "no seq"}); !errors.Is(err, overwrite.ErrMissingKey) {
		t.Fatalf("missing clustering key: %v", err)
	}
	if _, err := overwrite.Partition(ctx, s2, tbl, []map[string]any{{"id": 5, "seq": 1}, {"id": 6, "seq": 1}}); !errors.Is(err, overwrite.ErrMixedPartitions) {
		t.Fatalf("two partitions: %v", err)
	}
	if _, err := overwrite.Row(ctx, s2, tbl, map[string]any{"id": 5, "seq": 1}, overwrite.WithTTL(time.Millisecond)); err == nil {
		t.Fatal("a TTL under 1s accepted")
	}
	if got := px.Stats().Requests.Load(); got != sent {
		t.Fatalf("%d requests sent for refused input", got-sent)
	}
	if _, err := overwrite.Describe(ctx, s2, ks, "counts"); !errors.Is(err, overwrite.ErrCounterTable) {
		t.Fatalf("counter table: %v", err)
	}
}
