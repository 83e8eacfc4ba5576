package suite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/integration/internal/scenario"
	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/retry"
)

// batchLogged is the batch type byte of a LOGGED batch: the first byte of a BATCH
// request body (native protocol v4 §4.1.7; 1 is UNLOGGED, 2 COUNTER).
const batchLogged = 0

func kvRecord(id int, v string, ts int64) *retry.OutcomeUnknownError {
	return &retry.OutcomeUnknownError{
		Statements: []retry.Statement{{CQL: `INSERT INTO kv (id, v) VALUES (?, ?)`, Values: []any{id, v}}},
		Timestamp:  ts, Idempotent: true, Err: gocql.ErrTimeoutNoResponse,
	}
}

// writeRawOutboxRecord appends one record to the outbox file at path in its on-disk
// format (length, CRC-32C, JSON), as an older version of the library or a hand edit
// would have left it. The outbox must not be open.
func writeRawOutboxRecord(t *testing.T, path, payload string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hdr := make([]byte, 8)
	binary.BigEndian.PutUint32(hdr[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(hdr[4:8], crc32.Checksum([]byte(payload), crc32.MakeTable(crc32.Castagnoli)))
	if _, err := f.Write(append(hdr, payload...)); err != nil {
		t.Fatal(err)
	}
}

// batchTypes records the type byte of every BATCH request the proxy forwards.
type batchTypes struct {
	mu    sync.Mutex
	types []byte
}

func (b *batchTypes) rule(r faultproxy.Request) faultproxy.Action {
	if r.Opcode == faultproxy.OpBatch && len(r.Body) > 0 {
		b.mu.Lock()
		b.types = append(b.types, r.Body[0])
		b.mu.Unlock()
	}
	return faultproxy.Forward
}

func (b *batchTypes) get() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.types...)
}

// allEqual: b is not empty and every element is v.
func allEqual(b []byte, v byte) bool {
	for _, x := range b {
		if x != v {
			return false
		}
	}
	return len(b) > 0
}

func readKV(t *testing.T, s *gocql.Session, table string, id int) (v string, wt int64, found bool) {
	t.Helper()
	err := s.Query(fmt.Sprintf(`SELECT v, WRITETIME(v) FROM %s WHERE id = ?`, table), id).Scan(&v, &wt)
	if errors.Is(err, gocql.ErrNotFound) {
		return "", 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return v, wt, true
}

// TestOutboxReplayKeepsConcurrentAppends: a write whose outcome became unknown is
// appended while Replay is re-sending an older record (here: from the proxy's view of
// the replayed request, i.e. between Replay's snapshot and its clean-up). After Replay
// the new record must still be pending, and a second Replay must apply it.
func TestOutboxReplayKeepsConcurrentAppends(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 5*time.Second)
	ob, err := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	ts1 := time.Now().UnixMicro()
	ts2 := ts1 + 1000
	if err := ob.Append(kvRecord(1, "one", ts1)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var appendErr error
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() && strings.Contains(r.CQL, "INSERT INTO kv") {
			once.Do(func() { appendErr = ob.Append(kvRecord(2, "two", ts2)) })
		}
		return faultproxy.Forward
	})
	ctx := context.Background()
	n, err := ob.Replay(ctx, s, retry.NewPolicy())
	if err != nil || n != 1 {
		t.Fatalf("replay = %d, %v; want 1 applied", n, err)
	}
	if appendErr != nil {
		t.Fatal(appendErr)
	}
	pending, err := ob.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Timestamp != ts2 {
		t.Fatalf("after replay %d record(s) pending, want the one appended during it (ts %d): %v", len(pending), ts2, pending)
	}
	if _, _, found := readKV(t, s0, "kv", 2); found {
		t.Fatal("row 2 exists before it was replayed")
	}
	if n, err := ob.Replay(ctx, s, retry.NewPolicy()); err != nil || n != 1 {
		t.Fatalf("second replay = %d, %v; want 1", n, err)
	}
	for id, want := range map[int]int64{1: ts1, 2: ts2} {
		if _, wt, found := readKV(t, s0, "kv", id); !found || wt != want {
			t.Errorf("row %d: found=%v writetime=%d, want %d", id, found, wt, want)
		}
	}
	if pending, _ := ob.Pending(); len(pending) != 0 {
		t.Fatalf("%d record(s) still pending", len(pending))
	}
}

