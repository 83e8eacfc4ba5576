package clientid

import (
	"cmp"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func FuzzTimeUUID(f *testing.F) {
	f.Add(int64(0), int64(0), []byte("k"))
	f.Add(int64(1_700_000_000_123_456_789), int64(1_700_000_000_123_456_790), []byte{})
	f.Fuzz(func(t *testing.T, na, nb int64, key []byte) {
		ta, tb := time.Unix(0, na), time.Unix(0, nb)
		ua, ub := TimeUUIDFromKey(ta, key), TimeUUIDFromKey(tb, key)
		if ua != TimeUUIDFromKey(ta, key) {
			t.Fatal("not deterministic")
		}
		if got := ua.Time(); !got.Equal(ta.Truncate(100 * time.Nanosecond)) {
			t.Fatalf("Time() = %v, want %v", got, ta)
		}
		// Compare agrees with time order when the 100 ns ticks differ.
		da, db := ta.Truncate(100), tb.Truncate(100)
		if !da.Equal(db) && cmp.Compare(da.UnixNano(), db.UnixNano()) != Compare(ua, ub) {
			t.Fatalf("Compare(%v, %v) disagrees with time order", da, db)
		}
		if Compare(MinTimeUUID(ta), ua) > 0 || Compare(ua, MaxTimeUUID(ta)) > 0 {
			t.Fatal("outside [Min, Max] of its time")
		}
		if ua.Version() != 1 || ua.Variant() != gocql.VariantIETF {
			t.Fatal("not an RFC version 1 UUID")
		}
	})
}
