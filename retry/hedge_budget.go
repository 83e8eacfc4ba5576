package retry

import (
	"time"
)

// runDelay is the delay an execution starting now waits before its first hedge, and
// whether its hedges are last resorts. With the budget at least half full it is the
// delay; below half, twice the delay (hedges that lose are those sent to requests that
// were only slow: waiting longer lets more of those answer first and spares the budget
// for requests that will not answer at all). With the budget empty it is the ceiling,
// and the hedges are last resorts: a lost response then costs the ceiling rather than
// the client timeout, and hardly a request that only is slow takes that long. Last
// resorts may take the budget below empty, down to minus a full budget; below that
// nothing is hedged until the executions have paid it back.
func (h *hedger) runDelay() (time.Duration, bool) {
	d := h.delay()
	switch t := h.tokens.Load(); {
	case t < hedgeToken:
		return h.cfg.ceiling, true
	case t < hedgeBurst/2:
		return min(2*d, h.cfg.ceiling), false
	}
	return d, false
}

// take spends one hedge of the budget, if it holds one (a last resort: if it is not a
// full budget in debt; see runDelay).
func (h *hedger) take(lastResort bool) bool {
	least := int64(hedgeToken) // what the budget must hold
	if lastResort {
		least = -hedgeBurst + hedgeToken
	}
	for {
		t := h.tokens.Load()
		if t < least {
			return false
		}
		if h.tokens.CompareAndSwap(t, t-hedgeToken) {
			return true
		}
	}
}

// settle ends one execution offered for hedging: the budget gains the refill, the
// hedge back when one won (a hedge that answered first is not charged), and those of
// hedges decided on but never sent.
func (h *hedger) settle(won bool, unsent int) {
	d := h.refill + int64(unsent)*hedgeToken
	if won {
		d += hedgeToken
	}
	for {
		t := h.tokens.Load()
		n := min(t+d, hedgeBurst)
		if n == t || h.tokens.CompareAndSwap(t, n) {
			return
		}
	}
}

// charge takes one hedge from the budget: a hedge that won only by overtaking a first
// execution whose response came after all (HedgeStreams). The charge comes late —
// hedges may have been sent meanwhile on the strength of the refund — so it may take
// the budget below empty, past the debt last resorts may run up, down to minus two
// full budgets; nothing is hedged until the executions have paid it back.
func (h *hedger) charge() {
	for {
		t := h.tokens.Load()
		n := max(t-hedgeToken, -2*hedgeBurst)
		if n == t || h.tokens.CompareAndSwap(t, n) {
			return
		}
	}
}