// TestOutboxReplaysBatchWithItsType: a batch across two tables whose outcome stayed
// unknown is recorded and replayed with its own type on the wire: a LOGGED batch stays
// LOGGED (type byte 0), so its two partitions still apply all-or-nothing, and an
// UNLOGGED one stays UNLOGGED (1). Both rows end at the batch's one timestamp.
func TestOutboxReplaysBatchWithItsType(t *testing.T) {
	for _, c := range []struct {
		name string
		typ  gocql.BatchType
		wire byte
	}{{"logged", gocql.LoggedBatch, 0}, {"unlogged", gocql.UnloggedBatch, 1}} {
		t.Run(c.name, func(t *testing.T) {
			s0, ks := node.Keyspace(t)
			harness.Exec(t, s0, `CREATE TABLE a (id int PRIMARY KEY, v text)`)
			harness.Exec(t, s0, `CREATE TABLE b (id int PRIMARY KEY, v text)`)
			s, px := proxied(t, ks, 5*time.Second)
			ob, err := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
			if err != nil {
				t.Fatal(err)
			}
			defer ob.Close()
			p := retry.NewPolicy(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithOutbox(ob))
			var sent batchTypes
			px.SetRule(func(r faultproxy.Request) faultproxy.Action {
				if r.Opcode == faultproxy.OpBatch {
					sent.rule(r)
					return faultproxy.Reset // applied by the server, the client never hears
				}
				return faultproxy.Forward
			})
			ctx := context.Background()
			b := s.NewBatch(c.typ)
			b.Query(`INSERT INTO a (id, v) VALUES (?, ?)`, 1, "a1")
			b.Query(`INSERT INTO b (id, v) VALUES (?, ?)`, 2, "b2")
			err = p.ExecBatch(ctx, s, b)
			var ou *retry.OutcomeUnknownError
			if !errors.As(err, &ou) {
				t.Fatalf("err = %v, want outcome unknown", err)
			}
			if got := sent.get(); !allEqual(got, c.wire) {
				t.Fatalf("first execution sent batch types %v, want %d", got, c.wire)
			}
			// Remove what the first execution applied, so the rows read afterwards can
			// only come from the replay.
			harness.Exec(t, s0, `TRUNCATE a`)
			harness.Exec(t, s0, `TRUNCATE b`)

			var replayed batchTypes
			px.SetRule(replayed.rule)
			n, err := ob.Replay(ctx, s, p)
			if err != nil || n != 1 {
				t.Fatalf("replay = %d, %v; want 1", n, err)
			}
			if got := replayed.get(); !allEqual(got, c.wire) {
				t.Fatalf("replay sent batch types %v, want batches (one, or its retries) of type %d", got, c.wire)
			}
			for tbl, id := range map[string]int{"a": 1, "b": 2} {
				if v, wt, found := readKV(t, s0, tbl, id); !found || wt != ou.Timestamp || v != tbl+fmt.Sprint(id) {
					t.Errorf("%s row %d: found=%v v=%q writetime=%d, want the batch's timestamp %d", tbl, id, found, v, wt, ou.Timestamp)
				}
			}
		})
	}
}

