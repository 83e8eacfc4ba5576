package hedge

import "time"

// RunDelay is the delay an execution starting now waits before its first hedge, and
// whether its hedges are last resorts. With the budget at least half full it is the
// delay; below half, twice the delay (hedges that lose are those sent to requests that
// were only slow: waiting longer lets more of those answer first and spares the budget
// for requests that will not answer at all). With the budget empty it is the ceiling,
// and the hedges are last resorts: a lost response then costs the ceiling rather than
// the client timeout, and hardly a request that only is slow takes that long. Last
// resorts may take the budget below empty, down to minus a full budget; below that
// nothing is hedged until the executions have paid it back.
func (h *Hedger[S]) RunDelay() (time.Duration, bool) {
	d := h.Delay()
	switch t := h.Tokens.Load(); {
	case t < Token:
		return h.Cfg.Ceiling, true
	case t < Burst/2:
		return min(2*d, h.Cfg.Ceiling), false
	}
	return d, false
}

// Take spends one hedge of the budget, if it holds one (a last resort: if it is not a
// full budget in debt; see RunDelay).
func (h *Hedger[S]) Take(lastResort bool) bool {
	least := int64(Token) // what the budget must hold
	if lastResort {
		least = -Burst + Token
	}
	for {
		t := h.Tokens.Load()
		if t < least {
			return false
		}
		if h.Tokens.CompareAndSwap(t, t-Token) {
			return true
		}
	}
}

// settle ends one execution offered for hedging: the budget gains the refill, the
// hedge back when one won (a hedge that answered first is not charged), and those of
// hedges decided on but never sent.
func (h *Hedger[S]) settle(won bool, unsent int) {
	d := h.Refill + int64(unsent)*Token
	if won {
		d += Token
	}
	for {
		t := h.Tokens.Load()
		n := min(t+d, Burst)
		if n == t || h.Tokens.CompareAndSwap(t, n) {
			return
		}
	}
}

// charge takes one hedge from the budget: a hedge that won only by overtaking a first
// execution whose response came after all (HedgeStreams). The charge comes late —
// hedges may have been sent meanwhile on the strength of the refund — so it may take
// the budget below empty, past the debt last resorts may run up, down to minus two
// full budgets; nothing is hedged until the executions have paid it back.
func (h *Hedger[S]) charge() {
	for {
		t := h.Tokens.Load()
		n := max(t-Token, -2*Burst)
		if n == t || h.Tokens.CompareAndSwap(t, n) {
			return
		}
	}
}
