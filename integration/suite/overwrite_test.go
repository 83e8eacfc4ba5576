package suite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/scylladb/gocqlx/v2/table"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

type profile struct {
	ID       int     `db:"id"`
	Seq      int     `db:"seq"`
	Name     string  `db:"name"`
	Email    *string `db:"email"`
	Age      int     `db:"age"`
	Active   bool    `db:"active"`
	Nickname *string `db:"nickname"`
	Ignored  string  `db:"-"`
}

// TestOverwriteRowReadBack: absent columns read back NULL, given ones as given, zero
// values are written, WRITETIME of written cells is N+1, and Result.Timestamp is N.
func TestOverwriteRowReadBack(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE profiles (id int, seq int, name text, email text, age int, active boolean, nickname text, PRIMARY KEY (id, seq))`)
	if err := s.Query(`INSERT INTO profiles (id, seq, name, email, age, active, nickname) VALUES (1, 1, 'old', 'old@x', 50, true, 'nick')`).Exec(); err != nil {
		t.Fatal(err)
	}
	tbl := describe(t, s, ks, "profiles")
	email := "new@x"
	res, err := overwrite.Row(ctx, s, tbl, &profile{ID: 1, Seq: 1, Name: "", Email: &email, Age: 0, Active: false, Ignored: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var name, gotEmail string
	var nickname *string
	var age int
	var active bool
	var wtName, wtAge, wtActive int64
	if err := s.Query(`SELECT name, email, age, active, nickname, WRITETIME(name), WRITETIME(age), WRITETIME(active) FROM profiles WHERE id = 1 AND seq = 1`).
		Scan(&name, &gotEmail, &age, &active, &nickname, &wtName, &wtAge, &wtActive); err != nil {
		t.Fatal(err)
	}
	if name != "" || gotEmail != "new@x" || age != 0 || active || nickname != nil {
		t.Fatalf("read back name=%q email=%q age=%d active=%v nickname=%v", name, gotEmail, age, active, nickname)
	}
	if wtName != res.Timestamp+1 || wtAge != res.Timestamp+1 || wtActive != res.Timestamp+1 {
		t.Fatalf("WRITETIME %d/%d/%d, want N+1 = %d", wtName, wtAge, wtActive, res.Timestamp+1)
	}
	if res.Scope != overwrite.ScopeRow || res.Batches != 1 {
		t.Fatalf("result %+v", res)
	}
	// A map row works the same way; WithTimestamp pins N.
	res2, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "seq": 1, "nickname": "n2"}, overwrite.WithTimestamp(res.Timestamp+100))
	if err != nil || res2.Timestamp != res.Timestamp+100 {
		t.Fatalf("map row: %+v %v", res2, err)
	}
	var nameP *string
	if err := s.Query(`SELECT name, nickname FROM profiles WHERE id = 1 AND seq = 1`).Scan(&nameP, &nickname); err != nil {
		t.Fatal(err)
	}
	if nameP != nil || nickname == nil || *nickname != "n2" {
		t.Fatalf("after map overwrite name=%v nickname=%v", nameP, nickname)
	}
}

// wideTable creates t40 (id int, seq int, c01..c40 text, PRIMARY KEY (id, seq)) and
// returns a row with the first `given` columns set and the rest absent (naive: NULL).
func wideTable(t testing.TB, s *gocql.Session) {
	t.Helper()
	cols := make([]string, 40)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%02d text", i+1)
	}
	harness.Exec(t, s, fmt.Sprintf(`CREATE TABLE t40 (id int, seq int, %s, PRIMARY KEY (id, seq))`, strings.Join(cols, ", ")))
}

func wideRow(id, seq, given int) map[string]any {
	row := map[string]any{"id": id, "seq": seq}
	for i := 1; i <= 40; i++ {
		if i <= given {
			row[fmt.Sprintf("c%02d", i)] = fmt.Sprintf("value %d", i)
		} else {
			row[fmt.Sprintf("c%02d", i)] = nil
		}
	}
	return row
}

// naiveInsert binds every column, NULL included: the pattern the field report warns about.
func naiveInsert(s *gocql.Session, row map[string]any) error {
	cols := []string{"id", "seq"}
	vals := []any{row["id"], row["seq"]}
	for i := 1; i <= 40; i++ {
		c := fmt.Sprintf("c%02d", i)
		cols = append(cols, c)
		vals = append(vals, row[c])
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	return s.Query(fmt.Sprintf(`INSERT INTO t40 (%s) VALUES (%s)`, strings.Join(cols, ", "), marks), vals...).Exec()
}

// TestOverwriteTombstonesVsNaive: the same 40-column row with 20 NULLs, written naively
// and with overwrite.Row; Cassandra's trace counts the tombstone cells of each read.
func TestOverwriteTombstonesVsNaive(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	wideTable(t, s)
	tbl := describe(t, s, ks, "t40")
	for _, flushed := range []bool{false, true} {
		naiveID, owID := 1, 2
		if flushed {
			naiveID, owID = 3, 4
		}
		if err := naiveInsert(s, wideRow(naiveID, 1, 20)); err != nil {
			t.Fatal(err)
		}
		if _, err := overwrite.Row(ctx, s, tbl, wideRow(owID, 1, 20)); err != nil {
			t.Fatal(err)
		}
		if flushed {
			node.MustFlush(t, ks, "t40")
		}
		naive, err := harness.TraceRead(ctx, s, `SELECT * FROM t40 WHERE id = ?`, naiveID)
		if err != nil {
			t.Fatal(err)
		}
		ow, err := harness.TraceRead(ctx, s, `SELECT * FROM t40 WHERE id = ?`, owID)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("flushed=%v: naive NULL insert: %d live rows, %d tombstone cells; overwrite.Row: %d live rows, %d tombstone cells",
			flushed, naive.LiveRows, naive.TombstoneCells, ow.LiveRows, ow.TombstoneCells)
		if naive.TombstoneCells != 20 || naive.LiveRows != 1 {
			t.Errorf("naive: %d tombstone cells, %d live rows; want 20 and 1", naive.TombstoneCells, naive.LiveRows)
		}
		if ow.TombstoneCells != 0 || ow.LiveRows != 1 {
			t.Errorf("overwrite: %d tombstone cells, %d live rows; want 0 and 1", ow.TombstoneCells, ow.LiveRows)
		}
	}
}

// TestOverwritePartitionPastTombstoneFailureThreshold: a clustered partition written
// with naive NULL inserts fails to read once its tombstones pass
// tombstone_failure_threshold (100,000 by default); the same rows written with
// overwrite.Row read fine.
func TestOverwritePartitionPastTombstoneFailureThreshold(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,400 rows")
	}
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	wideTable(t, s)
	tbl := describe(t, s, ks, "t40")
	const rows = 5200 // × 20 NULL columns = 104,000 tombstones > 100,000
	write := func(id int, f func(row map[string]any) error) {
		var wg sync.WaitGroup
		errs := make(chan error, rows)
		sem := make(chan struct{}, 32)
		for i := 0; i < rows; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				if err := f(wideRow(id, i, 20)); err != nil {
					errs <- err
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	write(1, func(r map[string]any) error { return naiveInsert(s, r) })
	write(2, func(r map[string]any) error { _, err := overwrite.Row(ctx, s, tbl, r); return err })

	var n int
	iter := s.Query(`SELECT * FROM t40 WHERE id = 1`).PageSize(rows + 100).Iter()
	for iter.Scanner().Next() {
		n++
	}
	err := iter.Close()
	var rf *gocql.RequestErrReadFailure
	if !errors.As(err, &rf) {
		t.Fatalf("naive partition: read returned %d rows, err %v; want a read failure (tombstone_failure_threshold)", n, err)
	}
	t.Logf("naive partition (%d rows × 20 NULLs): %v", rows, err)
	tr, err := harness.TraceRead(ctx, s, `SELECT * FROM t40 WHERE id = 2`)
	if err != nil {
		t.Fatalf("overwrite partition: %v", err)
	}
	if tr.Rows != rows || tr.TombstoneCells != 0 {
		t.Fatalf("overwrite partition: %d rows, %d tombstone cells; want %d and 0", tr.Rows, tr.TombstoneCells, rows)
	}
}

// TestOverwriteScope: siblings survive Row; Partition leaves exactly the given rows;
// static columns stay when absent from a row overwrite and are written when given.
func TestOverwriteScope(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE orders (customer int, id int, total int, note text, tier text STATIC, PRIMARY KEY (customer, id))`)
	for i := 1; i <= 3; i++ {
		if err := s.Query(`INSERT INTO orders (customer, id, total, note, tier) VALUES (1, ?, ?, 'n', 'gold')`, i, i*10).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	tbl := describe(t, s, ks, "orders")
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"customer": 1, "id": 2, "total": 99}); err != nil {
		t.Fatal(err)
	}
	type row struct {
		id, total int
		note      *string
		tier      *string
	}
	read := func() []row {
		var out []row
		iter := s.Query(`SELECT id, total, note, tier FROM orders WHERE customer = 1`).Iter()
		var r row
		for iter.Scan(&r.id, &r.total, &r.note, &r.tier) {
			out = append(out, r)
			r = row{}
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := read()
	if len(got) != 3 || got[0].total != 10 || got[2].total != 30 || got[1].total != 99 || got[1].note != nil {
		t.Fatalf("after Row: %+v", got)
	}
	if got[1].tier == nil || *got[1].tier != "gold" {
		t.Fatalf("static column not left untouched by a row overwrite: %+v", got[1])
	}
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"customer": 1, "id": 2, "total": 98, "tier": "silver"}); err != nil {
		t.Fatal(err)
	}
	if got := read(); *got[0].tier != "silver" {
		t.Fatalf("static column given but not written: %+v", got[0])
	}
	res, err := overwrite.Partition(ctx, s, tbl, []map[string]any{
		{"customer": 1, "id": 7, "total": 70},
		{"customer": 1, "id": 8, "total": 80, "tier": "bronze"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got = read()
	if len(got) != 2 || got[0].id != 7 || got[1].id != 8 || *got[0].tier != "bronze" || res.Scope != overwrite.ScopePartition {
		t.Fatalf("after Partition: %+v (%+v)", got, res)
	}
}

// TestOverwriteSameTimestampNegativeControl: with DELETE and INSERT at the SAME timestamp the
// delete wins and the row vanishes — the failure N+1 prevents, visible to this suite.
func TestOverwriteSameTimestampNegativeControl(t *testing.T) {
	s, _ := node.Keyspace(t)
	harness.Exec(t, s, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	ts := clientid.ProcessClock().Next()
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query(`DELETE FROM kv USING TIMESTAMP ? WHERE id = ?`, ts, 1)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?) USING TIMESTAMP ?`, 1, "x", ts)
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM kv WHERE id = 1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("same-timestamp delete+insert left %d rows; Cassandra's tie rule says the delete wins", n)
	}
}

// TestOverwriteConcurrency: many goroutines overwriting different rows; and two
// goroutines overwriting the same row with different column sets never leave a mix.
func TestOverwriteConcurrency(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE shapes (id int PRIMARY KEY, a1 text, a2 text, a3 text, b1 text, b2 text, b3 text)`)
	tbl := describe(t, s, ks, "shapes")
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1000 + g*20 + i, "a1": "x"}); err != nil {
					errs <- err
				}
			}
		}(g)
	}
	var mu sync.Mutex
	latest := map[string]int64{}
	for _, shape := range []string{"a", "b"} {
		wg.Add(1)
		go func(shape string) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				row := map[string]any{"id": 1, shape + "1": shape, shape + "2": shape, shape + "3": shape}
				res, err := overwrite.Row(ctx, s, tbl, row)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				latest[shape] = max(latest[shape], res.Timestamp)
				mu.Unlock()
			}
		}(shape)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM shapes`).Scan(&n); err != nil || n != 16*20+1 {
		t.Fatalf("rows %d (%v), want %d", n, err, 16*20+1)
	}
	var a1, a2, a3, b1, b2, b3 *string
	if err := s.Query(`SELECT a1, a2, a3, b1, b2, b3 FROM shapes WHERE id = 1`).Scan(&a1, &a2, &a3, &b1, &b2, &b3); err != nil {
		t.Fatal(err)
	}
	isA := a1 != nil && a2 != nil && a3 != nil && b1 == nil && b2 == nil && b3 == nil
	isB := b1 != nil && b2 != nil && b3 != nil && a1 == nil && a2 == nil && a3 == nil
	if !isA && !isB {
		t.Fatalf("row mixes the two overwrites: a=%v %v %v b=%v %v %v", a1, a2, a3, b1, b2, b3)
	}
	if winner := map[bool]string{true: "a", false: "b"}[isA]; latest[winner] < latest[map[string]string{"a": "b", "b": "a"}[winner]] {
		t.Fatalf("shape %s survived but the other shape's last overwrite had the later timestamp", winner)
	}
}

// TestOverwriteBadInput: every kind of bad input is a typed error and nothing is written.
func TestOverwriteBadInput(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s,
		`CREATE TABLE kv (id int, seq int, v text, n int, PRIMARY KEY (id, seq))`,
		`CREATE TABLE hits (id int PRIMARY KEY, n counter)`)
	tbl := describe(t, s, ks, "kv")
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"missing partition key", func() error { _, err := overwrite.Row(ctx, s, tbl, map[string]any{"seq": 1, "v": "x"}); return err }, overwrite.ErrMissingKey},
		{"null clustering key", func() error {
			_, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "seq": nil, "v": "x"})
			return err
		}, overwrite.ErrMissingKey},
		{"unknown column", func() error {
			_, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "seq": 1, "nope": "x"})
			return err
		}, overwrite.ErrUnknownColumn},
		{"wrong Go type", func() error {
			_, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "seq": 1, "n": "not a number"})
			return err
		}, overwrite.ErrBadValue},
		{"nil row", func() error { _, err := overwrite.Row(ctx, s, tbl, nil); return err }, overwrite.ErrNotARow},
		{"nil pointer row", func() error { var p *profile; _, err := overwrite.Row(ctx, s, tbl, p); return err }, overwrite.ErrNotARow},
		{"not a row", func() error { _, err := overwrite.Row(ctx, s, tbl, 42); return err }, overwrite.ErrNotARow},
		{"nil table", func() error { _, err := overwrite.Row(ctx, s, nil, map[string]any{"id": 1}); return err }, overwrite.ErrUnknownTable},
		{"mixed partitions", func() error {
			_, err := overwrite.Partition(ctx, s, tbl, []map[string]any{{"id": 1, "seq": 1}, {"id": 2, "seq": 1}})
			return err
		}, overwrite.ErrMixedPartitions},
		{"no rows", func() error { _, err := overwrite.Partition(ctx, s, tbl, []map[string]any{}); return err }, overwrite.ErrNoRows},
		{"rows not a slice", func() error { _, err := overwrite.Partition(ctx, s, tbl, map[string]any{"id": 1}); return err }, overwrite.ErrNotARow},
		{"bad row in partition", func() error {
			_, err := overwrite.Partition(ctx, s, tbl, []map[string]any{{"id": 1, "seq": 1}, {"id": 1}})
			return err
		}, overwrite.ErrMissingKey},
		{"counter table", func() error { _, err := overwrite.Describe(ctx, s, ks, "hits"); return err }, overwrite.ErrCounterTable},
		{"unknown table", func() error { _, err := overwrite.Describe(ctx, s, ks, "nope"); return err }, overwrite.ErrUnknownTable},
		{"unknown keyspace", func() error { _, err := overwrite.Describe(ctx, s, "nope_ks", "kv"); return err }, overwrite.ErrUnknownTable},
		{"empty table name", func() error { _, err := overwrite.Describe(ctx, s, ks, ""); return err }, overwrite.ErrInvalidName},
		{"injection in name", func() error { _, err := overwrite.Describe(ctx, s, ks, `kv"; DROP TABLE kv; --`); return err }, overwrite.ErrInvalidName},
	} {
		err := tc.call()
		var oe *overwrite.Error
		if !errors.Is(err, tc.want) || !errors.As(err, &oe) {
			t.Errorf("%s: err = %v, want %v as *overwrite.Error", tc.name, err, tc.want)
		}
	}
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM kv`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows written by rejected input: %d (%v)", n, err)
	}
}

// TestOverwriteRetriedUnderDroppedResponses: overwrites whose responses are dropped are
// retried with the same timestamps and end in the same state as without faults.
func TestOverwriteRetriedUnderDroppedResponses(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, a text, b text)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	tbl := describe(t, s, ks, "kv")
	px.SetRule(faultproxy.DropFraction(0.3, 3, func(r faultproxy.Request) bool { return r.Opcode == faultproxy.OpBatch }))
	p := retry.NewPolicy(retry.WithMaxAttempts(10), retry.WithBackoff(time.Millisecond, 20*time.Millisecond))
	ts := map[int]int64{}
	for i := 0; i < 40; i++ {
		res, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": i, "a": "x"}, overwrite.WithRetryPolicy(p))
		if err != nil {
			t.Fatal(err)
		}
		ts[i] = res.Timestamp
	}
	if px.Stats().Dropped.Load() == 0 {
		t.Fatal("no responses dropped")
	}
	iter := s0.Query(`SELECT id, a, b, WRITETIME(a) FROM kv`).Iter()
	var id int
	var a string
	var b *string
	var wt int64
	n := 0
	for iter.Scan(&id, &a, &b, &wt) {
		n++
		if a != "x" || b != nil || wt != ts[id]+1 {
			t.Errorf("row %d: a=%q b=%v writetime=%d, want N+1=%d", id, a, b, wt, ts[id]+1)
		}
	}
	if err := iter.Close(); err != nil || n != 40 {
		t.Fatalf("%d rows, %v", n, err)
	}
}

// TestOverwriteCollections measures the choice for non-frozen collections: an INSERT
// writes its own collection tombstone at N+1-1 = N, already covered by the row delete.
func TestOverwriteCollections(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE tags (id int PRIMARY KEY, tags set<text>, attrs map<text, text>, note text)`)
	tbl := describe(t, s, ks, "tags")
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "tags": []string{"a", "b"}, "attrs": map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "tags": []string{"c"}, "attrs": map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	node.MustFlush(t, ks, "tags")
	var tags []string
	var attrs map[string]string
	if err := s.Query(`SELECT tags, attrs FROM tags WHERE id = 1`).Scan(&tags, &attrs); err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 || tags[0] != "c" || len(attrs) != 0 {
		t.Fatalf("tags=%v attrs=%v", tags, attrs)
	}
	tr, err := harness.TraceRead(ctx, s, `SELECT * FROM tags WHERE id = 1`)
	if err != nil {
		t.Fatal(err)
	}
	// The alternative: DELETE at N, then UPDATE tags = tags + ? at N+1 (no collection
	// tombstone of the INSERT's own). Measured side by side.
	n := clientid.ProcessClock().Reserve(2)
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query(`DELETE FROM tags USING TIMESTAMP ? WHERE id = ?`, n, 2)
	b.Query(`UPDATE tags USING TIMESTAMP ? SET tags = tags + ?, attrs = attrs + ? WHERE id = ?`, n+1, []string{"c"}, map[string]string{"k": "v"}, 2)
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	node.MustFlush(t, ks, "tags")
	up, err := harness.TraceRead(ctx, s, `SELECT * FROM tags WHERE id = 2`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("collection overwrite via INSERT: %d live rows, %d tombstone cells; via UPDATE c = c + ?: %d live rows, %d tombstone cells",
		tr.LiveRows, tr.TombstoneCells, up.LiveRows, up.TombstoneCells)
	if tr.TombstoneCells != 0 || up.TombstoneCells != 0 {
		t.Fatalf("collection overwrite left tombstone cells: INSERT %d, UPDATE %d", tr.TombstoneCells, up.TombstoneCells)
	}
}

