package verdict_test

import (
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// Review of 1bed6ea (#28 R7/R8).

// TestReviewR8AtTimestampIsSticky: AtTimestamp drops the reasons a DELETE shadows at
// ts, and a later AtTimestamp (another ts, or 0: "not known") cannot bring them back.
// A verdict judged at one timestamp and re-pinned at another says repeatable where a
// fresh verdict at that timestamp does not. Failed at 1bed6ea; a verdict judged at one timestamp asked for another is now not repeatable.
func TestReviewR8AtTimestampIsSticky(t *testing.T) {
	// The DELETE writes at the batch's T; the append at its own 5: covered iff T >= 5.
	text := "BEGIN UNLOGGED BATCH DELETE FROM t WHERE k = 'a' AND c = 0; " +
		"UPDATE t USING TIMESTAMP 5 SET l = l + [1] WHERE k = 'a' AND c = 0 APPLY BATCH"
	base := verdict.ClassifyWithSchema(text, shadowSchema)
	at10 := base.AtTimestamp(10)
	if !at10.Idempotent {
		t.Fatalf("at 10: want repeatable, got %q", at10.Reasons)
	}
	for _, ts := range []int64{4, 0} {
		fresh := base.AtTimestamp(ts).ForValues(nil, inspector{})
		repinned := at10.AtTimestamp(ts).ForValues(nil, inspector{})
		if fresh.Idempotent {
			t.Fatalf("fresh at %d: want not repeatable", ts)
		}
		if repinned.Idempotent != fresh.Idempotent {
			t.Errorf("judged at 10, re-pinned at %d: repeatable %v, but a fresh verdict at %d says %v (%q)",
				ts, repinned.Idempotent, ts, fresh.Idempotent, fresh.Reasons)
		}
	}
}

// TestReviewR8MinTimestamp: Long.MIN_VALUE is Cassandra's "no deletion" sentinel
// (DeletionTime.LIVE = (Long.MIN_VALUE, max local time)); a deletion at it never
// supersedes LIVE, so MutableDeletionInfo.add and Rows.merge may drop it, while the list
// cells written at it stay: such a timestamp is never compared (literal, bound, or T).
func TestReviewR8MinTimestamp(t *testing.T) {
	const minTS = "-9223372036854775808"
	text := "BEGIN UNLOGGED BATCH DELETE FROM t USING TIMESTAMP " + minTS + " WHERE k = 'a'; " +
		"UPDATE t USING TIMESTAMP " + minTS + " SET l = l + [1] WHERE k = 'a' AND c = 1 APPLY BATCH"
	if v := verdict.ClassifyWithSchema(text, shadowSchema).ForValues(nil, inspector{}); v.Idempotent {
		t.Errorf("a DELETE at Long.MIN_VALUE judged to shadow: %s", text)
	}
}
