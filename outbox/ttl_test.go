package outbox

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
)

// testTableTTL is the schema of the TTL tests: in keyspace ks, def has a default TTL of
// 100 s and d5 of 5 s; every other table has none.
func testTableTTL(ks, table string) (int, error) {
	if ks != "ks" {
		return 0, nil
	}
	switch table {
	case "def":
		return 100, nil
	case "d5":
		return 5, nil
	}
	return 0, nil
}

// TestOutboxShortenTTL: each way a statement gets a TTL, 10 s after the first attempt.
func TestOutboxShortenTTL(t *testing.T) {
	unset := gocql.UnsetValue
	for _, c := range []struct {
		name       string
		cql        string
		values     []any
		want       string // "" : unchanged
		wantValues []any  // nil: unchanged
		expired    bool
		unknown    bool
	}{
		{name: "literal", cql: `INSERT INTO t (k, v) VALUES (?, ?) USING TTL 100`, values: []any{1, "x"},
			want: `INSERT INTO t (k, v) VALUES (?, ?) USING TTL 90`},
		{name: "literal lower case, ran out: TTL 1", cql: `insert into t (k) values (1) using ttl 5`, want: `insert into t (k) values (1) using ttl 1`, expired: true},
		{name: "literal exactly run out", cql: `INSERT INTO t (k) VALUES (1) USING TTL 10`, want: `INSERT INTO t (k) VALUES (1) USING TTL 1`, expired: true},
		{name: "literal one second left", cql: `INSERT INTO t (k) VALUES (1) USING TTL 11`, want: `INSERT INTO t (k) VALUES (1) USING TTL 1`},
		{name: "after timestamp", cql: `INSERT INTO t (k) VALUES (1) USING TIMESTAMP 5 AND TTL 100`,
			want: `INSERT INTO t (k) VALUES (1) USING TIMESTAMP 5 AND TTL 90`},
		{name: "before timestamp", cql: `UPDATE t USING TTL 100 AND TIMESTAMP 5 SET v = 1 WHERE k = 1`,
			want: `UPDATE t USING TTL 90 AND TIMESTAMP 5 SET v = 1 WHERE k = 1`},
		{name: "comments kept", cql: "INSERT INTO t (k) VALUES (1) USING TTL /* c */ 0100 -- x",
			want: "INSERT INTO t (k) VALUES (1) USING TTL /* c */ 90 -- x"},
		{name: "bound", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1, int32(100)},
			wantValues: []any{1, int32(90)}},
		{name: "bound named, int64", cql: `UPDATE t USING TTL :ttl SET v = :v WHERE k = :k`, values: []any{int64(100), "x", 1},
			wantValues: []any{int64(90), "x", 1}},
		{name: "bound after timestamp marker", cql: `UPDATE t USING TIMESTAMP ? AND TTL ? SET v = ? WHERE k = ?`,
			values: []any{int64(7), uint16(100), "x", 1}, wantValues: []any{int64(7), uint16(90), "x", 1}},
		{name: "bound string", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1, "100"}, wantValues: []any{1, "90"}},
		{name: "bound ran out", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1, int16(3)}, wantValues: []any{1, int16(1)}, expired: true},
		{name: "bound zero: no expiry", cql: `INSERT INTO def (k) VALUES (?) USING TTL ?`, values: []any{1, 0}},
		{name: "literal zero: no expiry", cql: `INSERT INTO def (k) VALUES (1) USING TTL 0`},
		{name: "bound unset: table default", cql: `INSERT INTO def (k) VALUES (?) USING TTL ?`, values: []any{1, unset},
			wantValues: []any{1, 90}},
		{name: "bound unset, no default", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1, unset}},
		{name: "default insert", cql: `INSERT INTO def (k) VALUES (1)`, want: `INSERT INTO def (k) VALUES (1) USING TTL 90`},
		{name: "default insert with ;", cql: `INSERT INTO def (k) VALUES (1) ;`, want: `INSERT INTO def (k) VALUES (1) USING TTL 90 ;`},
		{name: "default insert, comment", cql: "INSERT INTO def (k) VALUES (1) -- note",
			want: "INSERT INTO def (k) VALUES (1) USING TTL 90 -- note"},
		{name: "default insert with timestamp", cql: `INSERT INTO def (k) VALUES (1) USING TIMESTAMP 7`,
			want: `INSERT INTO def (k) VALUES (1) USING TIMESTAMP 7 AND TTL 90`},
		{name: "default insert json", cql: `INSERT INTO def JSON ? DEFAULT UNSET`, values: []any{`{"k": 1}`},
			want: `INSERT INTO def JSON ? DEFAULT UNSET USING TTL 90`},
		{name: "default update", cql: `UPDATE def SET v = 1 WHERE k = 1`, want: `UPDATE def USING TTL 90 SET v = 1 WHERE k = 1`},
		{name: "default update qualified", cql: `UPDATE "ks"."def" SET v = 1 WHERE k = 1`,
			want: `UPDATE "ks"."def" USING TTL 90 SET v = 1 WHERE k = 1`},
		{name: "other keyspace", cql: `UPDATE other.def SET v = 1 WHERE k = 1`},
		{name: "quoted table is case sensitive", cql: `UPDATE "Def" SET v = 1 WHERE k = 1`},
		{name: "default update with timestamp", cql: `UPDATE def USING TIMESTAMP 3 SET v = 1 WHERE k = 1`,
			want: `UPDATE def USING TIMESTAMP 3 AND TTL 90 SET v = 1 WHERE k = 1`},
		{name: "default ran out", cql: `UPDATE d5 SET v = 1 WHERE k = 1`, want: `UPDATE d5 USING TTL 1 SET v = 1 WHERE k = 1`, expired: true},
		{name: "null ran out: still sent", cql: `INSERT INTO t (k, v, b) VALUES (?, ?, ?) USING TTL 2`, values: []any{1, "x", nil},
			want: `INSERT INTO t (k, v, b) VALUES (?, ?, ?) USING TTL 1`, expired: true},
		{name: "no default", cql: `INSERT INTO t (k) VALUES (1)`},
		{name: "delete", cql: `DELETE FROM def USING TIMESTAMP 3 WHERE k = 1`},
		{name: "select", cql: `SELECT ttl FROM def WHERE k = 1`},
		{name: "empty", cql: ``},
		{name: "batch text: ran out TTL 1, rest shortened",
			cql: `BEGIN BATCH INSERT INTO t (k, v) VALUES (?, ?) USING TTL ?; INSERT INTO t (k, v) VALUES (?, ?) USING TTL 100; ` +
				`DELETE FROM t WHERE k = ?; APPLY BATCH`,
			values:     []any{1, "a", 5, 2, "b", 3},
			want:       `BEGIN BATCH INSERT INTO t (k, v) VALUES (?, ?) USING TTL ?; INSERT INTO t (k, v) VALUES (?, ?) USING TTL 90; DELETE FROM t WHERE k = ?; APPLY BATCH`,
			wantValues: []any{1, "a", 1, 2, "b", 3}},
		{name: "batch text without semicolons, table default",
			cql:  `BEGIN UNLOGGED BATCH USING TIMESTAMP 9 INSERT INTO def (k) VALUES (1) UPDATE def SET v = 2 WHERE k = 1 APPLY BATCH`,
			want: `BEGIN UNLOGGED BATCH USING TIMESTAMP 9 INSERT INTO def (k) VALUES (1) USING TTL 90 UPDATE def USING TTL 90 SET v = 2 WHERE k = 1 APPLY BATCH`},
		{name: "batch text all ran out", cql: `BEGIN BATCH INSERT INTO d5 (k) VALUES (1); UPDATE t USING TTL 2 SET v = 1 WHERE k = 1; APPLY BATCH;`,
			want: `BEGIN BATCH INSERT INTO d5 (k) VALUES (1) USING TTL 1; UPDATE t USING TTL 1 SET v = 1 WHERE k = 1; APPLY BATCH;`, expired: true},
		{name: "batch text, one ran out and a delete", cql: `BEGIN BATCH INSERT INTO d5 (k) VALUES (1); DELETE FROM t WHERE k = 1; APPLY BATCH`,
			want: `BEGIN BATCH INSERT INTO d5 (k) VALUES (1) USING TTL 1; DELETE FROM t WHERE k = 1; APPLY BATCH`},
		{name: "batch text, last one ran out", cql: `BEGIN BATCH INSERT INTO t (k) VALUES (?) USING TTL 50; INSERT INTO d5 (k) VALUES (?); APPLY BATCH`,
			values: []any{1, 2}, want: `BEGIN BATCH INSERT INTO t (k) VALUES (?) USING TTL 40; INSERT INTO d5 (k) VALUES (?) USING TTL 1; APPLY BATCH`},
		{name: "hex literal", cql: `INSERT INTO t (k) VALUES (1) USING TTL 0x10`, unknown: true},
		{name: "negative literal", cql: `INSERT INTO t (k) VALUES (1) USING TTL -1`, unknown: true},
		{name: "float literal", cql: `INSERT INTO t (k) VALUES (1) USING TTL 1.5`, unknown: true},
		{name: "out of range literal", cql: `INSERT INTO t (k) VALUES (1) USING TTL 99999999999`, unknown: true},
		{name: "bound null", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1, nil}, unknown: true},
		{name: "bound text", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1, "soon"}, unknown: true},
		{name: "bound float", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1, 100.0}, unknown: true},
		{name: "too few values", cql: `INSERT INTO t (k) VALUES (?) USING TTL ?`, values: []any{1}, unknown: true},
		{name: "too many values", cql: `INSERT INTO t (k) VALUES (?) USING TTL 100`, values: []any{1, 2}, unknown: true},
		{name: "two TTLs", cql: `INSERT INTO t (k) VALUES (1) USING TTL 100 AND TTL 50`, unknown: true},
		{name: "clause not at the end", cql: `INSERT INTO t (k) VALUES (1) USING TTL 100 IF NOT EXISTS`, unknown: true},
		{name: "update without set", cql: `UPDATE def WHERE k = 1`, unknown: true},
		{name: "does not lex", cql: `INSERT INTO t (k) VALUES ('x) USING TTL 100`, unknown: true},
		{name: "batch text without apply", cql: `BEGIN BATCH INSERT INTO t (k) VALUES (1) USING TTL 100`, unknown: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]any(nil), c.values...)
			got, err := shortenTTL(c.cql, c.values, "ks", 10, testTableTTL)
			if err != nil {
				t.Fatal(err)
			}
			want, wantValues := c.want, c.wantValues
			if want == "" {
				want = c.cql
			}
			if wantValues == nil {
				wantValues = c.values
			}
			if got.expired != c.expired || got.unknown != c.unknown {
				t.Fatalf("expired %v unknown %v, want %v %v", got.expired, got.unknown, c.expired, c.unknown)
			}
			if !reflect.DeepEqual(c.values, in) {
				t.Fatalf("bound values changed in place: %v", c.values)
			}
			if got.cql != want || !reflect.DeepEqual(got.values, wantValues) {
				t.Fatalf("got\n %s %#v\nwant\n %s %#v", got.cql, got.values, want, wantValues)
			}
			if changed := got.cql != c.cql || !reflect.DeepEqual(got.values, c.values); got.changed != changed {
				t.Fatalf("changed = %v, want %v", got.changed, changed)
			}
		})
	}
}

