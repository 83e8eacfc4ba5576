package overwrite_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/overwrite"
)

type Profile struct {
	UserID   int     `db:"user_id"`
	Name     string  `db:"name"`
	Email    *string `db:"email"`    // nil: NULL after the overwrite, without a tombstone per column
	Nickname *string `db:"nickname"` // ditto
}

func ExampleDescribe() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	profiles, err := overwrite.Describe(context.Background(), session, "app", "profiles")
	if errors.Is(err, overwrite.ErrCounterTable) {
		log.Fatal("counter tables cannot be overwritten")
	}
	fmt.Println(len(profiles.PartitionKey), len(profiles.Regular))
}

func ExampleRow() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	profiles, err := overwrite.Describe(ctx, session, "app", "profiles")
	if err != nil {
		log.Fatal(err)
	}
	// One unlogged batch: DELETE at N, INSERT of name at N+1; email and nickname are NULL
	// afterwards with one row tombstone, not two cell tombstones.
	res, err := overwrite.Row(ctx, session, profiles, Profile{UserID: 42, Name: "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted at", res.Timestamp, "inserted at", res.Timestamp+1)
}

func ExamplePartition() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	items, _ := overwrite.Describe(ctx, session, "app", "cart_items") // PRIMARY KEY (cart_id, sku)
	// Afterwards the partition holds exactly these rows.
	_, err := overwrite.Partition(ctx, session, items, []map[string]any{
		{"cart_id": 7, "sku": "A-1", "qty": 2},
		{"cart_id": 7, "sku": "B-9", "qty": 1},
	})
	if errors.Is(err, overwrite.ErrMixedPartitions) {
		log.Fatal("all rows must share cart_id")
	}
}

func ExampleWithTimestamp() {
	var session *gocql.Session // your session
	var profiles *overwrite.Table
	if session == nil {
		return
	}
	// Re-apply an overwrite with its original N: idempotent, and it cannot beat a newer one.
	const n = 1_763_700_000_000_000
	_, err := overwrite.Row(context.Background(), session, profiles, map[string]any{"user_id": 42, "name": "Ada"},
		overwrite.WithTimestamp(n))
	fmt.Println(err)
}
