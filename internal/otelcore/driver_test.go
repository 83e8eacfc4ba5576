package otelcore

import (
	"errors"
	"fmt"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// testServerError is a server error with its protocol code, as a driver's RequestError.
type testServerError int

func (e testServerError) Error() string { return fmt.Sprintf("server error 0x%04X", int(e)) }

// testHost is a driver's host.
type testHost struct{ addr string }

// testDriver classifies testServerError by its code, anything else as fatal.
var testDriver = Driver{
	Scope: "github.com/cqlsafe/cqlsafe/internal/otelcore",
	Classify: func(err error) decision.ErrorClass {
		if err == nil {
			return decision.ClassNone
		}
		var se testServerError
		if errors.As(err, &se) {
			return decision.CodeClass(int(se))
		}
		return decision.ClassFatal
	},
	OutcomeUnknown: func(err error) bool {
		var ou *engine.OutcomeUnknownError[int]
		return errors.As(err, &ou)
	},
	StatusCode: func(err error) (int, bool) {
		var se testServerError
		if errors.As(err, &se) {
			return int(se), true
		}
		return 0, false
	},
	HostAddress: func(h any) string { return h.(*testHost).addr },
}
