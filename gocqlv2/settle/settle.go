package settle

import (
	gocql "github.com/apache/cassandra-gocql-driver/v2"

	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// Outcome is what Write found about a pinned write whose outcome was unknown.
type Outcome = core.Outcome

// Outcomes of Write (see github.com/cqlsafe/cqlsafe/settle for each). The zero value,
// Unsettleable, claims nothing.
const (
	Unsettleable = core.Unsettleable // the write's cells could not be mapped or read
	Landed       = core.Landed       // a cell the write wrote carries exactly its timestamp
	Superseded   = core.Superseded   // none does, and some carry a newer one
	NotVisible   = core.NotVisible   // no cell the read saw carries the timestamp or a newer one
	Mixed        = core.Mixed        // a batch not applied as one unit settled differently
)

// ErrUnsettleable is matched (errors.Is) by *UnsettleableError.
var ErrUnsettleable = core.ErrUnsettleable

// UnsettleableError says why one statement cannot be settled (a DELETE, a counter
// update, a key not given by values, INSERT JSON, an LWT given to Write, an unknown
// table, …).
type UnsettleableError = core.UnsettleableError

// LWTOutcome is what LWT found about a conditional write.
type LWTOutcome = core.LWTOutcome

// Outcomes of LWT (see github.com/cqlsafe/cqlsafe/settle for each). The zero value,
// LWTUnknown, claims nothing.
const (
	LWTUnknown    = core.LWTUnknown    // the row does not tell
	LWTApplied    = core.LWTApplied    // the row shows the effect, which the condition says was not there before
	LWTNotApplied = core.LWTNotApplied // the row contradicts the write's effect
)

// LWTResult is what LWT found: the Outcome, whether the SERIAL read found the row
// (Exists), and what decided, in one line (Why).
type LWTResult = core.LWTResult

// Result is what Write found: the write's Outcome, its pinned Timestamp, the
// Consistency the write times were read at, and each statement's StatementResult.
type Result = core.Result[gocql.Consistency]

// StatementResult is Write's finding for one statement of the write.
type StatementResult = core.StatementResult

// Observer hears of every Write and LWT call (WithObserver).
type Observer = core.Observer

// Report is one Write or LWT call, as an Observer hears of it.
type Report = core.Report

// Report kinds.
const (
	KindWrite = core.KindWrite
	KindLWT   = core.KindLWT
)
