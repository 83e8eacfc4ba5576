package v2suite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/gocqlv2/keymigrate"
	tablev2 "github.com/cqlsafe/cqlsafe/gocqlv2/table"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	keymigratev1 "github.com/cqlsafe/cqlsafe/keymigrate"
	tablev1 "github.com/cqlsafe/cqlsafe/table"
)

// The tests of this file are bugs the adversarial reviews of 2026-11-27 found, each
// described as it was before its fix; each fails on the code before that fix.

// kmrPair is one migration old → new (bucketKey) through both drivers.
type kmrPair struct {
	s0     *v1.Session
	ks     string
	v2, v1 interface {
		Verify(ctx context.Context) (keymigrate.Report, error)
		Backfill(ctx context.Context) (keymigrate.Progress, error)
	}
}

type kmrV2 struct{ m *keymigrate.Migration }

func (x kmrV2) Verify(ctx context.Context) (keymigrate.Report, error) { return x.m.Verify(ctx) }
func (x kmrV2) Backfill(ctx context.Context) (keymigrate.Progress, error) {
	return x.m.Backfill(ctx, keymigrate.WithRanges(4))
}

type kmrV1 struct{ m *keymigratev1.Migration }

func (x kmrV1) Verify(ctx context.Context) (keymigrate.Report, error) { return x.m.Verify(ctx) }
func (x kmrV1) Backfill(ctx context.Context) (keymigrate.Progress, error) {
	return x.m.Backfill(ctx, keymigratev1.WithRanges(4))
}

// kmrSetup creates old (id int PRIMARY KEY, cols) and new (bucket, id, cols) after the
// statements pre (types), and returns migrations over them through both drivers.
func kmrSetup(t *testing.T, cols string, pre ...string) kmrPair {
	t.Helper()
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, append(pre, `CREATE TABLE old (id int PRIMARY KEY, `+cols+`)`,
		`CREATE TABLE new (bucket int, id int, `+cols+`, PRIMARY KEY (bucket, id))`)...)
	s, _ := proxied(t, ks, 5*time.Second)
	oldT, err := tablev2.Describe(ctx, s, ks, "old")
	if err != nil {
		t.Fatal(err)
	}
	newT, err := tablev2.Describe(ctx, s, ks, "new")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := keymigrate.New(s, "kmr", oldT, newT, bucketKey)
	if err != nil {
		t.Fatal(err)
	}
	oldT1, err := tablev1.Describe(ctx, s0, ks, "old")
	if err != nil {
		t.Fatal(err)
	}
	newT1, err := tablev1.Describe(ctx, s0, ks, "new")
	if err != nil {
		t.Fatal(err)
	}
	m1, err := keymigratev1.New(s0, "kmr", oldT1, newT1, bucketKey)
	if err != nil {
		t.Fatal(err)
	}
	return kmrPair{s0: s0, ks: ks, v2: kmrV2{m2}, v1: kmrV1{m1}}
}

// kmrVerifyDiffers runs Verify through both drivers and wants every one of the n rows
// reported different: old and new hold different values (SELECT JSON shows them).
func kmrVerifyDiffers(t *testing.T, p kmrPair, sel string, n int) {
	t.Helper()
	oldJS, newJS := rowsAsJSON(t, p.s0, sel, "old"), rowsAsJSON(t, p.s0, sel, "new")
	for i := range oldJS {
		if oldJS[i] == newJS[i] {
			t.Fatalf("setup: row %d is the same in both tables: %s", i, oldJS[i])
		}
	}
	for _, d := range []struct {
		name string
		m    interface {
			Verify(ctx context.Context) (keymigrate.Report, error)
		}
	}{{"v2", p.v2}, {"gocql v1.7", p.v1}} {
		rep, err := d.m.Verify(context.Background())
		if err != nil {
			t.Errorf("%s Verify: %v", d.name, err)
			continue
		}
		if rep.Checked != int64(n) || rep.Different != int64(n) || rep.OK() {
			t.Errorf("%s Verify: %v — checked %d, different %d; want all %d rows different:\nold %v\nnew %v",
				d.name, rep, rep.Checked, rep.Different, n, oldJS, newJS)
		}
	}
}