// TestOutboxReplaysOldRecordsAsLogged: records written before the outbox stored
// the batch type (no "type" field) replay as LOGGED: the original may have been a
// logged batch, and a logged replay of an unlogged one is equivalent (Cassandra skips
// the batch log for a single partition), while the converse breaks atomicity.
func TestOutboxReplaysOldRecordsAsLogged(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE a (id int PRIMARY KEY, v text)`)
	harness.Exec(t, s0, `CREATE TABLE b (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 5*time.Second)
	path := filepath.Join(t.TempDir(), "outbox")
	ts := time.Now().UnixMicro()
	writeRawOutboxRecord(t, path, fmt.Sprintf(`{"batch":true,"ts":%d,"stmts":[`+
		`{"cql":"INSERT INTO a (id, v) VALUES (?, ?)","values":[{"t":"int","v":"1"},{"t":"string","v":"a1"}]},`+
		`{"cql":"INSERT INTO b (id, v) VALUES (?, ?)","values":[{"t":"int","v":"2"},{"t":"string","v":"b2"}]}],`+
		`"recorded":"2026-01-02T03:04:05Z","err":"gocql: no response received from cassandra within timeout period"}`, ts))
	ob, err := outbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	var replayed batchTypes
	px.SetRule(replayed.rule)
	if n, err := ob.Replay(context.Background(), s, retry.NewPolicy()); err != nil || n != 1 {
		t.Fatalf("replay = %d, %v; want 1", n, err)
	}
	if got := replayed.get(); !allEqual(got, batchLogged) {
		t.Fatalf("replay of an old record sent batch types %v, want LOGGED (0) batches only", got)
	}
	for tbl, id := range map[string]int{"a": 1, "b": 2} {
		if _, wt, found := readKV(t, s0, tbl, id); !found || wt != ts {
			t.Errorf("%s row %d: found=%v writetime=%d, want %d", tbl, id, found, wt, ts)
		}
	}
}

// TestOutboxReplayRefusesNonIdempotent: a record that is not safe to apply twice
// (a list append: each execution adds an element) found in the outbox, e.g. written by
// an older version or by hand, is never sent by Replay; it stays pending and Replay
// reports ErrNotIdempotent, while the idempotent record after it is applied.
func TestOutboxReplayRefusesNonIdempotent(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE l (id int PRIMARY KEY, l list<int>)`)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 5*time.Second)
	path := filepath.Join(t.TempDir(), "outbox")
	ts := time.Now().UnixMicro()
	writeRawOutboxRecord(t, path, fmt.Sprintf(`{"ts":%d,"stmts":[{"cql":"UPDATE l SET l = l + [7] WHERE id = ?","values":[{"t":"int","v":"1"}]}],"recorded":"2026-01-02T03:04:05Z"}`, ts))
	writeRawOutboxRecord(t, path, fmt.Sprintf(`{"ts":%d,"stmts":[{"cql":"INSERT INTO kv (id, v) VALUES (?, ?)","values":[{"t":"int","v":"1"},{"t":"string","v":"one"}]}],"recorded":"2026-01-02T03:04:05Z"}`, ts))
	ob, err := outbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	var sentList bool
	var mu sync.Mutex
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if strings.Contains(r.CQL, "UPDATE l") && r.Opcode != faultproxy.OpPrepare {
			mu.Lock()
			sentList = true
			mu.Unlock()
		}
		return faultproxy.Forward
	})
	n, err := ob.Replay(context.Background(), s, retry.NewPolicy())
	if !errors.Is(err, retry.ErrNotIdempotent) {
		t.Errorf("replay err = %v, want ErrNotIdempotent", err)
	}
	if n != 1 {
		t.Errorf("replay applied %d, want 1 (the idempotent record)", n)
	}
	mu.Lock()
	if sentList {
		t.Error("replay sent the list append")
	}
	mu.Unlock()
	var got []int
	if err := s0.Query(`SELECT l FROM l WHERE id = 1`).Scan(&got); err != nil && !errors.Is(err, gocql.ErrNotFound) {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("list = %v after replay, want nothing written", got)
	}
	if _, wt, found := readKV(t, s0, "kv", 1); !found || wt != ts {
		t.Errorf("kv row 1: found=%v writetime=%d, want %d", found, wt, ts)
	}
	pending, err := ob.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || !strings.Contains(pending[0].Statements[0].CQL, "UPDATE l") {
		t.Fatalf("pending after replay = %v, want the refused list append kept", pending)
	}
}

// TestOutboxNeverReplaysNonFrozenListAssignment: assigning a list literal to a
// non-frozen list is not idempotent (Cassandra keys each element by a server-side
// TimeUUID: a repeat appends another copy), while the same assignment to a frozen list
// is. Replay judges each record against the session's schema: the frozen one is applied
// once however often Replay runs, the non-frozen one is never sent and stays pending.
func TestOutboxNeverReplaysNonFrozenListAssignment(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE l (id int PRIMARY KEY, l list<int>, f frozen<list<int>>)`)
	s, _ := proxied(t, ks, 5*time.Second)
	path := filepath.Join(t.TempDir(), "outbox")
	ts := time.Now().UnixMicro()
	writeRawOutboxRecord(t, path, fmt.Sprintf(`{"ts":%d,"stmts":[{"cql":"UPDATE l SET l = [1, 2] WHERE id = 1"}],"recorded":"2026-01-02T03:04:05Z"}`, ts))
	writeRawOutboxRecord(t, path, fmt.Sprintf(`{"ts":%d,"stmts":[{"cql":"UPDATE l SET f = [1, 2] WHERE id = 1"}],"recorded":"2026-01-02T03:04:05Z"}`, ts))
	ob, err := outbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	for i := 0; i < 2; i++ {
		n, err := ob.Replay(context.Background(), s, retry.NewPolicy())
		if !errors.Is(err, retry.ErrNotIdempotent) {
			t.Errorf("replay %d: err = %v, want ErrNotIdempotent for the non-frozen list", i+1, err)
		}
		if want := 1 - i; n != want {
			t.Errorf("replay %d applied %d, want %d", i+1, n, want)
		}
	}
	var l, f []int
	if err := s0.Query(`SELECT l, f FROM l WHERE id = 1`).Scan(&l, &f); err != nil {
		t.Fatal(err)
	}
	if len(l) != 0 || fmt.Sprint(f) != "[1 2]" {
		t.Errorf("after two replays l = %v (want nothing: never sent), f = %v (want [1 2])", l, f)
	}
	pending, err := ob.Pending()
	if err != nil || len(pending) != 1 || !strings.Contains(pending[0].Statements[0].CQL, "SET l =") {
		t.Fatalf("pending = %v, %v; want the non-frozen list assignment kept", pending, err)
	}
}

