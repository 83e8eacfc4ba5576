package nemesis

import (
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/examples/orders/shop"
)

func emptyHeld() *held {
	return &held{orders: map[gocql.UUID]orderRow{}, listing: map[gocql.UUID]int{}, perCust: map[gocql.UUID]int{},
		counters: map[gocql.UUID]int64{}, events: map[string][]storedEvent{}, customers: map[gocql.UUID]profileRow{}}
}

// placedHeld records order key of cust as fully present: row, one listing row, one
// "placed" event.
func placedHeld(h *held, key string, cust gocql.UUID, at time.Time) {
	id := shop.OrderID(key)
	h.orders[id] = orderRow{}
	h.listing[id]++
	h.perCust[cust]++
	evAt := at.UTC().Truncate(time.Millisecond)
	h.events[id.String()] = append(h.events[id.String()], storedEvent{id: clientid.TimeUUIDFromKey(evAt, []byte(key)), typ: "placed"})
}

// The counter allowance sums Unanswered over every place op of the customer, even ops
// whose order was never written (they cannot have incremented anything) and ops whose
// unanswered attempt was the last one (nothing re-sent after it could overlap it). Here
// one order exists, placed by an op answered on its first try, and the counter says 2:
// an increment applied twice. The op that "explains" it never wrote an order.
func TestNemesisCheckerCounterAllowanceMasksDoubleCount(t *testing.T) {
	cust := gocql.MustRandomUUID()
	t0 := time.Now().UTC()
	ok := &op{Kind: "place", Key: "w0-o1", Customer: cust, At: t0, Start: t0, End: t0.Add(20 * time.Millisecond),
		Tries: []int{0}, Code: 201, Outcome: outcomeOK}
	// Every attempt timed out (e.g. instance killed: connection refused counts too), and
	// no order row, listing row or event of it exists.
	lost := &op{Kind: "place", Key: "w0-o2", Customer: cust, At: t0.Add(time.Second), Start: t0.Add(time.Second),
		End: t0.Add(30 * time.Second), Tries: []int{1, 1, 1, 1, 1, 1}, Overlaps: 5, Outcome: outcomeUnknown}
	h := emptyHeld()
	placedHeld(h, ok.Key, cust, ok.At)
	h.counters[cust] = 2 // one order, counted twice
	v := check([]*op{ok, lost}, h, nil, 0)
	if len(v.violations) == 0 {
		t.Errorf("1 order placed (its request answered at once), counter 2: no violation reported; the allowance (%d) came from an op that wrote nothing", lost.Overlaps)
	}
}

// A status column written by a refused request (or by no request at all) goes unchecked
// when the order has no acknowledged status change: the column loop `continue`s when
// latestOK is nil.
func TestNemesisCheckerRefusedStatusInColumnUnchecked(t *testing.T) {
	cust := gocql.MustRandomUUID()
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	place := &op{Kind: "place", Key: "w0-o1", Customer: cust, At: t0, Start: t0, End: t0, Tries: []int{0}, Code: 201, Outcome: outcomeOK}
	id := shop.OrderID(place.Key)
	st := &op{Kind: "status", Key: "w0-s2", Customer: cust, Order: id, Status: "cancelled", At: t0.Add(time.Second),
		Start: t0.Add(time.Second), End: t0.Add(time.Second), Tries: []int{0}, Code: 400, Outcome: outcomeRefused}
	h := emptyHeld()
	placedHeld(h, place.Key, cust, place.At)
	h.counters[cust] = 1
	// The refused request's UPDATE is in the column (its event is not in the log).
	h.orders[id] = orderRow{status: "cancelled", statusW: st.At.UnixMicro()}
	v := check([]*op{place, st}, h, nil, 0)
	if len(v.violations) == 0 {
		t.Errorf("the status column holds the refused request's change: no violation reported")
	}
	// And a column value that no request wrote at all.
	h.orders[id] = orderRow{status: "delivered", statusW: t0.Add(time.Hour).UnixMicro()}
	v = check([]*op{place, st}, h, nil, 0)
	if len(v.violations) == 0 {
		t.Errorf("the status column holds a change no request made: no violation reported")
	}
}

// The latest change in the log comes from a request whose outcome stayed unknown (its
// instance died between the event append and the UPDATE; the client gave up), and the
// column holds the older acknowledged change. The service promises the column holds the
// latest *acknowledged* change (a re-send completes the other), so this is no violation
// — but a column behind an acknowledged change is (TestNemesisCheckerRefusedStatusInColumnUnchecked
// and the checks of TestNemesisService).
func TestNemesisCheckerColumnBehindLog(t *testing.T) {
	cust := gocql.MustRandomUUID()
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	place := &op{Kind: "place", Key: "w0-o1", Customer: cust, At: t0, Start: t0, End: t0, Tries: []int{0}, Code: 201, Outcome: outcomeOK}
	id := shop.OrderID(place.Key)
	s1 := &op{Kind: "status", Key: "w0-s2", Order: id, Status: "paid", At: t0.Add(time.Second),
		Start: t0.Add(time.Second), End: t0.Add(time.Second), Tries: []int{0}, Code: 200, Outcome: outcomeOK}
	s2 := &op{Kind: "status", Key: "w0-s3", Order: id, Status: "cancelled", At: t0.Add(2 * time.Second),
		Start: t0.Add(2 * time.Second), End: t0.Add(30 * time.Second), Tries: []int{1, 1, 1, 1, 1, 1}, Outcome: outcomeUnknown}
	h := emptyHeld()
	placedHeld(h, place.Key, cust, place.At)
	h.counters[cust] = 1
	for _, s := range []*op{s1, s2} {
		h.events[id.String()] = append(h.events[id.String()], storedEvent{id: clientid.TimeUUIDFromKey(s.At, []byte(s.Key)), typ: "status", payload: s.Status})
	}
	h.orders[id] = orderRow{status: "paid", statusW: s1.At.UnixMicro()}
	if v := check([]*op{place, s1, s2}, h, nil, 0); len(v.violations) > 0 {
		t.Errorf("column at the latest acknowledged change, a later unknown one only in the log: %v", v.violations)
	}
	s2.Outcome = outcomeOK
	if v := check([]*op{place, s1, s2}, h, nil, 0); v.kinds[violationStatus] == 0 {
		t.Errorf("column behind an acknowledged change: not flagged")
	}
}

