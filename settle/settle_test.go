package settle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/retry"
)

func TestSettleErrors(t *testing.T) {
	if _, err := Write(context.TODO(), nil, &retry.OutcomeUnknownError{}); err == nil {
		t.Error("nil session: no error")
	}
	if _, err := LWT(context.TODO(), nil, retry.Statement{}); err == nil {
		t.Error("nil session: no error")
	}
	var err error = &UnsettleableError{Statement: 1, CQL: "DELETE FROM kv WHERE id = ?", Reason: "DELETE leaves tombstones"}
	if !errors.Is(err, ErrUnsettleable) || !strings.HasPrefix(err.Error(), "settle: cannot settle statement 2") {
		t.Errorf("%v", err)
	}
	if Landed.String() != "landed" || Outcome(99).String() != "unknown" || LWTNotApplied.String() != "not_applied" {
		t.Error("names")
	}
}