// TestV2KeymigrateReviewVerifyTupleElementNullVsZero: inside a tuple, a NULL element and
// a zero one (0, empty text, 0x) are different values. gocql v1.7's Unmarshal of a tuple (into
// *[]interface{}) fills a NULL element with its type's zero value, so Verify through
// gocql v1.7 calls them equal.
func TestV2KeymigrateReviewVerifyTupleElementNullVsZero(t *testing.T) {
	p := kmrSetup(t, `tp tuple<int, text, blob>, n int`)
	harness.Exec(t, p.s0,
		`INSERT INTO old (id, tp, n) VALUES (1, (null, 'a', 0x01), 1)`,
		`INSERT INTO new (bucket, id, tp, n) VALUES (1, 1, (0, 'a', 0x01), 1)`,
		`INSERT INTO old (id, tp, n) VALUES (2, (1, null, 0x01), 2)`,
		`INSERT INTO new (bucket, id, tp, n) VALUES (2, 2, (1, '', 0x01), 2)`,
		`INSERT INTO old (id, tp, n) VALUES (3, (1, 'a', null), 3)`,
		`INSERT INTO new (bucket, id, tp, n) VALUES (3, 3, (1, 'a', 0x), 3)`,
		`INSERT INTO old (id, n) VALUES (4, 4)`, // NULL tuple
		`INSERT INTO new (bucket, id, tp, n) VALUES (0, 4, (0, '', 0x), 4)`)
	kmrVerifyDiffers(t, p, `id, tp, n`, 4)
}

// TestV2KeymigrateReviewVerifyUDTFieldNullVsZero: inside a frozen UDT, a NULL field and
// a zero one are different values; both drivers unmarshal a UDT into a map whose NULL
// field holds the zero value, so Verify calls them equal.
func TestV2KeymigrateReviewVerifyUDTFieldNullVsZero(t *testing.T) {
	p := kmrSetup(t, `fu frozen<ua>, n int`, `CREATE TYPE ua (a int, b text)`)
	harness.Exec(t, p.s0,
		`INSERT INTO old (id, fu, n) VALUES (1, {a: null, b: 'x'}, 1)`,
		`INSERT INTO new (bucket, id, fu, n) VALUES (1, 1, {a: 0, b: 'x'}, 1)`,
		`INSERT INTO old (id, fu, n) VALUES (2, {a: 1, b: null}, 2)`,
		`INSERT INTO new (bucket, id, fu, n) VALUES (2, 2, {a: 1, b: ''}, 2)`)
	kmrVerifyDiffers(t, p, `id, fu, n`, 2)
}

// TestV2KeymigrateReviewVerifyNaN: a double NaN copied byte for byte is the same value
// in both tables, but Verify compares decoded values with reflect.DeepEqual, for which
// NaN != NaN: the row is reported different.
func TestV2KeymigrateReviewVerifyNaN(t *testing.T) {
	p := kmrSetup(t, `d double, n int`)
	harness.Exec(t, p.s0,
		`INSERT INTO old (id, d, n) VALUES (1, NaN, 1)`,
		`INSERT INTO new (bucket, id, d, n) VALUES (1, 1, NaN, 1)`)
	if o, n := rowsAsJSON(t, p.s0, `id, d, n`, "old"), rowsAsJSON(t, p.s0, `id, d, n`, "new"); o[0] != n[0] {
		t.Fatalf("setup: %v vs %v", o, n)
	}
	for name, m := range map[string]interface {
		Verify(ctx context.Context) (keymigrate.Report, error)
	}{"v2": p.v2, "gocql v1.7": p.v1} {
		if rep, err := m.Verify(context.Background()); err != nil || !rep.OK() || rep.Checked != 1 {
			t.Errorf("%s Verify of equal rows (d = NaN in both): %v %v", name, rep, err)
		}
	}
}