// ttlCase is one write with a TTL whose outcome stays unknown, for the outbox TTL tests.
type ttlCase struct {
	name  string
	ddl   []string          // tables it writes (one statement each)
	stmts []retry.Statement // one: a query; more: a LOGGED batch
	// short: TTL 2, expired before the replay; else TTL 100 (from the text, a bound
	// value or the table's default_time_to_live).
	short bool
	// keep: the first attempt's cells stay (else the table is truncated before the
	// replay, so what is read comes from the replay alone).
	keep bool
}

// TestOutboxReplayTTLExpiresWithFirstAttempt: Cassandra computes a cell's expiry from
// the time a write arrives, and at equal timestamps the cell expiring later wins. A
// write with a TTL whose response was lost is recorded; 3 s later the outbox replays it.
// A 2 s TTL (literal, bound, or the table's default_time_to_live) has run out: the
// replay sends it with TTL 1 (it must still hide older values: see
// scenario.ExpiredWriteStillHides), so a second later the row is gone. A 100 s TTL must
// be left with about 97 s, not 100: the replayed cells expire when the first attempt's
// would have, to the second.
func TestOutboxReplayTTLExpiresWithFirstAttempt(t *testing.T) {
	s0, ks := node.Keyspace(t)
	cases := []ttlCase{
		{name: "lit2", short: true, ddl: []string{`CREATE TABLE lit2 (id int PRIMARY KEY, v text)`},
			stmts: []retry.Statement{{CQL: `INSERT INTO lit2 (id, v) VALUES (?, ?) USING TTL 2`, Values: []any{1, "x"}}}},
		{name: "bnd2", short: true, ddl: []string{`CREATE TABLE bnd2 (id int PRIMARY KEY, v text)`},
			stmts: []retry.Statement{{CQL: `INSERT INTO bnd2 (id, v) VALUES (?, ?) USING TTL ?`, Values: []any{1, "x", 2}}}},
		{name: "def2", short: true, ddl: []string{`CREATE TABLE def2 (id int PRIMARY KEY, v text) WITH default_time_to_live = 2`},
			stmts: []retry.Statement{{CQL: `INSERT INTO def2 (id, v) VALUES (?, ?)`, Values: []any{1, "x"}}}},
		{name: "def2u", short: true, ddl: []string{`CREATE TABLE def2u (id int PRIMARY KEY, v text) WITH default_time_to_live = 2`},
			stmts: []retry.Statement{{CQL: `UPDATE def2u SET v = ? WHERE id = ?`, Values: []any{"x", 1}}}},
		{name: "lit100", ddl: []string{`CREATE TABLE lit100 (id int PRIMARY KEY, v text)`},
			stmts: []retry.Statement{{CQL: `INSERT INTO lit100 (id, v) VALUES (?, ?) USING TTL 100`, Values: []any{1, "x"}}}},
		{name: "lit100keep", keep: true, ddl: []string{`CREATE TABLE lit100keep (id int PRIMARY KEY, v text)`},
			stmts: []retry.Statement{{CQL: `INSERT INTO lit100keep (id, v) VALUES (?, ?) USING TTL 100`, Values: []any{1, "x"}}}},
		{name: "bnd100", ddl: []string{`CREATE TABLE bnd100 (id int PRIMARY KEY, v text)`},
			stmts: []retry.Statement{{CQL: `UPDATE bnd100 USING TTL ? SET v = ? WHERE id = ?`, Values: []any{100, "x", 1}}}},
		{name: "def100", ddl: []string{`CREATE TABLE def100 (id int PRIMARY KEY, v text) WITH default_time_to_live = 100`},
			stmts: []retry.Statement{{CQL: `INSERT INTO def100 (id, v) VALUES (?, ?)`, Values: []any{1, "x"}}}},
		{name: "def100u", ddl: []string{`CREATE TABLE def100u (id int PRIMARY KEY, v text) WITH default_time_to_live = 100`},
			stmts: []retry.Statement{{CQL: `UPDATE def100u SET v = ? WHERE id = ?`, Values: []any{"x", 1}}}},
		{name: "batch100", ddl: []string{
			`CREATE TABLE batd100 (id int PRIMARY KEY, v text) WITH default_time_to_live = 100`,
			`CREATE TABLE batl100 (id int PRIMARY KEY, v text)`},
			stmts: []retry.Statement{
				{CQL: `INSERT INTO batd100 (id, v) VALUES (?, ?)`, Values: []any{1, "x"}},
				{CQL: `UPDATE batl100 USING TTL 100 SET v = ? WHERE id = ?`, Values: []any{"x", 1}}}},
	}
	for _, c := range cases {
		harness.Exec(t, s0, c.ddl...)
	}
	s, px := proxied(t, ks, 300*time.Millisecond)
	ob, err := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	p := retry.NewPolicy(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithOutbox(ob))
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() {
			return faultproxy.DropResponse // applied by the server, the client never hears
		}
		return faultproxy.Forward
	})
	ctx := context.Background()
	ts := map[string]int64{}
	for _, c := range cases {
		if len(c.stmts) == 1 {
			err = p.Exec(ctx, s.Query(c.stmts[0].CQL, c.stmts[0].Values...))
		} else {
			b := s.NewBatch(gocql.LoggedBatch)
			for _, st := range c.stmts {
				b.Query(st.CQL, st.Values...)
			}
			err = p.ExecBatch(ctx, s, b)
		}
		var ou *retry.OutcomeUnknownError
		if !errors.As(err, &ou) {
			t.Fatalf("%s: err = %v, want outcome unknown", c.name, err)
		}
		ts[c.name] = ou.Timestamp
	}
	px.SetRule(nil)
	if pending, err := ob.Pending(); err != nil || len(pending) != len(cases) {
		t.Fatalf("pending = %d, %v; want %d", len(pending), err, len(cases))
	}
	time.Sleep(3 * time.Second)
	tables := func(c ttlCase) []string {
		var out []string
		for _, st := range c.stmts {
			toks := strings.Fields(st.CQL)
			if toks[0] == "INSERT" {
				out = append(out, toks[2])
			} else {
				out = append(out, toks[1])
			}
		}
		return out
	}
	for _, c := range cases {
		for _, tbl := range tables(c) {
			_, _, found := readKV(t, s0, tbl, 1)
			if found != !c.short {
				t.Fatalf("%s before replay: row found=%v (first attempt applied, TTL short=%v)", tbl, found, c.short)
			}
			if !c.short && !c.keep {
				harness.Exec(t, s0, `TRUNCATE `+tbl)
			}
		}
	}
	replayAt := time.Now().UnixMicro()
	var rep outbox.ReplayReport
	n, err := ob.Replay(ctx, s, p, outbox.ReportTo(&rep))
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	t.Logf("replay applied %d of %d records: %+v", n, len(cases), rep)
	if want := (outbox.ReplayReport{Applied: 10, Expired: 4, Shortened: 6}); n != 10 || rep != want {
		t.Errorf("replay = %d, report %+v; want %+v", n, rep, want)
	}
	// The first attempt's cells expire 100 s after it: by the replay, at most this much
	// of the TTL is left (whole seconds, rounded down).
	// A kept first-attempt cell's TTL counts from when the server applied it, which can be
	// up to a second after its pinned timestamp on a slow node; the replay rewrites it at
	// the same timestamp, and of two expiring cells at one timestamp the later-expiring
	// wins (the documented tie): one second more for those (seen in CI: 95 for 94).
	hi := func(c ttlCase) int {
		h := 100 - int((replayAt-ts[c.name])/1e6)
		if c.keep {
			h++
		}
		return h
	}
	for _, c := range cases {
		for _, tbl := range tables(c) {
			var ttl *int
			var wt int64
			err := s0.Query(`SELECT TTL(v), WRITETIME(v) FROM `+tbl+` WHERE id = 1`).Scan(&ttl, &wt)
			switch {
			case c.short && err == nil && (ttl == nil || *ttl > 1 || wt != ts[c.name]):
				t.Errorf("%s: TTL(v) = %s, writetime %d after the replay; its TTL ran out before: want TTL 1 at %d, or no row", tbl, fmtTTL(ttl), wt, ts[c.name])
			case c.short:
				if err != nil && !errors.Is(err, gocql.ErrNotFound) {
					t.Errorf("%s: %v", tbl, err)
				}
			case err != nil:
				t.Errorf("%s: %v", tbl, err)
			case ttl == nil || *ttl > hi(c) || *ttl < hi(c)-3 || wt != ts[c.name]:
				t.Errorf("%s: TTL(v) = %s, writetime %d; want %d..%d (TTL 100, first attempt %.1f s before the replay) at %d",
					tbl, fmtTTL(ttl), wt, hi(c)-3, hi(c), float64(replayAt-ts[c.name])/1e6, ts[c.name])
			default:
				t.Logf("%s: TTL(v) = %d", tbl, *ttl)
			}
		}
	}
	time.Sleep(1100 * time.Millisecond)
	for _, c := range cases {
		for _, tbl := range tables(c) {
			if _, _, found := readKV(t, s0, tbl, 1); c.short && found {
				t.Errorf("%s: row still there a second after the replay; its TTL ran out before it", tbl)
			}
		}
	}
	if pending, err := ob.Pending(); err != nil || len(pending) != 0 {
		t.Fatalf("pending after replay = %d, %v; want none", len(pending), err)
	}
}