// TestOverwriteGocqlxSplitAndTTL: gocqlx metadata is accepted (and checked), a Partition
// too big for one batch is split yet ends with exactly the given rows, and WithTTL
// reaches the written cells.
func TestOverwriteGocqlxSplitAndTTL(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE cart (cart_id int, sku text, qty int, note text, PRIMARY KEY (cart_id, sku))`)
	tbl, err := overwrite.DescribeGocqlx(ctx, s, ks, table.Metadata{Name: "cart", Columns: []string{"cart_id", "sku", "qty", "note"},
		PartKey: []string{"cart_id"}, SortKey: []string{"sku"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := overwrite.DescribeGocqlx(ctx, s, ks, table.Metadata{Name: "cart", PartKey: []string{"sku"}}); !errors.Is(err, overwrite.ErrMetadataMismatch) {
		t.Fatalf("mismatched gocqlx metadata: %v", err)
	}
	for i := 0; i < 5; i++ {
		if err := s.Query(`INSERT INTO cart (cart_id, sku, qty) VALUES (1, ?, 1)`, fmt.Sprint("old-", i)).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var rows []map[string]any
	for i := 0; i < 60; i++ {
		rows = append(rows, map[string]any{"cart_id": 1, "sku": fmt.Sprintf("sku-%02d", i), "qty": i, "note": strings.Repeat("n", 100)})
	}
	res, err := overwrite.Partition(ctx, s, tbl, rows, overwrite.WithMaxBatchBytes(2048), overwrite.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.Batches < 2 {
		t.Fatalf("expected the partition to be split, got %d batch(es)", res.Batches)
	}
	var n, ttl int
	if err := s.Query(`SELECT COUNT(*) FROM cart WHERE cart_id = 1`).Scan(&n); err != nil || n != 60 {
		t.Fatalf("partition holds %d rows (%v), want exactly the 60 given", n, err)
	}
	if err := s.Query(`SELECT TTL(qty) FROM cart WHERE cart_id = 1 AND sku = 'sku-00'`).Scan(&ttl); err != nil || ttl <= 3500 || ttl > 3600 {
		t.Fatalf("TTL %d (%v), want about 3600", ttl, err)
	}
	t.Logf("60 rows in %d batches", res.Batches)
}

// TestOverwriteKeepsTableDefaultTTL: with no WithTTL the written cells inherit the
// table's default_time_to_live — an explicit TTL 0 would override it (only UNSET
// inherits it).
func TestOverwriteKeepsTableDefaultTTL(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE ttl_kv (id int, seq int, v text, l set<int>, PRIMARY KEY (id, seq)) WITH default_time_to_live = 600`)
	tbl := describe(t, s, ks, "ttl_kv")
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "seq": 1, "v": "x", "l": []int{1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := overwrite.Partition(ctx, s, tbl, []map[string]any{{"id": 2, "seq": 1, "v": "y"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{1, 2} {
		var ttl *int
		if err := s.Query(`SELECT TTL(v) FROM ttl_kv WHERE id = ? AND seq = 1`, id).Scan(&ttl); err != nil {
			t.Fatal(err)
		}
		if ttl == nil || *ttl < 590 || *ttl > 600 {
			t.Errorf("id %d: TTL(v) = %v, want the table default 600", id, ttl)
		}
	}
	// WithTTL still overrides it.
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 3, "seq": 1, "v": "z"}, overwrite.WithTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var ttl int
	if err := s.Query(`SELECT TTL(v) FROM ttl_kv WHERE id = 3 AND seq = 1`).Scan(&ttl); err != nil || ttl < 3590 {
		t.Fatalf("WithTTL(1h): TTL(v) = %d (%v)", ttl, err)
	}
}

// TestOverwriteListNotDuplicatedOnRetry: a whole non-frozen list is keyed by server-side
// TimeUUIDs, so a re-sent overwrite appends a second copy ([7 8] → [7 8 7 8]) even with
// the same timestamps. The response to the first attempt is dropped after Cassandra
// applied it: the library must not re-send it, and says the outcome is unknown. A row
// whose list is empty or absent, and a frozen list, stay retried.
func TestOverwriteListNotDuplicatedOnRetry(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TABLE lists (id int PRIMARY KEY, l list<int>, fl frozen<list<int>>, v text)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	tbl := describe(t, s, ks, "lists")
	p := retry.NewPolicy(retry.WithMaxAttempts(5), retry.WithBackoff(time.Millisecond, 10*time.Millisecond))
	isBatch := func(r faultproxy.Request) bool { return r.Opcode == faultproxy.OpBatch }

	for _, via := range []string{"Row", "Partition"} {
		id := map[string]int{"Row": 1, "Partition": 2}[via]
		row := map[string]any{"id": id, "l": []int{7, 8}, "v": "x"}
		px.SetRule(faultproxy.DropNext(1, isBatch))
		var err error
		if via == "Row" {
			_, err = overwrite.Row(ctx, s, tbl, row, overwrite.WithRetryPolicy(p))
		} else {
			_, err = overwrite.Partition(ctx, s, tbl, []map[string]any{row}, overwrite.WithRetryPolicy(p))
		}
		var ou *retry.OutcomeUnknownError
		if !errors.As(err, &ou) || ou.Idempotent || !errors.Is(err, retry.ErrNotIdempotent) {
			t.Errorf("%s: err = %v, want a non-idempotent *retry.OutcomeUnknownError", via, err)
		}
		var l []int
		if err := s0.Query(`SELECT l FROM lists WHERE id = ?`, id).Scan(&l); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(l) != "[7 8]" {
			t.Errorf("%s: l = %v after a dropped response, want [7 8]", via, l)
		}
	}

	// Frozen list, and a row without list elements: repeatable, so retried.
	px.SetRule(faultproxy.DropNext(2, isBatch))
	for id, row := range map[int]map[string]any{
		3: {"id": 3, "fl": []int{7, 8}, "v": "x"},
		4: {"id": 4, "l": []int{}, "v": "y"},
	} {
		if _, err := overwrite.Row(ctx, s, tbl, row, overwrite.WithRetryPolicy(p)); err != nil {
			t.Errorf("id %d: %v (want retried to success)", id, err)
		}
	}
	if px.Stats().Dropped.Load() != 4 {
		t.Fatalf("dropped %d responses, want 4", px.Stats().Dropped.Load())
	}
	var fl []int
	if err := s0.Query(`SELECT fl FROM lists WHERE id = 3`).Scan(&fl); err != nil || fmt.Sprint(fl) != "[7 8]" {
		t.Fatalf("frozen list = %v (%v), want [7 8]", fl, err)
	}
}

// TestOverwriteRefusesListReapply: overwrite's docs still promise that an
// overwrite is idempotent and that WithTimestamp re-applies one "with its original
// timestamp" (and the package doc: "so an overwrite is idempotent"). With a non-empty
// non-frozen list the library no longer retries, but a caller following the docs
// re-applies and the list duplicates; nothing refuses the second call.
func TestOverwriteRefusesListReapply(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE ol (id int PRIMARY KEY, l list<int>, v text)`)
	tbl := describe(t, s, ks, "ol")
	row := map[string]any{"id": 1, "l": []int{7, 8}, "v": "x"}
	res, err := overwrite.Row(ctx, s, tbl, row)
	if err != nil {
		t.Fatal(err)
	}
	// What a caller does after an OutcomeUnknownError, as WithTimestamp's doc says.
	_, err = overwrite.Row(ctx, s, tbl, row, overwrite.WithTimestamp(res.Timestamp))
	t.Logf("re-apply with WithTimestamp(%d): %v", res.Timestamp, err)
	if got := listOf(t, s, "ol", 1); got != "[7 8]" && err == nil {
		t.Errorf("l = %s after re-applying with the original timestamp, want [7 8] or an error refusing it", got)
	}
}

// TestOverwriteUDT: UDT values — frozen, non-frozen, and inside collections — given
// as maps or structs with cql tags are written and read back (gocql's schema metadata
// calls a UDT custom(); before, every UDT value was ErrBadValue).
func TestOverwriteUDT(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TYPE addr (street text, zip int)`,
		`CREATE TYPE person (name text, home frozen<addr>)`,
		`CREATE TABLE udts (id int PRIMARY KEY, f frozen<addr>, nf addr, p frozen<person>, l list<frozen<addr>>, m map<text, frozen<addr>>, s text)`)
	tbl := describe(t, s, ks, "udts")
	type addr struct {
		Street string `cql:"street"`
		Zip    int    `cql:"zip"`
	}
	row := map[string]any{"id": 1,
		"f":  map[string]any{"street": "Main", "zip": 10},
		"nf": addr{Street: "Side", Zip: 20},
		"p":  map[string]any{"name": "Ada", "home": map[string]any{"street": "Home", "zip": 30}},
		"l":  []addr{{"A", 1}, {"B", 2}},
		"m":  map[string]addr{"k": {"K", 3}},
	}
	if _, err := overwrite.Row(ctx, s, tbl, row); err != nil {
		t.Fatal(err)
	}
	var f, nf addr
	var p map[string]any
	var l []addr
	var m map[string]addr
	if err := s.Query(`SELECT f, nf, p, l, m FROM udts WHERE id = 1`).Scan(&f, &nf, &p, &l, &m); err != nil {
		t.Fatal(err)
	}
	home, _ := p["home"].(map[string]any)
	if f != (addr{"Main", 10}) || nf != (addr{"Side", 20}) || p["name"] != "Ada" || home["street"] != "Home" ||
		fmt.Sprint(l) != "[{A 1} {B 2}]" || m["k"] != (addr{"K", 3}) {
		t.Fatalf("read back f=%v nf=%v p=%v l=%v m=%v", f, nf, p, l, m)
	}
	// A value that does not fit the UDT is still a typed error naming the column.
	_, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 2, "f": map[string]any{"zip": "x"}})
	var te *overwrite.Error
	if !errors.Is(err, overwrite.ErrBadValue) || !errors.As(err, &te) || te.Column != "f" {
		t.Fatalf("bad UDT value: %v", err)
	}
}

