package settle

import (
	"context"
	"errors"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/table"
	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
	coretable "github.com/cqlsafe/cqlsafe/internal/core/table"
)

// Write finds out whether a pinned write whose outcome was unknown (e, as returned by
// gocqlv2/retry's Policy.Exec, Policy.ExecBatch or Do) landed: it reads, at QUORUM (At),
// the write times of the cells each statement wrote and compares them with the
// timestamp the statement was written with — Landed (final), Superseded (a newer write
// won), or NotVisible. NotVisible is final only when read at ALL with nothing left to
// deliver the write (no request in flight: After; no hint; no batch log entry);
// re-applying an idempotent write with its pinned timestamp is safe either way. Each
// statement of a batch is settled on its own; statements that cannot be mapped to
// readable cells are Unsettleable, never guessed. The rules, in full, are
// github.com/cqlsafe/cqlsafe/settle's Write's.
//
// The error is non-nil when a read failed (with the Result so far), when e or s is
// nil, and — matching ErrUnsettleable, with the Result filled in — when no statement
// could be settled.
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

// LWT settles a conditional write (INSERT … IF NOT EXISTS, UPDATE … IF …, DELETE … IF
// …) whose outcome is unknown by reading its row at SERIAL (Serial: LOCAL_SERIAL) and
// comparing it with the write's effect: LWTApplied, LWTNotApplied or LWTUnknown. st is
// the statement as sent, with its values. Settle no earlier than the server's
// cas_contention_timeout after the last attempt was sent (After). The rules, in full,
// are github.com/cqlsafe/cqlsafe/settle's LWT's.
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

// session is a v2 session for core.Write and core.LWT.
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
		cl = x.cfg.Serial
	}
	cells := make([]rawCell, n)
	dest := make([]any, n)
	for i := range cells {
		dest[i] = &cells[i]
	}
	err := x.s.Query(q, args...).Consistency(cl).Idempotent(true).ScanContext(ctx, dest...)
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
	var re gocql.RequestError
	return errors.As(err, &re) && re.Code() == gocql.ErrCodeInvalid
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