// A profile put whose outcome was unknown (its last attempt ended long before) shadows
// a put acknowledged 10 s later, far beyond the clock bound: only possible if the
// unknown put was applied with a timestamp taken long after its request (e.g. an outbox
// replay re-stamping it, the very bug the run is meant to catch). The checker skips
// every shadowing by a src that is not acknowledged.
func TestNemesisCheckerUnknownPutShadowsBeyondBound(t *testing.T) {
	cust := gocql.MustRandomUUID()
	t0 := time.Now().UTC()
	p1 := &op{Kind: "profile", Key: "w0-p1", Customer: cust, Seq: 1, Start: t0, End: t0.Add(time.Second),
		Tries: []int{0, 1}, Overlaps: 1, Outcome: outcomeUnknown}
	p2 := &op{Kind: "profile", Key: "w0-p2", Customer: cust, Seq: 2, Start: t0.Add(10 * time.Second),
		End: t0.Add(10*time.Second + 5*time.Millisecond), Tries: []int{2}, Code: 200, Outcome: outcomeOK}
	h := emptyHeld()
	b := profileBody(cust, 1)
	h.customers[cust] = profileRow{name: b["name"].(string), email: b["email"].(string), tags: b["tags"].([]string)}
	v := check([]*op{p1, p2}, h, nil, 350*time.Millisecond)
	if len(v.violations) == 0 {
		t.Errorf("put 2 acknowledged 9 s after put 1's last attempt ended, the row holds put 1: no violation (bound 350ms)")
	}
}

// Control: the same shape with put 1 acknowledged IS flagged, so the gap above is the
// Outcome filter only.
func TestNemesisCheckerAcknowledgedPutShadowsBeyondBound(t *testing.T) {
	cust := gocql.MustRandomUUID()
	t0 := time.Now().UTC()
	p1 := &op{Kind: "profile", Key: "w0-p1", Customer: cust, Seq: 1, Start: t0, End: t0.Add(time.Second), Tries: []int{0}, Code: 200, Outcome: outcomeOK}
	p2 := &op{Kind: "profile", Key: "w0-p2", Customer: cust, Seq: 2, Start: t0.Add(10 * time.Second),
		End: t0.Add(10*time.Second + 5*time.Millisecond), Tries: []int{2}, Code: 200, Outcome: outcomeOK}
	h := emptyHeld()
	b := profileBody(cust, 1)
	h.customers[cust] = profileRow{name: b["name"].(string), email: b["email"].(string), tags: b["tags"].([]string)}
	if v := check([]*op{p1, p2}, h, nil, 350*time.Millisecond); len(v.violations) == 0 {
		t.Errorf("control: not flagged either")
	}
}

// The control run must show what naive retries break — an increment or an effect
// applied twice — not only the status column a naive UPDATE stamps with its own
// timestamp (flagged too, but it would show without any fault).
func TestNemesisCheckerControlViolatesWithoutFaults(t *testing.T) {
	cust := gocql.MustRandomUUID()
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	place := &op{Kind: "place", Key: "w0-o1", Customer: cust, At: t0, Start: t0, End: t0, Tries: []int{0}, Code: 201, Outcome: outcomeOK}
	id := shop.OrderID(place.Key)
	s1 := &op{Kind: "status", Key: "w0-s2", Order: id, Status: "paid", At: t0.Add(time.Second),
		Start: t0.Add(time.Second), End: t0.Add(time.Second + 5*time.Millisecond), Tries: []int{0}, Code: 200, Outcome: outcomeOK}
	h := emptyHeld()
	placedHeld(h, place.Key, cust, place.At)
	h.counters[cust] = 1
	h.events[id.String()] = append(h.events[id.String()], storedEvent{id: clientid.TimeUUIDFromKey(s1.At, []byte(s1.Key)), typ: "status", payload: "paid"})
	h.orders[id] = orderRow{status: "paid", statusW: s1.At.UnixMicro() + 2000} // the naive write's own timestamp
	v := check([]*op{place, s1}, h, nil, 0)
	if v.kinds[violationStatus] == 0 {
		t.Errorf("a status column stamped off the event's time: not flagged")
	}
	if controlShows(v) {
		t.Errorf("a fault-free naive history meets the control's requirement: %v", v.kinds)
	}
	h.counters[cust] = 2
	if v := check([]*op{place, s1}, h, nil, 0); !controlShows(v) {
		t.Errorf("an order counted twice does not meet the control's requirement: %v", v.kinds)
	}
}
