package keymigrate

import (
	"slices"
	"testing"
	"time"
)

func TestKeymigrateWorkerOptionsRejectBadValues(t *testing.T) {
	for _, o := range []WorkerOption{WorkerID(""), WorkerLeaseTTL(time.Second), WorkerLeaseTTL(2500 * time.Millisecond),
		WorkerLeaseTTL(25 * time.Hour), WorkerRanges(0), WorkerRanges(1 << 17), WorkerRate(0), WorkerRate(-1),
		WorkerPageSize(0), WorkerRowsInFlight(0), WorkerRowsInFlight(1025), LeaseTable("bad-name", "t"), LeaseTable("ks", "")} {
		c := workerDefaults()
		if err := o(&c); err == nil {
			t.Error("bad option accepted")
		}
	}
	c := workerDefaults()
	for _, o := range []WorkerOption{WorkerID("w1"), WorkerLeaseTTL(2 * time.Second), WorkerRanges(8), WorkerRate(10), WorkerRowsInFlight(4), LeaseTable("ks", "leases")} {
		if err := o(&c); err != nil {
			t.Fatal(err)
		}
	}
	if c.id != "w1" || c.leaseTTL != 2*time.Second || c.ranges != 8 || c.leaseKeyspace != "ks" || c.inFlight != 4 {
		t.Fatalf("%+v", c)
	}
}

// Abandoned ranges (claimed before, free now) come first, then the rest from the
// worker's offset around the ring.
func TestKeymigrateFreeRangesOrder(t *testing.T) {
	st := Status{Ranges: []RangeStatus{
		{Range: 0, State: "free"}, {Range: 1, State: "done"}, {Range: 2, State: "free", Claims: 1},
		{Range: 3, State: "claimed"}, {Range: 4, State: "free"}, {Range: 5, State: "free", Claims: 2},
	}}
	if got, want := st.free(4), []int{5, 2, 4, 0}; !slices.Equal(got, want) {
		t.Fatalf("free(4) = %v, want %v", got, want)
	}
	st = Status{RangesTotal: 2, Done: 2, Rows: 10, Copied: 25}
	if !st.Complete() || st.CopiedTwice() != 15 {
		t.Fatalf("%v", st)
	}
}
