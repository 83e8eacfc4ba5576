package tombstone_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/table"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

func Example() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	accounts, _ := table.Describe(ctx, session, "app", "accounts")
	store, err := tombstone.New(ctx, session, "app", "tombstones")
	if err != nil {
		log.Fatal(err)
	}
	key := map[string]any{"org": "acme", "id": 1}
	if _, err := store.Delete(ctx, accounts, key, "cleanup-job-2026-11-21"); err != nil {
		log.Fatal(err)
	}
	// Later: the clean-up job had a bug. Look before restoring.
	plan, _ := store.Plan(ctx, accounts, key, "cleanup-job-2026-11-21")
	fmt.Println(plan.Allowed, plan.Restore, plan.Current)
	if _, err := store.Undelete(ctx, accounts, key, "cleanup-job-2026-11-21"); errors.Is(err, tombstone.ErrRowExists) {
		fmt.Println("recreated meanwhile: left alone")
	}
}