func fmtTTL(ttl *int) string {
	if ttl == nil {
		return "null"
	}
	return fmt.Sprint(*ttl)
}

// TestOutboxReplayTTLCases: records whose first attempt was 10 s ago (by their
// timestamp) replay with what is left of each TTL, read the way Cassandra reads it: a
// bound UNSET TTL and a statement without one take the table's default_time_to_live
// (90 s left of 100), an explicit TTL 0 means no expiry and stays, and in a BEGIN BATCH
// text the write whose 5 s TTL ran out is sent with TTL 1 while the other keeps 90 s. A record
// stamped in the future tells nothing about when it was sent: it replays as recorded.
func TestOutboxReplayTTLCases(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0,
		`CREATE TABLE zero (id int PRIMARY KEY, v text) WITH default_time_to_live = 100`,
		`CREATE TABLE unset (id int PRIMARY KEY, v text) WITH default_time_to_live = 100`,
		`CREATE TABLE qual (id int PRIMARY KEY, v text) WITH default_time_to_live = 100`,
		`CREATE TABLE ba (id int PRIMARY KEY, v text)`,
		`CREATE TABLE bb (id int PRIMARY KEY, v text)`,
		`CREATE TABLE future (id int PRIMARY KEY, v text)`)
	s, _ := proxied(t, ks, 5*time.Second)
	ob, err := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	past := time.Now().Add(-10 * time.Second).UnixMicro()
	future := time.Now().Add(time.Minute).UnixMicro()
	for _, e := range []*retry.OutcomeUnknownError{
		{Timestamp: past, Statements: []retry.Statement{{CQL: `INSERT INTO zero (id, v) VALUES (?, ?) USING TTL 0`, Values: []any{1, "x"}}}},
		{Timestamp: past, Statements: []retry.Statement{{CQL: `INSERT INTO unset (id, v) VALUES (?, ?) USING TTL ?`, Values: []any{1, "x", gocql.UnsetValue}}}},
		{Timestamp: past, Statements: []retry.Statement{{CQL: `UPDATE "` + ks + `".qual SET v = ? WHERE id = ?`, Values: []any{"x", 1}}}},
		{Timestamp: past, Statements: []retry.Statement{{CQL: `BEGIN UNLOGGED BATCH INSERT INTO ba (id, v) VALUES (?, ?) USING TTL ?; ` +
			`INSERT INTO bb (id, v) VALUES (?, ?) USING TTL 100; APPLY BATCH`, Values: []any{1, "x", 5, 1, "x"}}}},
		{Timestamp: future, Statements: []retry.Statement{{CQL: `INSERT INTO future (id, v) VALUES (?, ?) USING TTL 100`, Values: []any{1, "x"}}}},
	} {
		e.Idempotent = true
		if err := ob.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	replayAt := time.Now().UnixMicro()
	var rep outbox.ReplayReport
	n, err := ob.Replay(context.Background(), s, retry.NewPolicy(), outbox.ReportTo(&rep))
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if want := (outbox.ReplayReport{Applied: 5, Shortened: 3, TTLAsRecorded: 1}); n != 5 || rep != want {
		t.Errorf("replay = %d, report %+v; want %+v", n, rep, want)
	}
	left := 100 - int((replayAt-past)/1e6) // at most this much of 100 s is left
	for _, c := range []struct {
		table  string
		lo, hi int // TTL(v) range; 0, 0: no TTL; -1: no row
		ts     int64
	}{
		{"zero", 0, 0, past},
		{"unset", left - 3, left, past},
		{"qual", left - 3, left, past},
		{"ba", 1, 1, past}, // its 5 s ran out: sent with TTL 1 (or gone already)
		{"bb", left - 3, left, past},
		{"future", 97, 100, future},
	} {
		var ttl *int
		var wt int64
		err := s0.Query(`SELECT TTL(v), WRITETIME(v) FROM `+c.table+` WHERE id = 1`).Scan(&ttl, &wt)
		switch {
		case c.lo == 1 && errors.Is(err, gocql.ErrNotFound): // its TTL 1 ran out since
		case err != nil:
			t.Errorf("%s: %v", c.table, err)
		case wt != c.ts:
			t.Errorf("%s: writetime %d, want %d", c.table, wt, c.ts)
		case c.hi == 0 && ttl != nil:
			t.Errorf("%s: TTL(v) = %d, want none (TTL 0 given)", c.table, *ttl)
		case c.hi > 0 && (ttl == nil || *ttl < c.lo || *ttl > c.hi):
			t.Errorf("%s: TTL(v) = %s, want %d..%d", c.table, fmtTTL(ttl), c.lo, c.hi)
		}
	}
}