// TestOverwriteTuple: on a table with tuple columns, a row without the tuple and a row
// with it (slice, struct, nested tuple, NULL element) are written and read back.
// gocql v1.7.0 counts a tuple bind marker as one value per element; before, every
// overwrite of such a table failed with "expected N values send got M".
func TestOverwriteTuple(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE tuples (id int, c int, tp tuple<int, text>, nt frozen<tuple<int, tuple<text, bigint>>>, s text, PRIMARY KEY (id, c))`)
	tbl := describe(t, s, ks, "tuples")
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 1, "c": 1, "s": "no tuple"}); err != nil {
		t.Fatalf("row without tuple: %v", err)
	}
	type pair struct {
		N int
		S *string
	}
	if _, err := overwrite.Partition(ctx, s, tbl, []map[string]any{
		{"id": 2, "c": 1, "tp": []any{7, "x"}, "nt": []any{1, []any{"y", int64(9)}}},
		{"id": 2, "c": 2, "tp": pair{N: 8}}, // NULL element
	}); err != nil {
		t.Fatalf("rows with tuples: %v", err)
	}
	var str string
	var tpN *int
	var tpS *string
	if err := s.Query(`SELECT s, tp FROM tuples WHERE id = 1 AND c = 1`).Scan(&str, &tpN, &tpS); err != nil || str != "no tuple" || tpN != nil {
		t.Fatalf("row 1: s=%q tp=%v %v", str, tpN, err)
	}
	var n, nn int
	var s1 string
	var inner struct {
		S string
		B int64
	}
	if err := s.Query(`SELECT tp, nt FROM tuples WHERE id = 2 AND c = 1`).Scan(&n, &s1, &nn, &inner); err != nil {
		t.Fatal(err)
	}
	if n != 7 || s1 != "x" || nn != 1 || inner.S != "y" || inner.B != 9 {
		t.Fatalf("row 2/1: tp=(%d, %q) nt=(%d, %+v)", n, s1, nn, inner)
	}
	if err := s.Query(`SELECT tp FROM tuples WHERE id = 2 AND c = 2`).Scan(&tpN, &tpS); err != nil || tpN == nil || *tpN != 8 || tpS != nil {
		t.Fatalf("row 2/2: tp=(%v, %v) %v", tpN, tpS, err)
	}
	var te *overwrite.Error
	if _, err := overwrite.Row(ctx, s, tbl, map[string]any{"id": 3, "c": 1, "tp": []any{1}}); !errors.Is(err, overwrite.ErrBadValue) || !errors.As(err, &te) || te.Column != "tp" {
		t.Fatalf("tuple of the wrong size: %v", err)
	}
}

// TestOverwriteConsistencyAny: overwrite.WithConsistency(gocql.Any) is silently
// ignored (the batch is sent at the session's consistency: `if o.consistency != 0`, and
// ANY is 0) — an accepted option value that does nothing. At ANY the write below
// succeeds; at the session's QUORUM it is Unavailable (RF 3 on one node).
func TestOverwriteConsistencyAny(t *testing.T) {
	s, _ := node.Keyspace(t)
	ks3 := review19Keyspace(t, s, 3)
	harness.Exec(t, s, `CREATE TABLE `+ks3+`.t (id int PRIMARY KEY, v text)`)
	tbl := describe(t, s, ks3, "t")
	// Control: ANY accepts this write on this node.
	if err := s.Query(`INSERT INTO ` + ks3 + `.t (id, v) VALUES (0, 'any')`).Consistency(gocql.Any).Exec(); err != nil {
		t.Fatalf("control: INSERT at ANY: %v", err)
	}
	_, err := overwrite.Row(context.Background(), s, tbl, map[string]any{"id": 1, "v": "x"}, overwrite.WithConsistency(gocql.Any))
	if err != nil {
		t.Errorf("overwrite.Row with WithConsistency(ANY): %v (sent at the session's consistency instead)", err)
	}
}
