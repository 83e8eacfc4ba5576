package suite

import (
	"context"
	"errors"
	"testing"

	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/overwrite"
)

// TestKeyMigrationDualDelete: rows deleted through DualDelete while the backfill runs
// are gone from both tables after it, and stay gone when the backfill re-copies.
func TestKeyMigrationDualDelete(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "")
	m := kvMigration(t, s, ks)
	ctx := context.Background()
	const n = 200
	for i := 0; i < n; i++ {
		if err := s.Query(`INSERT INTO kv_v1 (id, k, s) VALUES (?, 'a', 'v') USING TIMESTAMP 1000`, i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// A row dual-written (so present in both tables), then deleted during stage 1.
	if _, err := m.DualWrite(ctx, map[string]any{"id": n, "k": "a", "s": "dual"}); err != nil {
		t.Fatal(err)
	}
	deleted := 0
	hook := func(done int) {
		if done != 4 {
			return
		}
		for i := 0; i <= n; i += 10 { // ranges already copied and not yet copied
			if _, err := m.DualDelete(ctx, map[string]any{"id": i, "k": "a"}); err != nil {
				t.Error(err)
			}
			deleted++
		}
	}
	if _, err := m.Backfill(ctx, keymigrate.WithRanges(16), keymigrate.WithConcurrency(1), keymigrate.WithTestHookAfterRange(hook)); err != nil {
		t.Fatal(err)
	}
	// A copy that read the row before the delete and writes it after carries the old
	// WRITETIME (1000): the delete in the new table wins.
	if err := s.Query(`INSERT INTO kv_v2 (id, k, s) VALUES (10, 'n-a', 'v') USING TIMESTAMP 1000`).Exec(); err != nil {
		t.Fatal(err)
	}
	// Re-copying everything resurrects nothing.
	if _, err := m.Backfill(ctx, keymigrate.WithRanges(16)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= n; i += 10 {
		for _, row := range [][2]string{{"kv_v1", "a"}, {"kv_v2", "n-a"}} {
			if _, _, _, found := kvRow(t, s, row[0], i, row[1]); found {
				t.Errorf("row %d deleted with DualDelete is in %s", i, row[0])
			}
		}
	}
	rep, err := m.Verify(ctx)
	if err != nil || !rep.OK() || rep.OldRows != int64(n+1-deleted) {
		t.Fatalf("verify after dual deletes: %v %v (deleted %d)", rep, err, deleted)
	}
	// The hazard DualDelete closes: a delete of the old table alone leaves the row in the
	// new one, where it comes back at cut-over.
	if _, err := m.DualWrite(ctx, map[string]any{"id": 999, "k": "a", "s": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`DELETE FROM kv_v1 WHERE id = 999 AND k = 'a'`).Exec(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, found := kvRow(t, s, "kv_v2", 999, "n-a"); !found {
		t.Fatal("an old-table-only delete removed the new row too?")
	}
	if _, err := m.DualDelete(ctx, map[string]any{"id": 999}); !errors.Is(err, overwrite.ErrMissingKey) {
		t.Fatalf("DualDelete without the full key: %v", err)
	}
}
