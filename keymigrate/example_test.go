package keymigrate_test

import (
	"context"
	"fmt"
	"log"
	"strconv"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/table"
)

func Example() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	oldT, _ := table.Describe(ctx, session, "app", "comments_v1") // comment_key padded to 10 digits
	newT, _ := table.Describe(ctx, session, "app", "comments_v2") // same columns, 19-digit keys
	m, err := keymigrate.New(session, "comments-19-digit", oldT, newT, func(old map[string]any) (map[string]any, error) {
		ticks, err := strconv.ParseInt(old["comment_key"].(string), 10, 64)
		if err != nil {
			return nil, err
		}
		return map[string]any{"post_id": old["post_id"], "comment_key": clientid.SortableInt64(ticks)}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// 1. writers call m.DualWrite(ctx, row) and m.DualDelete(ctx, key) from now on.
	// 2. copy what was there before, resumable:
	if _, err := m.Backfill(ctx, keymigrate.WithCheckpoint("/var/lib/app/comments-19.json"), keymigrate.WithThrottle(5000)); err != nil {
		log.Fatal(err)
	}
	// 3. compare, then switch reads, stop dual writes, drop the old table.
	rep, err := m.Verify(ctx)
	fmt.Println(rep.OK(), err)
}
