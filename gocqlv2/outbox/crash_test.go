package outbox

import (
	"testing"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"

	"github.com/cqlsafe/cqlsafe/internal/core/outbox/crashtest"
)

// crashOutbox is this driver's outbox for crashtest.
var crashOutbox = crashtest.Outbox{
	Append: func(path string, first int64, ack func(int64)) error {
		o, err := Open(path)
		if err != nil {
			return err
		}
		for i := first; ; i++ {
			if err := o.Append(crashWrite(i)); err != nil {
				return err
			}
			ack(i)
		}
	},
	Records: func(path string) ([]int64, int64, error) {
		o, err := Open(path)
		if err != nil {
			return nil, 0, err
		}
		defer o.Close()
		recs, err := o.Pending()
		var ts []int64
		for _, r := range recs {
			ts = append(ts, r.Timestamp)
		}
		return ts, o.Cut().Bytes, err
	},
}

// TestV2OutboxSurvivesKills: a process SIGKILLed in the middle of appends, 30 times over
// one file: after each kill every acknowledged record is there.
func TestV2OutboxSurvivesKills(t *testing.T) {
	crashtest.Child(crashOutbox)
	if testing.Short() {
		t.Skip("-short")
	}
	crashtest.Kills(t, "TestV2OutboxSurvivesKills", 30, crashOutbox)
}

// crashWrite is record i of the crash test.
func crashWrite(i int64) *retry.OutcomeUnknownError {
	return &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: "INSERT INTO kv (id, v) VALUES (?, ?)", Values: []any{i, "v"}}},
		Timestamp: i, Idempotent: true}
}
