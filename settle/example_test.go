package settle_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

func ExampleWrite() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	p := retry.NewPolicy()
	err := p.Exec(ctx, session.Query(`INSERT INTO users (id, name) VALUES (?, ?)`, 7, "Ada"))
	var unknown *retry.OutcomeUnknownError
	if !errors.As(err, &unknown) {
		return
	}
	// Later: did it land? Read at ALL, after the write timeout has passed.
	st, err := settle.Write(ctx, session, unknown, settle.At(gocql.All), settle.After(3*time.Second))
	switch {
	case err != nil:
		fmt.Println("cannot tell:", err)
	case st.Outcome == settle.Landed:
		fmt.Println("landed at", st.Timestamp)
	case st.Outcome == settle.Superseded:
		fmt.Println("a newer write won; nothing to do")
	case st.Outcome == settle.NotVisible:
		// Re-applying with the pinned timestamp is safe whether or not the first one
		// lands later.
		fmt.Println("re-apply at", unknown.Timestamp)
	}
}

func ExampleLWT() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	claim := retry.Statement{CQL: `INSERT INTO leases (name, owner) VALUES (?, ?) IF NOT EXISTS`, Values: []any{"nightly-job", "worker-3"}}
	applied, err := session.Query(claim.CQL, claim.Values...).WithContext(ctx).MapScanCAS(map[string]any{})
	if err == nil {
		fmt.Println("applied:", applied)
		return
	}
	// The reply was lost (a timeout, CAS write unknown): do not re-send the LWT — if it
	// applied, the re-send finds its own row and says "not applied". Read at SERIAL.
	st, err := settle.LWT(ctx, session, claim, settle.After(time.Second))
	if err != nil {
		fmt.Println("cannot tell:", err)
		return
	}
	fmt.Println(st.Outcome, st.Why) // applied, not_applied or unknown
}
