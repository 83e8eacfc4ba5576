package settle

import (
	"context"
	"errors"

	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
	coretable "github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// Result is what Write found. Its Outcome, for one statement, is that statement's. For
// a batch applied as one unit (a logged batch, whose batch log replays every statement
// once one applied; or an unlogged batch whose statements all write one partition of
// one table, a single mutation): Landed when any statement landed, else the outcome the
// settleable statements share (statements that cannot be settled are ignored), else
// Mixed. For any other batch: the outcome every statement shares, else Mixed.
// Unsettleable when no statement could be settled. Consistency is what the write times
// were read at.
type Result = core.Result[gocql.Consistency]

// StatementResult is Write's finding for one statement of the write: its Outcome, the
// Timestamp it was written with (the pinned one, or its own USING TIMESTAMP), the
// Newest write time read from its cells (0: none visible), the Columns whose write times
// were read, the written columns Skipped because their write times say nothing ("column:
// why": a bound NULL, UNSET, an element removal, an empty collection, or before
// Cassandra 5.0 a non-frozen collection), and Err (matching ErrUnsettleable) when it
// could not be settled.
type StatementResult = core.StatementResult

// Write finds out whether a pinned write whose outcome was unknown (e, as returned by
// Policy.Exec, Policy.ExecBatch or Do) landed: it reads, at QUORUM (At), the write
// times of the cells each statement wrote — WRITETIME of the columns an INSERT lists or
// an UPDATE assigns, of the row the statement's key values name — and compares them
// with the timestamp the statement was written with:
//
//   - Landed: a cell carries exactly that timestamp. Final: the write is in Cassandra.
//   - Superseded: none does, and some carry a newer one. A newer write won; whether
//     this one landed before it cannot be told, and does not matter to what the row
//     holds: re-applied with its pinned timestamp it would lose to the newer write again.
//   - NotVisible: no cell the read saw carries the timestamp or a newer one.
//
// NotVisible is not "did not happen". The write may still land, or may have landed and
// be hidden, when:
//
//   - it is still in flight: a request held in a network buffer or a coordinator's queue
//     is applied whenever it arrives, with its pinned timestamp (After waits);
//   - the read missed the replicas that have it: a write acknowledged by W of RF
//     replicas is seen by a read at R replicas only when R + W > RF. An unknown outcome
//     says nothing about W (it can be 1, or 0 with a hint), so only a read at ALL
//     speaks for every replica; at QUORUM with RF = 3, a write that reached one replica
//     can read as NotVisible;
//   - a hint holds it: a coordinator that could not reach a replica (down, or too slow
//     to acknowledge) keeps a hint and replays it when the replica is back — within
//     max_hint_window (3 h by default) of the replica going down — at the original
//     timestamp; even a read at ALL does not see a hint still on a coordinator;
//   - the batch log holds it: a logged batch whose batch log write succeeded is replayed
//     by the batch log's replicas (every ~10 s, for batches older than twice the write
//     timeout) even if none of its mutations arrived;
//   - it landed and is gone: a newer DELETE shadows its cells, or its TTL ran out.
//
// So NotVisible is final only when the read was at ALL and nothing can still deliver
// the write: no request in flight (the read came later than write_request_timeout plus
// the network's delay after the last attempt was sent), no hint for it on any
// coordinator (nodetool listpendinghints empty on every node, or hinted handoff off),
// and, for a logged batch, no batch log entry left (system.batches). Anything less
// means "not seen yet". Either way re-applying the write with its pinned timestamp
// (Policy.Exec with AtTimestamp(e.Timestamp), or an outbox replay) is safe for an
// idempotent write: if the original lands too, the cells are the same, and a newer
// write or delete still wins over both.
//
// Each statement of a batch is settled on its own (Result.Statements, in order);
// statements with their own USING TIMESTAMP are compared with theirs. Statements that
// cannot be mapped to readable cells are Unsettleable with an *UnsettleableError, never
// guessed: DELETEs, counter updates, LWTs (use LWT), INSERT JSON, statements
// whose key is not given by values (IN, token(), functions), statements that write no
// readable cell (only key columns, NULLs, element removals), batches written as CQL
// text. Non-frozen collections and UDTs are read element by element (Cassandra 5.0
// returns a write time per element); against an older Cassandra they are skipped and
// listed in Skipped. Column types come from s's schema metadata; statements that name
// no keyspace are in the session's keyspace (Keyspace).
//
// The error is non-nil when a read failed (with the Result so far), when e or s is
// nil, and — matching ErrUnsettleable, with the Result filled in — when no
// statement could be settled.
func Write(ctx context.Context, s *gocql.Session, e *retry.OutcomeUnknownError, opts ...Option) (Result, error) {
	cfg, err := options(opts)
	if err != nil {
		return Result{}, err
	}
	var sess core.Session[gocql.TypeInfo]
	if s != nil {
		sess = session{s, cfg}
	}
	var u *core.Unknown
	if e != nil {
		u = &core.Unknown{Statements: e.Statements, Timestamp: e.Timestamp, Logged: e.Batch && e.BatchType == gocql.LoggedBatch}
	}
	return core.Write(ctx, cqlvalue.Driver{}, sess, u, cfg)
}

// session is a gocql session for core.Write and core.LWT.
type session struct {
	s   *gocql.Session
	cfg config
}

func (x session) Keyspace() string { return x.s.Query("").Keyspace() }

func (x session) Table(ctx context.Context, keyspace, name string) (*coretable.Table[gocql.TypeInfo], error) {
	return table.Describe(ctx, x.s, keyspace, name)
}

func (x session) Read(ctx context.Context, q string, args []any, n int, serial bool) ([]core.Cell[gocql.TypeInfo], bool, error) {
	cl := x.cfg.Consistency
	if serial {
		cl = gocql.Consistency(x.cfg.Serial)
	}
	cells := make([]rawCell, n)
	dest := make([]any, n)
	for i := range cells {
		dest[i] = &cells[i]
	}
	err := x.s.Query(q, args...).WithContext(ctx).Consistency(cl).Idempotent(true).Scan(dest...)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := make([]core.Cell[gocql.TypeInfo], n)
	for i, c := range cells {
		out[i] = core.Cell[gocql.TypeInfo](c)
	}
	return out, true, nil
}

func (session) Invalid(err error) bool {
	code, _, ok := cqlvalue.RequestError(err)
	return ok && code == gocql.ErrCodeInvalid
}

// rawCell keeps a column's serialized value and type as the read returned them.
type rawCell struct {
	Info gocql.TypeInfo
	Data []byte
}

func (c *rawCell) UnmarshalCQL(info gocql.TypeInfo, data []byte) error {
	c.Info = info
	if data != nil {
		c.Data = append(make([]byte, 0, len(data)), data...)
	}
	return nil
}