// TestOutboxReplay: a write whose outcome stays unknown goes to the outbox; replaying it
// twice writes the row once, at its original timestamp.
func TestOutboxReplay(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 200*time.Millisecond)
	ob, err := outbox.Open(t.TempDir() + "/outbox")
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	p := retry.NewPolicy(retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond), retry.WithOutbox(ob))
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() && strings.Contains(r.CQL, "INSERT INTO kv") {
			return faultproxy.Reset // the request reaches the server, the connection dies
		}
		return faultproxy.Forward
	})
	err = p.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "first"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) {
		t.Fatalf("err = %v, want outcome unknown", err)
	}
	px.SetRule(nil)
	// A newer write lands before the replay: the replay must not overwrite it.
	if err := s0.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "newer").WithTimestamp(ou.Timestamp + 10).Exec(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		n, err := ob.Replay(context.Background(), s0, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 - i; n != want {
			t.Fatalf("replay %d applied %d, want %d", i+1, n, want)
		}
	}
	var v string
	var wt int64
	if err := s0.Query(`SELECT v, WRITETIME(v) FROM kv WHERE id = 1`).Scan(&v, &wt); err != nil {
		t.Fatal(err)
	}
	if v != "newer" || wt != ou.Timestamp+10 {
		t.Fatalf("after replay v=%q writetime=%d; the newer write must survive", v, wt)
	}
}