// TestV2KeymigrateReviewBackfillNonFrozenUDTNullFieldTTL: a non-frozen UDT written USING
// TTL 3600 with a field left null. TTL(u) reads [3600, null] — the null is a field
// without a cell, not a cell without a TTL — but collectionTTL takes any null element
// for "an element without TTL" and copies u with none: in the new table (no default
// TTL) the value that expires within the hour in the source lives for ever.
func TestV2KeymigrateReviewBackfillNonFrozenUDTNullFieldTTL(t *testing.T) {
	for _, drv := range []string{"v2", "gocql v1.7"} {
		t.Run(drv, func(t *testing.T) {
			p := kmrSetup(t, `u ua, n int`, `CREATE TYPE ua (a int, b text)`)
			harness.Exec(t, p.s0, `INSERT INTO old (id, u, n) VALUES (1, {a: 1}, 4) USING TTL 3600`)
			m := p.v2
			if drv != "v2" {
				m = p.v1
			}
			if _, err := m.Backfill(context.Background()); err != nil {
				t.Fatal(err)
			}
			var oldTTL, newTTL []*int
			if err := p.s0.Query(`SELECT TTL(u) FROM old WHERE id = 1`).Scan(&oldTTL); err != nil {
				t.Fatal(err)
			}
			if err := p.s0.Query(`SELECT TTL(u) FROM new WHERE bucket = 1 AND id = 1`).Scan(&newTTL); err != nil {
				t.Fatal(err)
			}
			if len(newTTL) == 0 || newTTL[0] == nil || *newTTL[0] > 3600 {
				t.Fatalf("TTL(u) in the source %v, in the copy %v: want the copy's field a to expire within 3600 s",
					kmrInts(oldTTL), kmrInts(newTTL))
			}
		})
	}
}

func kmrInts(ps []*int) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "null"
		if p != nil {
			out[i] = fmt.Sprint(*p)
		}
	}
	return out
}

// TestV2KeymigrateReviewBackfillTupleNullUDTElement: a tuple whose UDT element is NULL,
// tuple<int, frozen<ua>> = (1, null), cannot be copied: table.tupleElems leaves the NULL
// element a Go nil, which both drivers refuse to marshal as a UDT ("cannot marshal
// <nil> into UDT"), and the whole Backfill stops at that row.
func TestV2KeymigrateReviewBackfillTupleNullUDTElement(t *testing.T) {
	for _, drv := range []string{"v2", "gocql v1.7"} {
		t.Run(drv, func(t *testing.T) {
			p := kmrSetup(t, `tu tuple<int, frozen<ua>>, n int`, `CREATE TYPE ua (a int, b blob)`)
			harness.Exec(t, p.s0, `INSERT INTO old (id, tu, n) VALUES (1, (1, null), 1)`)
			if _, err := p.through(drv).Backfill(context.Background()); err != nil {
				t.Fatalf("Backfill: %v", err)
			}
			sel := `id, tu, n, WRITETIME(tu) AS w`
			if o, n := rowsAsJSON(t, p.s0, sel, "old"), rowsAsJSON(t, p.s0, sel, "new"); fmt.Sprint(o) != fmt.Sprint(n) {
				t.Fatalf("copy\n%v\nwant\n%v", n, o)
			}
		})
	}
}

