package nemesis

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/examples/orders/shop"
)

// held is what Cassandra holds at the end of a run, read at QUORUM.
type held struct {
	orders    map[gocql.UUID]orderRow
	listing   map[gocql.UUID]int        // order id → listing rows
	perCust   map[gocql.UUID]int        // customer → listing rows
	counters  map[gocql.UUID]int64      // customer → counter
	events    map[string][]storedEvent  // stream → events
	customers map[gocql.UUID]profileRow // id → profile
}

type orderRow struct {
	status  string
	statusW int64 // WRITETIME(status), 0 when NULL
}

type storedEvent struct {
	id      gocql.UUID
	typ     string
	payload string
}

type profileRow struct {
	name, email, nickname string
	tags                  []string
}

func (e *env) read() (*held, error) {
	h := &held{orders: map[gocql.UUID]orderRow{}, listing: map[gocql.UUID]int{}, perCust: map[gocql.UUID]int{},
		counters: map[gocql.UUID]int64{}, events: map[string][]storedEvent{}, customers: map[gocql.UUID]profileRow{}}
	// At ALL: a write that reached any replica (an unknown outcome that applied on one) is
	// seen in every table alike; the settled cluster has every node up.
	q := func(cql string) *gocql.Iter {
		return e.direct.Query(cql).Consistency(gocql.All).PageSize(5000).Iter()
	}
	var (
		id, cust gocql.UUID
		s1, s2   string
		s3       string
		w        int64
		n        int64
		tags     []string
	)
	it := q(`SELECT id, status, WRITETIME(status) FROM ` + e.ks + `.orders`)
	for it.Scan(&id, &s1, &w) {
		h.orders[id] = orderRow{status: s1, statusW: w}
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	it = q(`SELECT customer, id FROM ` + e.ks + `.orders_by_customer`)
	for it.Scan(&cust, &id) {
		h.listing[id]++
		h.perCust[cust]++
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	it = q(`SELECT customer, orders FROM ` + e.ks + `.customer_stats`)
	for it.Scan(&cust, &n) {
		h.counters[cust] = n
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	var payload []byte
	it = q(`SELECT stream_id, event_id, type, payload FROM ` + e.ks + `.order_events`)
	for it.Scan(&s1, &id, &s2, &payload) {
		h.events[s1] = append(h.events[s1], storedEvent{id: id, typ: s2, payload: string(payload)})
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	it = q(`SELECT id, name, email, nickname, tags FROM ` + e.ks + `.customers`)
	for it.Scan(&id, &s1, &s2, &s3, &tags) {
		h.customers[id] = profileRow{name: s1, email: s2, nickname: s3, tags: append([]string(nil), tags...)}
		tags = nil
	}
	return h, it.Close()
}

// verdict is the checker's judgement of a run.
type verdict struct {
	outcomes   map[string]map[string]int // kind → outcome → requests
	violations []string
	kinds      map[string]int // violations by kind (violation* constants)
	// Profile overwrites acknowledged yet shadowed by a put acknowledged earlier in real
	// time (clock skew between instances), and how far apart the two were.
	shadowed    int
	shadowedGap []time.Duration
	partial     int             // unknown orders whose first run stopped between its writes
	lostCounts  int             // order increments that never applied (a counter is sent once)
	latencies   []time.Duration // of acknowledged requests, re-sends included
	// readShadowed: acknowledged puts whose row, read back at once, held an earlier put
	// (runSpec.readBack).
	readShadowed int
}

// Kinds of violation.
const (
	violationLost       = "acknowledged, lost"
	violationTwice      = "applied twice"
	violationRefused    = "refused, yet applied"
	violationPartial    = "one batch applied in part"
	violationStatus     = "status column not a change that applied"
	violationCounted    = "counted twice"
	violationMixed      = "a row mixing two puts"
	violationShadowed   = "shadowed beyond the clock bound"
	violationUnexpected = "a write no request made"
)

// check judges the history against what Cassandra holds. skewBound is how far apart in
// real time two acknowledged overwrites may be and still land in the wrong order (0: no
// bound: shadowed overwrites are counted, not violations).
func check(hist []*op, h *held, n *nemesis, skewBound time.Duration) *verdict {
	v := &verdict{outcomes: map[string]map[string]int{}, kinds: map[string]int{}}
	other := func(kind, format string, args ...any) {
		v.kinds[kind]++
		v.violations = append(v.violations, kind+": "+fmt.Sprintf(format, args...))
	}
	violate := func(o *op, kind, format string, args ...any) {
		v.kinds[kind]++
		msg := kind + ": " + fmt.Sprintf("%s %s (key %s, customer %s, tries %v, %s → %s, last %d %s): ", o.Kind, o.Outcome, o.Key,
			o.Customer, o.Tries, o.Start.Format("15:04:05.000"), o.End.Format("15:04:05.000"), o.Code, o.Err) + fmt.Sprintf(format, args...)
		if n != nil {
			for _, ev := range n.around(o.Start, o.End, 2*time.Second) {
				msg += fmt.Sprintf("\n    nemesis %s %s %s for %v", ev.At.Format("15:04:05.000"), ev.Fault, ev.Target, ev.For)
			}
		}
		v.violations = append(v.violations, msg)
	}
	byCustomer := map[gocql.UUID][]*op{}
	statusByOrder := map[gocql.UUID][]*op{}
	expectedStatusEvents := map[gocql.UUID]*op{}
	ordersPlaced := map[gocql.UUID]int{} // customer → orders present
	// customer → increments that may run twice without anything going wrong in the
	// library: two attempts of one request at once (the client gave up on the first,
	// which was still running), each finding no order yet.
	overlapping := map[gocql.UUID]int{}
	for _, o := range hist {
		if o.Outcome == "" {
			continue // never sent
		}
		if v.outcomes[o.Kind] == nil {
			v.outcomes[o.Kind] = map[string]int{}
		}
		v.outcomes[o.Kind][o.Outcome]++
		if o.Outcome == outcomeOK {
			v.latencies = append(v.latencies, o.End.Sub(o.Start))
		}
		switch o.Kind {
		case "place":
			id := shop.OrderID(o.Key)
			_, row := h.orders[id]
			listing := h.listing[id]
			placed := 0
			for _, ev := range h.events[id.String()] {
				if ev.typ == "placed" {
					placed++
				}
			}
			if row {
				ordersPlaced[o.Customer]++
			}
			if row {
				overlapping[o.Customer] += o.Overlaps
			}
			switch {
			case placed > 1 || listing > 1:
				violate(o, violationTwice, "%d placed events, %d listing rows", placed, listing)
			case o.Outcome == outcomeOK && (!row || listing != 1 || placed != 1):
				violate(o, violationLost, "order row %v, listing rows %d, placed events %d", row, listing, placed)
			case o.Outcome == outcomeRefused && (row || listing > 0 || placed > 0):
				violate(o, violationRefused, "order row %v, listing rows %d, placed events %d", row, listing, placed)
			case row != (listing == 1):
				violate(o, violationPartial, "order row %v, listing rows %d", row, listing)
			case o.Outcome == outcomeUnknown && row && placed == 0:
				v.partial++
			}
		case "status":
			statusByOrder[o.Order] = append(statusByOrder[o.Order], o)
			expectedStatusEvents[clientid.TimeUUIDFromKey(o.At, []byte(o.Key))] = o
		case "profile":
			byCustomer[o.Customer] = append(byCustomer[o.Customer], o)
		}
	}

	// Status: every acknowledged change is in the log once, nothing else is, and the
	// column holds the latest change that applied.
	for stream, evs := range h.events {
		for _, ev := range evs {
			if ev.typ != "status" {
				continue
			}
			o, ok := expectedStatusEvents[ev.id]
			switch {
			case !ok:
				other(violationUnexpected, "order %s: a status event %s (%s) no request made", stream, ev.id, ev.payload)
			case o.Outcome == outcomeRefused:
				violate(o, violationRefused, "its event is in the log")
			case ev.payload != o.Status:
				violate(o, violationUnexpected, "its event says %q", ev.payload)
			}
		}
	}
	for order, ops := range statusByOrder {
		present := map[gocql.UUID]bool{}
		for _, ev := range h.events[order.String()] {
			present[ev.id] = true
		}
		row, exists := h.orders[order]
		var latestOK *op
		for _, o := range ops {
			if o.Outcome == outcomeOK && !present[clientid.TimeUUIDFromKey(o.At, []byte(o.Key))] {
				violate(o, violationLost, "its event is not in the log")
			}
			if o.Outcome == outcomeOK && (latestOK == nil || o.At.After(latestOK.At)) {
				latestOK = o
			}
		}
		if !exists {
			if latestOK != nil {
				violate(latestOK, violationLost, "the order row is gone")
			}
			continue
		}
		if latestOK != nil && row.statusW < latestOK.At.UnixMicro() {
			violate(latestOK, violationStatus, "acknowledged at event time %d, the column holds %q written at %d", latestOK.At.UnixMicro(), row.status, row.statusW)
			continue
		}
		if row.statusW == 0 && row.status == "" {
			continue // no change applied to the column (none acknowledged, checked above)
		}
		matched := false
		for _, o := range ops {
			if o.At.UnixMicro() == row.statusW && o.Status == row.status && o.Outcome != outcomeRefused {
				matched = true
			}
		}
		if !matched {
			other(violationStatus, "order %s: the column holds %q at %d, which no request that could apply wrote", order, row.status, row.statusW)
		}
	}
	// An order no status request named must have no status.
	for id, row := range h.orders {
		if _, asked := statusByOrder[id]; !asked && (row.status != "" || row.statusW != 0) {
			other(violationStatus, "order %s: the column holds %q at %d, and no request changed its status", id, row.status, row.statusW)
		}
	}

	// Counters: an order is counted at most once.
	for cust, n := range h.counters {
		if int(n) > h.perCust[cust]+overlapping[cust] {
			other(violationCounted, "customer %s: %d orders counted, %d placed (%d attempts of them overlapped another)",
				cust, n, h.perCust[cust], overlapping[cust])
		}
	}
	for cust, n := range ordersPlaced {
		if c := int(h.counters[cust]); c < n {
			v.lostCounts += n - c
		}
	}

	// Profiles: the row is one put whole; the latest acknowledged put, unless an earlier
	// one shadows it through a clock ahead of its instance's.
	for cust, ops := range byCustomer {
		sort.Slice(ops, func(i, j int) bool { return ops[i].Seq < ops[j].Seq })
		var lastOK *op
		for _, o := range ops {
			if o.Outcome == outcomeOK {
				lastOK = o
			}
		}
		row, exists := h.customers[cust]
		if !exists {
			if lastOK != nil {
				violate(lastOK, violationLost, "the customer row is missing")
			}
			continue
		}
		var seq int
		if _, err := fmt.Sscanf(row.name, "name-%d", &seq); err != nil || seq < 1 || seq > len(ops) {
			other(violationUnexpected, "customer %s: row %+v is no put's", cust, row)
			continue
		}
		src := ops[seq-1]
		want := profileBody(cust, seq)
		nick, _ := want["nickname"].(string)
		if row.email != want["email"] || row.nickname != nick || strings.Join(row.tags, ",") != strings.Join(want["tags"].([]string), ",") {
			violate(src, violationMixed, "%+v", row)
		}
		if src.Outcome == outcomeRefused {
			violate(src, violationRefused, "the row is its")
		}
		if lastOK == nil || seq >= lastOK.Seq {
			continue
		}
		// Shadowed: acknowledged puts after src lost to it.
		for _, o := range ops[seq:] {
			if o.Outcome != outcomeOK || o.Seq > lastOK.Seq {
				continue
			}
			gap := o.Start.Sub(src.End)
			if src.Outcome == outcomeOK && gap > 0 {
				v.shadowed++
				v.shadowedGap = append(v.shadowedGap, gap)
			}
			// An unknown put is judged too: every attempt of it pinned its timestamp when it
			// arrived, before the client gave up, and an outbox replay keeps that timestamp.
			if src.Outcome != outcomeRefused && skewBound > 0 && gap > skewBound {
				violate(o, violationShadowed, "by put %d (%s, %s) ended %v before this one began: beyond the clock bound %v", src.Seq, src.Key, src.Outcome, gap, skewBound)
			}
		}
	}
	return v
}

func (v *verdict) summary() string {
	var b strings.Builder
	kinds := []string{"place", "status", "profile"}
	fmt.Fprintf(&b, "%-8s %8s %8s %8s %8s\n", "request", "sent", outcomeOK, outcomeRefused, outcomeUnknown)
	for _, k := range kinds {
		m := v.outcomes[k]
		fmt.Fprintf(&b, "%-8s %8d %8d %8d %8d\n", k, m[outcomeOK]+m[outcomeRefused]+m[outcomeUnknown], m[outcomeOK], m[outcomeRefused], m[outcomeUnknown])
	}
	if len(v.latencies) > 0 {
		l := slices.Clone(v.latencies)
		slices.Sort(l)
		fmt.Fprintf(&b, "acknowledged latency p50 %v, p99 %v\n", l[len(l)/2].Round(time.Millisecond), l[len(l)*99/100].Round(time.Millisecond))
	}
	if len(v.kinds) > 0 {
		var ks []string
		for k, n := range v.kinds {
			ks = append(ks, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(ks)
		fmt.Fprintf(&b, "violations by kind: %s\n", strings.Join(ks, ", "))
	}
	fmt.Fprintf(&b, "violations %d; shadowed acknowledged overwrites %d; unknown orders applied in part %d; order increments lost (sent once) %d",
		len(v.violations), v.shadowed, v.partial, v.lostCounts)
	return b.String()
}