// TestOutboxPoisonRecord: scenario.PoisonRecord on gocql v1.7.
func TestOutboxPoisonRecord(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, _ := proxied(t, ks, 5*time.Second)
	scenario.PoisonRecord(t, s0, scenarioOutbox(t, s))
}

// TestOutboxExpiredWriteStillHides: scenario.ExpiredWriteStillHides on gocql v1.7.
func TestOutboxExpiredWriteStillHides(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, _ := proxied(t, ks, 5*time.Second)
	scenario.ExpiredWriteStillHides(t, s0, scenarioOutbox(t, s))
}

// TestOutboxReplayConsistency: scenario.ReplayConsistency on gocql v1.7 — a write recorded at ALL is replayed
// at ALL, not at the session's ONE.
func TestOutboxReplayConsistency(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rf2 := ks + "_rf2"
	if err := node.CreateKeyspace(ctx, s0, rf2, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s0.Query("DROP KEYSPACE IF EXISTS " + rf2).Exec() })
	s, _ := proxiedWith(t, ks, 5*time.Second, func(cl *gocql.ClusterConfig) { cl.Consistency = gocql.One })
	scenario.ReplayConsistency(t, s0, rf2, scenarioOutbox(t, s))
}

// scenarioOutbox is a new outbox, replayed on s, as the scenarios use it.
func scenarioOutbox(t *testing.T, s *gocql.Session) scenario.Outbox {
	t.Helper()
	o, err := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return scenario.Outbox{
		Record: func(cql string, args []any, ts int64, cl string) error {
			return o.Append(&retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: cql, Values: args}}, Timestamp: ts, Idempotent: true, Consistency: cl})
		},
		Replay: func(ctx context.Context) (int, int, int, error) {
			var rep outbox.ReplayReport
			n, err := o.Replay(ctx, s, nil, outbox.ReportTo(&rep))
			return n, rep.Rejected, rep.Kept, err
		},
		IDs: func() ([]string, error) {
			list, err := o.List()
			var ids []string
			for _, e := range list {
				ids = append(ids, e.ID)
			}
			return ids, err
		},
		Drop: o.Drop,
	}
}