// TestV2KeymigrateReviewDualWriteTupleNullUDTElement: the same through DualWrite: a
// valid value, (1, NULL), for a tuple<int, frozen<ua>> column is refused on both drivers.
func TestV2KeymigrateReviewDualWriteTupleNullUDTElement(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TYPE ua (a int, b blob)`, `CREATE TABLE old (id int PRIMARY KEY, tu tuple<int, frozen<ua>>)`,
		`CREATE TABLE new (bucket int, id int, tu tuple<int, frozen<ua>>, PRIMARY KEY (bucket, id))`)
	s, _ := proxied(t, ks, 5*time.Second)
	oldT, err1 := tablev2.Describe(ctx, s, ks, "old")
	newT, err2 := tablev2.Describe(ctx, s, ks, "new")
	oldT1, err3 := tablev1.Describe(ctx, s0, ks, "old")
	newT1, err4 := tablev1.Describe(ctx, s0, ks, "new")
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		t.Fatal(err1, err2, err3, err4)
	}
	m2, err := keymigrate.New(s, "dw", oldT, newT, bucketKey)
	if err != nil {
		t.Fatal(err)
	}
	m1, err := keymigratev1.New(s0, "dw", oldT1, newT1, bucketKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.DualWrite(ctx, map[string]any{"id": 1, "tu": []any{1, nil}}); err != nil {
		t.Errorf("v2 DualWrite of tu = (1, NULL): %v", err)
	}
	if _, err := m1.DualWrite(ctx, map[string]any{"id": 2, "tu": []any{1, nil}}); err != nil {
		t.Errorf("gocql v1.7 DualWrite of tu = (1, NULL): %v", err)
	}
}

// through is the migration on the named driver ("v2" or "gocql v1.7").
func (p kmrPair) through(drv string) interface {
	Backfill(ctx context.Context) (keymigrate.Progress, error)
} {
	if drv == "v2" {
		return p.v2
	}
	return p.v1
}

// TestV2KeymigrateEdgesStaticOnlyPartition: a partition holding static cells and no
// rows reads with its clustering column NULL; Backfill used to copy it as a row with
// c = 0 that never existed (found by review). It now refuses it, naming the column,
// on both drivers, and writes no such row.
func TestV2KeymigrateEdgesStaticOnlyPartition(t *testing.T) {
	for _, drv := range []string{"v2", "gocql v1.7"} {
		t.Run(drv, func(t *testing.T) {
			s0, ks := node.Keyspace(t)
			ctx := context.Background()
			harness.Exec(t, s0, `CREATE TABLE so_v1 (p int, c int, s int static, v int, PRIMARY KEY (p, c))`,
				`CREATE TABLE so_v2 (p text, c int, s int static, v int, PRIMARY KEY (p, c))`,
				`INSERT INTO so_v1 (p, s) VALUES (1, 5)`)
			tr := func(old map[string]any) (map[string]any, error) {
				return map[string]any{"p": fmt.Sprint(old["p"]), "c": old["c"]}, nil
			}
			var err error
			if drv == "v2" {
				s, _ := proxied(t, ks, 5*time.Second)
				oldT, err1 := tablev2.Describe(ctx, s, ks, "so_v1")
				newT, err2 := tablev2.Describe(ctx, s, ks, "so_v2")
				m, err3 := keymigrate.New(s, "so", oldT, newT, tr)
				if err1 != nil || err2 != nil || err3 != nil {
					t.Fatal(err1, err2, err3)
				}
				_, err = m.Backfill(ctx, keymigrate.WithRanges(4))
			} else {
				oldT, err1 := tablev1.Describe(ctx, s0, ks, "so_v1")
				newT, err2 := tablev1.Describe(ctx, s0, ks, "so_v2")
				m, err3 := keymigratev1.New(s0, "so", oldT, newT, tr)
				if err1 != nil || err2 != nil || err3 != nil {
					t.Fatal(err1, err2, err3)
				}
				_, err = m.Backfill(ctx, keymigratev1.WithRanges(4))
			}
			if err == nil || !strings.Contains(err.Error(), "static cells and no rows") {
				t.Fatalf("Backfill: %v; want the static-only partition refused", err)
			}
			if n := countRows(t, s0, `SELECT COUNT(*) FROM so_v2`); n != 0 {
				t.Fatalf("%d rows written to so_v2, want none", n)
			}
		})
	}
}