// TestOutboxShortenTTLLookupError: a default_time_to_live that cannot be read fails the
// statement (the replay keeps the record), rather than replaying a TTL it cannot bound.
func TestOutboxShortenTTLLookupError(t *testing.T) {
	boom := errors.New("boom")
	_, err := shortenTTL(`INSERT INTO def (k) VALUES (1)`, nil, "ks", 10, func(string, string) (int, error) { return 0, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	// Statements that give a TTL, or cannot take one, never ask.
	for _, cql := range []string{`INSERT INTO def (k) VALUES (1) USING TTL 100`, `DELETE FROM def WHERE k = 1`, `SELECT * FROM def`} {
		if _, err := shortenTTL(cql, nil, "ks", 10, func(string, string) (int, error) { return 0, boom }); err != nil {
			t.Errorf("%s: %v", cql, err)
		}
	}
}

func TestOutboxElapsedSeconds(t *testing.T) {
	for _, c := range []struct {
		ts, now int64
		want    int64
		ok      bool
	}{
		{1_000_000, 1_000_000, 0, true},
		{1_000_000, 1_000_001, 1, true}, // rounded up: the TTL left never outlives the first attempt's
		{1_000_000, 3_000_000, 2, true},
		{1_000_000, 3_000_001, 3, true},
		{1_000_001, 1_000_000, 0, false}, // in the future
		{-1<<63 + 1, 1 << 62, (1<<63 - 1) / 1_000_000, true},
	} {
		got, ok := elapsedSeconds(c.ts, c.now)
		if got != c.want || ok != c.ok {
			t.Errorf("elapsedSeconds(%d, %d) = %d, %v; want %d, %v", c.ts, c.now, got, ok, c.want, c.ok)
		}
	}
}

// TestOutboxReplayTTL: a record is judged per statement: in a batch what ran out is sent
// with TTL 1 and the rest shortened, a record whose every TTL ran out is expired (and
// sent), and a record stamped in the future is sent as recorded.
func TestOutboxReplayTTL(t *testing.T) {
	const now = 100_000_000_000 // µs
	ago := func(s int64) int64 { return now - s*1_000_000 }
	batch := &retry.OutcomeUnknownError{Batch: true, Timestamp: ago(10), Statements: []retry.Statement{
		{CQL: `INSERT INTO t (k) VALUES (?) USING TTL 5`, Values: []any{1}},
		{CQL: `INSERT INTO t (k) VALUES (?) USING TTL 100`, Values: []any{2}},
		{CQL: `DELETE FROM t WHERE k = ?`, Values: []any{3}},
	}}
	got, note, err := replayTTL(batch, now, "ks", testTableTTL)
	want := []retry.Statement{
		{CQL: `INSERT INTO t (k) VALUES (?) USING TTL 1`, Values: []any{1}},
		{CQL: `INSERT INTO t (k) VALUES (?) USING TTL 90`, Values: []any{2}},
		{CQL: `DELETE FROM t WHERE k = ?`, Values: []any{3}},
	}
	if err != nil || note != ttlShortened || !reflect.DeepEqual(got, want) {
		t.Fatalf("batch: %v %v %v", got, note, err)
	}
	expired := &retry.OutcomeUnknownError{Batch: true, Timestamp: ago(10), Statements: batch.Statements[:1]}
	if got, note, err := replayTTL(expired, now, "ks", testTableTTL); err != nil || note != ttlExpired || !reflect.DeepEqual(got, want[:1]) {
		t.Fatalf("expired: %v %v %v", got, note, err)
	}
	future := &retry.OutcomeUnknownError{Timestamp: now + 1, Statements: batch.Statements[:1]}
	if got, note, err := replayTTL(future, now, "ks", testTableTTL); err != nil || note != ttlAsRecorded || !reflect.DeepEqual(got, future.Statements) {
		t.Fatalf("future: %v %v %v", got, note, err)
	}
	plain := &retry.OutcomeUnknownError{Timestamp: now + 1, Statements: batch.Statements[2:]}
	if _, note, err := replayTTL(plain, now, "ks", testTableTTL); err != nil || note != ttlNoTTL {
		t.Fatalf("no TTL, future: %v %v", note, err)
	}
	unread := &retry.OutcomeUnknownError{Timestamp: ago(1), Statements: []retry.Statement{{CQL: `INSERT INTO t (k) VALUES (1) USING TTL 0x10`}}}
	if _, note, err := replayTTL(unread, now, "ks", testTableTTL); err != nil || note != ttlAsRecorded {
		t.Fatalf("unreadable TTL: %v %v", note, err)
	}
}

// TestOutboxReplayCountsExpired: a record the sender reports expired (sent with TTL 1)
// is applied, removed, and counted apart.
func TestOutboxReplayCountsExpired(t *testing.T) {
	o, _ := openTestOutbox(t)
	for i := 1; i <= 4; i++ {
		if err := o.Append(kvWrite(i, int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	var rep ReplayReport
	n, err := o.replay(context.Background(), &rep, func(_ context.Context, e *retry.OutcomeUnknownError, _ gocql.BatchType) (ttlNote, error) {
		return []ttlNote{ttlExpired, ttlShortened, ttlAsRecorded, ttlNoTTL}[e.Timestamp-1], nil
	})
	if want := (ReplayReport{Applied: 4, Expired: 1, Shortened: 1, TTLAsRecorded: 1}); err != nil || n != 4 || rep != want {
		t.Fatalf("replay = %d, %+v, %v; want 4, %+v", n, rep, err, want)
	}
	if got := pendingTimestamps(t, o); len(got) != 0 {
		t.Fatalf("pending = %v", got)
	}
}

// FuzzOutboxShortenTTL: the rewrite never panics; what lexed still lexes; it keeps every
// bound value; and it is stable: rewriting its output with no time elapsed changes
// nothing.
func FuzzOutboxShortenTTL(f *testing.F) {
	for _, s := range []string{
		`INSERT INTO t (k, v) VALUES (?, ?) USING TTL 100`,
		`UPDATE def USING TIMESTAMP ? AND TTL ? SET v = ? WHERE k = ?`,
		`INSERT INTO def JSON ? DEFAULT UNSET;`,
		`UPDATE "ks".def SET v = 1 WHERE k = 1 -- c`,
		`BEGIN BATCH INSERT INTO t (k, v) VALUES (?, ?) USING TTL ?; INSERT INTO d5 (k) VALUES (?) UPDATE def SET v = ? WHERE k = ? APPLY BATCH`,
		`DELETE FROM def WHERE k = ?`,
		`INSERT INTO t (k) VALUES (1) USING TTL 0x10`,
	} {
		f.Add(s, int64(10), uint8(2), int64(100))
		f.Add(s, int64(3), uint8(3), int64(4))
	}
	f.Fuzz(func(t *testing.T, cql string, elapsed int64, nvals uint8, v int64) {
		if elapsed < 0 {
			elapsed = -elapsed
		}
		elapsed %= 1 << 40
		// As many values as markers (what Cassandra accepts), or, for odd nvals, any number.
		n := int(nvals % 8)
		if toks, err := cqltext.Lex(cql); err == nil && nvals%2 == 0 {
			n = 0
			for _, tk := range toks {
				if tk.Kind == cqltext.Bind {
					n++
				}
			}
		}
		values := make([]any, n)
		for i := range values {
			switch i % 4 {
			case 0:
				values[i] = v
			case 1:
				values[i] = int32(v)
			case 2:
				values[i] = gocql.UnsetValue
			default:
				values[i] = "x"
			}
		}
		r, err := shortenTTL(cql, values, "ks", elapsed, testTableTTL)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.values) != len(values) {
			t.Fatalf("%d values from %d", len(r.values), len(values))
		}
		if !r.changed && (r.cql != cql || !reflect.DeepEqual(r.values, values)) {
			t.Fatalf("unchanged but rewritten: %q %v", r.cql, r.values)
		}
		in, err := cqltext.Lex(cql)
		if err != nil {
			return
		}
		toks, err := cqltext.Lex(r.cql)
		if err != nil {
			t.Fatalf("rewrite of %q does not lex: %q: %v", cql, r.cql, err)
		}
		binds := func(toks []cqltext.Token) (n int) {
			for _, tk := range toks {
				if tk.Kind == cqltext.Bind {
					n++
				}
			}
			return n
		}
		if binds(toks) != binds(in) {
			t.Fatalf("%q: %d markers after the rewrite of %q (%d)", r.cql, binds(toks), cql, binds(in))
		}
		again, err := shortenTTL(r.cql, r.values, "ks", 0, testTableTTL)
		if err != nil || again.cql != r.cql || !reflect.DeepEqual(again.values, r.values) {
			t.Fatalf("not stable:\n %q %v\n %q %v (expired %v, %v)", r.cql, r.values, again.cql, again.values, again.expired, err)
		}
	})
}
