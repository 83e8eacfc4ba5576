package settle

import (
	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// The outcomes, results and errors are internal/core/settle's, the same for both
// drivers (gocqlv2/settle has the same names).

// Outcome is what Write found about a pinned write whose outcome was unknown.
type Outcome = core.Outcome

// Outcomes of Write. The zero value, Unsettleable, claims nothing.
const (
	// Unsettleable: the write's cells could not be mapped or read (see StatementResult.Err).
	Unsettleable = core.Unsettleable
	// Landed: a cell the write wrote carries exactly its timestamp. (A timestamp is taken
	// as this write's own: clientid clocks make a collision with another writer's cell
	// at the same microsecond unlikely, not impossible.)
	Landed = core.Landed
	// Superseded: no cell carries the write's timestamp, and some carry a newer one: a
	// newer write won those cells. Whether this write landed first cannot be told.
	Superseded = core.Superseded
	// NotVisible: no cell the read saw carries the write's timestamp or a newer one. See
	// Write for when the write may still land.
	NotVisible = core.NotVisible
	// Mixed: the statements of a batch that is not applied as one unit settled
	// differently; see Result.Statements.
	Mixed = core.Mixed
)

// ErrUnsettleable is matched (errors.Is) by *UnsettleableError: a write Write or LWT
// cannot map to cells it can read, so it gives no answer rather than a wrong one.
var ErrUnsettleable = core.ErrUnsettleable

// UnsettleableError says why one statement cannot be settled: a DELETE (it leaves
// tombstones, which have no readable write time), a counter update (counters carry no
// client timestamp), a statement without every key column given as a value, INSERT
// JSON, an LWT given to Write (use LWT), a table the schema does not know, …
type UnsettleableError = core.UnsettleableError
