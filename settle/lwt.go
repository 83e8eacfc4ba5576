package settle

import (
	"context"

	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
)

// LWTOutcome is what LWT found about a conditional write.
type LWTOutcome = core.LWTOutcome

// Outcomes of LWT. The zero value, LWTUnknown, claims nothing.
const (
	// LWTUnknown: the row does not tell: it shows the write's effect, but that effect
	// may have been there before the write (UPDATE … SET v = 1 … IF w = 2 on a row whose
	// v was already 1; an INSERT … IF NOT EXISTS of key columns only, which any insert
	// of the key would produce), or a value could not be compared reliably.
	LWTUnknown = core.LWTUnknown
	// LWTApplied: the row shows the write's effect — every column it sets holds the
	// value it set (a row DELETE: the row is gone) — and the write's own condition says
	// that effect was not there when it applied (IF NOT EXISTS; IF c = x where the
	// write sets c to something else; a DELETE's IF EXISTS). Another writer making the
	// identical change in between is the one case this cannot tell apart.
	LWTApplied = core.LWTApplied
	// LWTNotApplied: the row contradicts the write's effect: a column it sets holds
	// another value, or the row it inserts or updates is absent, or the row it deletes
	// exists. Either the write did not apply, or a later write undid it; when every
	// writer of the row goes through conditions that protect the first (IF NOT EXISTS
	// claims, compare-and-set), it did not apply.
	LWTNotApplied = core.LWTNotApplied
)

// LWTResult is what LWT found: the Outcome, whether the SERIAL read found the row
// (Exists), and what decided, in one line (Why).
type LWTResult = core.LWTResult

// LWT settles a conditional write (INSERT … IF NOT EXISTS, UPDATE … IF …, DELETE
// … IF …) whose outcome is unknown — a client timeout, a lost response, gocql's
// RequestErrCASWriteUnknown, a write timeout of write type CAS — by reading its row at
// SERIAL (Serial: LOCAL_SERIAL) and comparing it with the write's effect:
// LWTApplied, LWTNotApplied or LWTUnknown (see each). st is the statement as sent, with
// its values (an *retry.OutcomeUnknownError's Statements[0]).
//
// A read at SERIAL is a Paxos read: it first completes any round in progress on the
// partition (an accepted but uncommitted proposal is committed) or fences it out, so
// what it returns is the outcome, not a snapshot that an in-flight proposal could still
// change. Only rounds begun before the read are settled: the write's coordinator may
// begin a new one (a contended round is retried) until cas_contention_timeout (1 s by
// default) after it received the request, and a request still in transit has not begun
// one. Settle no earlier than that after the last attempt was sent (After), as a
// naive retry of the LWT must not be: a re-sent LWT that had applied finds its own
// write and reports applied = false.
//
// Settled: the full primary key given by values or literals; INSERT … IF NOT EXISTS;
// UPDATE assigning whole columns (c = v); DELETE of the row or of whole columns.
// Anything else — collection element updates, c = c + v, conditional batches, a
// partition-level condition — returns an *UnsettleableError before anything is read.
// Defaults: SERIAL, the session's keyspace (Keyspace), no wait.
func LWT(ctx context.Context, s *gocql.Session, st retry.Statement, opts ...Option) (LWTResult, error) {
	cfg, err := options(opts)
	if err != nil {
		return LWTResult{}, err
	}
	var sess core.Session[gocql.TypeInfo]
	if s != nil {
		sess = session{s, cfg}
	}
	return core.LWT(ctx, cqlvalue.Driver{}, sess, st, cfg)
}
