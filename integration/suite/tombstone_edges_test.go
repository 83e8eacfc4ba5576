package suite

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

// The tests of this file are bugs the adversarial reviews of 2026-11-27 found, each
// described as it was before its fix; each fails on the code before that fix.

// TestTombstoneReviewRecreatedVectorRowNoPanic: the row (a table with a vector column)
// is recreated between Undelete's plan and its conditional restore. Cassandra answers
// the batch [applied]=false with the existing row; gocql v1.7's MapExecuteBatchCAS
// (tombstone/session.go CAS) builds its map with TypeInfo.NewWithError, which has no Go
// type for the vector's custom() type, so MapScan scans nothing and
// dest["[applied]"].(bool) panics. Undelete must return ErrRowExists (the v2 adapter
// does), not crash the caller.
func TestTombstoneReviewRecreatedVectorRowNoPanic(t *testing.T) {
	if before50() {
		t.Skip("no vector type before 5.0")
	}
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TABLE vt (k int PRIMARY KEY, v vector<float, 2>, n int)`,
		`INSERT INTO vt (k, v, n) VALUES (1, [1.5, 2.5], 7)`)
	if err := schema.ApplyTemplate(ctx, s0, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	s, px := proxied(t, ks, 5*time.Second)
	st, err := tombstone.New(ctx, s, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	tbl := describe(t, s, ks, "vt")
	key := map[string]any{"k": 1}
	if _, err := st.Delete(ctx, tbl, key, "cmd"); err != nil {
		t.Fatal(err)
	}
	// Recreate the row just before the restore's batch reaches Cassandra.
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if r.Opcode == faultproxy.OpBatch && strings.Contains(r.CQL, "IF NOT EXISTS") {
			//cqlsafe:ignore list-assignment v is a vector<float, 2>, not a list
			if err := s0.Query(`INSERT INTO vt (k, v, n) VALUES (1, [9, 9], 9)`).Exec(); err != nil {
				t.Error(err)
			}
		}
		return faultproxy.Forward
	})
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		_, err = st.Undelete(ctx, tbl, key, "cmd")
		return err
	}()
	if !errors.Is(err, tombstone.ErrRowExists) {
		t.Fatalf("Undelete of a row recreated before the restore: %v; want ErrRowExists", err)
	}
}

// TestTombstoneReviewDeleteValuesBindBack: a frozen UDT with a vector field has no Go
// type in gocql v1.7, so the record keeps its bytes. Before the move, Delete's
// Record.Values held them as cqlvalue.Raw (what List still returns), which binds back
// unchanged; now readRow stores a plain []byte (internal/core/tombstone/store.go
// "v = b"), which gocql cannot bind to the UDT column: the value Delete returns differs
// from the one List returns for the same record, and cannot be written back (the
// Undelete doc's manual restore with overwrite.Row).
func TestTombstoneReviewDeleteValuesBindBack(t *testing.T) {
	if before50() {
		t.Skip("no vector type before 5.0")
	}
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TYPE uv (v vector<float, 2>, n int)`,
		`CREATE TABLE vu (k int PRIMARY KEY, fu frozen<uv>)`,
		`INSERT INTO vu (k, fu) VALUES (1, {v: [3.5, 4.5], n: 1})`)
	if err := schema.ApplyTemplate(ctx, s0, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	st, err := tombstone.New(ctx, s0, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	tbl := describe(t, s0, ks, "vu")
	key := map[string]any{"k": 1}
	rec, err := st.Delete(ctx, tbl, key, "cmd")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.List(ctx, tbl, key)
	if err != nil || len(recs) != 1 {
		t.Fatalf("List: %v %v", recs, err)
	}
	del, listed := rec.Values["fu"], recs[0].Values["fu"]
	bindErr := s0.Query(`INSERT INTO vu (k, fu) VALUES (2, ?)`, del).Exec()
	if reflect.TypeOf(del) != reflect.TypeOf(listed) || bindErr != nil {
		t.Fatalf("Delete's Values[fu] is %T, List's %T; writing Delete's back: %v", del, listed, bindErr)
	}
}

// TestTombstoneReviewNewSeesNewTableV1: the gocql v1.7 adapter in the scenario of
// v2suite TestV2TombstoneReviewNewSeesNewTable, after the service described one of its
// tables (so the driver holds the keyspace's metadata).
func TestTombstoneReviewNewSeesNewTableV1(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TABLE app (k int PRIMARY KEY, n int)`)
	s, _ := proxied(t, ks, 5*time.Second)
	describe(t, s, ks, "app")
	if err := schema.ApplyTemplate(ctx, s0, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	if _, err := tombstone.New(ctx, s, ks, "tombstones"); err != nil {
		t.Fatalf("New right after the table was created (schema agreed): %v", err)
	}
}
