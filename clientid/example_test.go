package clientid_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/cqlsafe/cqlsafe/clientid"
)

func ExampleNewClock() {
	clock := clientid.NewClock() // one per process
	a := clock.Next()
	b := clock.Next()
	fmt.Println(b > a)
	// Output: true
}

func ExampleClock_Reserve() {
	clock := clientid.NewClock()
	n := clock.Reserve(2) // an overwrite: DELETE at n, INSERT at n+1
	fmt.Println(clock.Next() > n+1)
	// Output: true
}

func ExampleNewTimeUUID() {
	eventTime := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC) // when it happened, not now
	id := clientid.NewTimeUUID(eventTime)
	fmt.Println(id.Version(), id.Time().Equal(eventTime))
	// Output: 1 true
}

func ExampleTimeUUIDFromKey() {
	eventTime := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	first := clientid.TimeUUIDFromKey(eventTime, []byte("request-42"))
	resubmitted := clientid.TimeUUIDFromKey(eventTime, []byte("request-42"))
	fmt.Println(first == resubmitted)
	// Output: true
}

func ExampleFromKey() {
	id := clientid.FromKey(clientid.NamespaceDNS, []byte("www.example.com"))
	fmt.Println(id)
	// Output: 2ed6657d-e927-568b-95e1-2665a8aea6a2
}

func ExampleSortableInt64() {
	fmt.Println(clientid.SortableInt64(-5))
	fmt.Println(clientid.SortableInt64(42))
	fmt.Println(clientid.SortableInt64(10_000_000_000))
	// Output:
	// 09223372036854775803
	// 10000000000000000042
	// 10000000010000000000
}

func ExampleParseSortableInt64() {
	n, err := clientid.ParseSortableInt64("10000000000000000042")
	fmt.Println(n, err)
	_, err = clientid.ParseSortableInt64("0000000042") // 10-digit padding: rejected
	fmt.Println(errors.Is(err, clientid.ErrMalformed))
	// Output:
	// 42 <nil>
	// true
}

func ExampleReverseTime() {
	older := clientid.ReverseTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	newer := clientid.ReverseTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(newer < older)
	// Output: true
}

func ExampleParseReverseTime() {
	key := clientid.ReverseTime(time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC))
	t, err := clientid.ParseReverseTime(key)
	fmt.Println(t, err)
	// Output: 2026-11-21 09:30:00 +0000 UTC <nil>
}

func ExampleBucket() {
	day, _ := clientid.Bucket(time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC), 24*time.Hour)
	start, _ := clientid.BucketStart(day, 24*time.Hour)
	fmt.Println(day, start)
	// Output: 20778 2026-11-21 00:00:00 +0000 UTC
}

// ExampleClock_Observe: a WRITETIME just read moves a lagging clock past it, so the next
// write of this process is stamped above the write it has seen.
func ExampleClock_Observe() {
	lagging := clientid.NewClockFunc(func() time.Time { return time.Unix(1_700_000_000, 0) })
	seen := time.Unix(1_700_000_002, 0).UnixMicro() // written by an instance 2 s ahead
	lagging.Observe(seen)
	fmt.Println(lagging.Next() > seen)
	// Output: true
}
