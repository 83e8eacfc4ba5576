// Package settle is cqlsafe's settling of writes whose outcome was unknown, without a
// driver: the parsing of INSERT, UPDATE and DELETE, the mapping of a statement to the
// cells it writes, the comparison of write times and of serialized values, the outcome
// rules. Each driver adapter (settle for gocql v1.7, gocqlv2/settle for the Apache
// driver v2) gives a Session: the keyspace, the described table, and one read.
package settle

import (
	"errors"
	"fmt"
	"strings"
)

// Its files: settle.go the outcomes and errors; options.go the options and the Observer;
// write.go Write, which compares the write times of the cells a pinned write wrote with
// its pinned timestamp; plan.go the mapping of a statement to the cells it writes;
// parse.go the parsing of INSERT, UPDATE and DELETE (on cqltext's tokens); lwt.go LWT,
// which reads a conditional write's row at SERIAL; cells.go the comparison of
// serialized cell values.

// Outcome is what Settle found about a pinned write whose outcome was unknown.
type Outcome int

// Outcomes of Settle. The zero value, Unsettleable, claims nothing.
const (
	// Unsettleable: the write's cells could not be mapped or read (see StatementResult.Err).
	Unsettleable Outcome = iota
	// Landed: a cell the write wrote carries exactly its timestamp. (A timestamp is taken
	// as this write's own: clientid clocks make a collision with another writer's cell
	// at the same microsecond unlikely, not impossible.)
	Landed
	// Superseded: no cell carries the write's timestamp, and some carry a newer one: a
	// newer write won those cells. Whether this write landed first cannot be told.
	Superseded
	// NotVisible: no cell the read saw carries the write's timestamp or a newer one. See
	// Settle for when the write may still land.
	NotVisible
	// Mixed: the statements of a batch that is not applied as one unit settled
	// differently; see Result.Statements.
	Mixed
)

var outcomeNames = [...]string{"unsettleable", "landed", "superseded", "not_visible", "mixed"}

func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// ErrUnsettleable is matched (errors.Is) by *UnsettleableError: a write Settle or
// LWT cannot map to cells it can read, so it gives no answer rather than a wrong
// one.
var ErrUnsettleable = errors.New("settle: cannot settle")

// UnsettleableError says why one statement cannot be settled: a DELETE (it leaves
// tombstones, which have no readable write time), a counter update (counters carry no
// client timestamp), a statement without every key column given as a value, INSERT
// JSON, an LWT given to Settle (use LWT), a table the schema metadata does not
// know, …
type UnsettleableError struct {
	Statement int // index in the write's statements (0 for a single statement)
	CQL       string
	Reason    string
}

func (e *UnsettleableError) Error() string {
	return fmt.Sprintf("settle: cannot settle statement %d (%s): %s", e.Statement+1, clip(e.CQL), e.Reason)
}

// Is makes errors.Is(err, ErrUnsettleable) true.
func (e *UnsettleableError) Is(target error) bool { return target == ErrUnsettleable }

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "…"
	}
	return s
}
