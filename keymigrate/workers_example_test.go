package keymigrate_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/cqlsafe/cqlsafe/keymigrate"
)

func ExampleMigration_RunWorker() {
	var m *keymigrate.Migration // from keymigrate.New, the same in every process
	if m == nil {
		return
	}
	ctx := context.Background()
	// Run this in as many processes as you like: they share the ranges through leases.
	rep, err := m.RunWorker(ctx, keymigrate.WorkerLeaseTTL(30*time.Second), keymigrate.WorkerRate(5000))
	if err != nil {
		log.Fatal(err)
	}
	st, err := m.Status(ctx)
	fmt.Println(rep.Ranges, st, err) // e.g. "64/256 ranges done, … 0 more than once"
}
