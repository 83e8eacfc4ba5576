package retry

import (
	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// ErrOutcomeUnknown is matched (errors.Is) by every *OutcomeUnknownError.
var ErrOutcomeUnknown = engine.ErrOutcomeUnknown

// ErrNotIdempotent is matched by errors for writes that failed in a way a retry might
// fix, but were not retried because they are not idempotent.
var ErrNotIdempotent = engine.ErrNotIdempotent

// ErrBatchLogged is matched by the error of a logged batch whose write timed out after
// it reached the batch log (write type BATCH): Cassandra will apply it, so it is not
// re-sent. Callers may treat it as success; reads may not see it for a while.
var ErrBatchLogged = engine.ErrBatchLogged

// ErrUnboundValues is returned, before anything is sent, for a write whose bind
// markers have no values: a binder (Session.Bind, Batch.Bind) that the driver calls on
// every send, so a retry or hedge could send other values (a minted id: another row)
// and nothing can judge, pin or record them. Bind the values on the query instead.
var ErrUnboundValues = engine.ErrUnboundValues

// ErrNotRecorded is matched by an *OutcomeUnknownError whose write the Policy's outbox
// could not record (its RecordErr says why: a full disk, a closed outbox): nothing will
// replay it. A recorded one has Recorded set.
var ErrNotRecorded = engine.ErrNotRecorded

// ErrNondeterministic is returned by Exec inside Do when a re-run of the function issues
// a different statement at a step than the first run did.
var ErrNondeterministic = engine.ErrNondeterministic

// Statement is one CQL statement with its bound values.
type Statement = engine.Statement

// OutcomeUnknownError says a write may or may not have been applied: it timed out or
// lost its connection, and retries were exhausted (or not allowed). It carries
// everything needed to re-apply the write later with the same effect: the statements,
// their values and the pinned write timestamp. Re-applying an idempotent write with the
// same timestamp is always safe; see Outbox.
type OutcomeUnknownError = engine.OutcomeUnknownError[gocql.BatchType]
