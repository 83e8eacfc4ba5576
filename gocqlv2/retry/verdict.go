package retry

import "github.com/cqlsafe/cqlsafe/internal/core/verdict"

// The verdict is judged by cqlsafe's driver-neutral core (one implementation for every
// driver and for cqlsafe lint and vet); these are its names in this package.

// Verdict is Classify's judgement of one CQL text.
type Verdict = verdict.Verdict

// Kind is what a statement does.
type Kind = verdict.Kind

// Statement kinds.
const (
	KindUnknown = verdict.KindUnknown
	KindRead    = verdict.KindRead   // SELECT
	KindWrite   = verdict.KindWrite  // INSERT, UPDATE, DELETE
	KindBatch   = verdict.KindBatch  // BEGIN … APPLY BATCH
	KindSchema  = verdict.KindSchema // CREATE, ALTER, DROP
	KindOther   = verdict.KindOther  // TRUNCATE, USE, GRANT, …
)

// ColumnKind is what schema metadata says about a column, to refine Classify.
type ColumnKind = verdict.ColumnKind

// Column kinds.
const (
	ColumnUnknown = verdict.ColumnUnknown
	ColumnScalar  = verdict.ColumnScalar
	ColumnCounter = verdict.ColumnCounter
	ColumnList    = verdict.ColumnList
	ColumnSet     = verdict.ColumnSet
	ColumnMap     = verdict.ColumnMap
)

// ColumnRole is where a column sits in its table's primary key. A Schema that also
// implements RoleSchema lets the verdict see a list write that a DELETE of whole rows in
// the same batch shadows (SessionSchema does).
type ColumnRole = verdict.ColumnRole

// Column roles.
const (
	RoleUnknown      = verdict.RoleUnknown
	RolePartitionKey = verdict.RolePartitionKey
	RoleClustering   = verdict.RoleClustering
	RoleRegular      = verdict.RoleRegular
	RoleStatic       = verdict.RoleStatic
)

// RoleSchema is the optional part of a Schema that answers column roles.
type RoleSchema = verdict.RoleSchema

// ClusteringSchema is the optional part of a Schema that lists a table's clustering
// columns (SessionSchema does). With it and RoleSchema, `DELETE … WHERE k = ? AND c =
// uuid()` is known to name one row, which the server's uuid() makes a key no one holds;
// without them such a DELETE is not repeatable, since Cassandra 4.1 and 5.0 evaluate
// the call once per bound of a range DELETE.
type ClusteringSchema = verdict.ClusteringSchema

// KeyType is a key column's type, as far as telling a literal key from a bound one
// equal needs it; KeyTypeSchema is the optional part of a Schema that answers it
// (SessionSchema does).
type KeyType = verdict.KeyType

// Key types.
const (
	KeyOther   = verdict.KeyOther
	KeyText    = verdict.KeyText
	KeyInteger = verdict.KeyInteger
	KeyDouble  = verdict.KeyDouble
	KeyFloat   = verdict.KeyFloat
	KeyBoolean = verdict.KeyBoolean
	KeyUUID    = verdict.KeyUUID
	KeyVarint  = verdict.KeyVarint
	KeyDate    = verdict.KeyDate
	KeyDecimal = verdict.KeyDecimal
)

// KeyTypeSchema is the optional part of a Schema that answers key types.
type KeyTypeSchema = verdict.KeyTypeSchema

// Schema answers column kinds for ClassifyWithSchema. Table is as written in the
// statement (keyspace may be empty when the statement does not name one).
type Schema = verdict.Schema

// Classify reads any CQL text — one statement, several separated by semicolons, or a
// batch — and judges whether executing it twice with the same bound values and the same
// pinned write timestamp has the effect of executing it once.
//
// Not idempotent: counter updates and other `x = x ± …` whose column could be a counter
// or a list, list append/prepend, positional list deletes (`DELETE l[?]` where l could
// be a list), any server-side non-deterministic function in a write (now(), uuid(),
// currentTimestamp(), …, or a function Classify does not know), lightweight
// transactions (IF …), COUNTER batches, TRUNCATE, and schema changes that fail when
// repeated (CREATE without IF NOT EXISTS, ALTER … ADD). Reads are idempotent. A batch is
// idempotent iff every statement in it is — where a list write or a server function's
// value that a DELETE of the same batch deletes at a timestamp not below the write's
// counts as repeatable: the deletion shadows it on every run (same table, the DELETE's
// restrictions met by the write's key — values known equal, or inside a slice —, no IF
// on either; both at the batch's timestamp, or their own USING TIMESTAMPs compared —
// against the batch's timestamp only when it is known: Policy.Exec, Policy.ExecBatch
// and Policy.RepeatableAt judge at the pinned one, Classify does not know it; with schema
// metadata that knows column roles and key types, such as SessionSchema, whole-row
// deletes and literal-against-bound keys count too). Text that is not CQL is not
// idempotent.
// Classify never panics.
func Classify(cql string) Verdict { return verdict.Classify(cql) }

// ClassifyWithSchema is Classify with column metadata: `s = s + ?` on a set or map,
// `l = l - ?` on a list and `DELETE m[?]` on a map are idempotent; on a counter or list
// append they are not. Without metadata (schema nil or ColumnUnknown) Classify is
// conservative.
func ClassifyWithSchema(cql string, schema Schema) Verdict {
	return verdict.ClassifyWithSchema(cql, schema)
}
