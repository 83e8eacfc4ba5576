package faultproxy

import (
	"math/rand/v2"
	"strings"
	"sync"
)

// DropFraction drops the responses to a fraction of the requests match selects, chosen
// by a seeded generator so runs are repeatable.
func DropFraction(fraction float64, seed uint64, match func(Request) bool) Rule {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(r Request) Action {
		if !match(r) {
			return Forward
		}
		mu.Lock()
		defer mu.Unlock()
		if rng.Float64() < fraction {
			return DropResponse
		}
		return Forward
	}
}

// DropNext drops the responses to the next n requests match selects, then forwards.
func DropNext(n int, match func(Request) bool) Rule {
	var mu sync.Mutex
	return func(r Request) Action {
		if !match(r) {
			return Forward
		}
		mu.Lock()
		defer mu.Unlock()
		if n > 0 {
			n--
			return DropResponse
		}
		return Forward
	}
}

// Writes selects write requests whose statement text contains substr (any write when
// substr is empty).
func Writes(substr string) func(Request) bool {
	return func(r Request) bool { return r.IsWrite() && strings.Contains(r.CQL, substr) }
}

// Next applies action a to the next n requests match selects, then forwards.
func Next(n int, match func(Request) bool, a Action) Rule {
	var mu sync.Mutex
	return func(r Request) Action {
		if !match(r) {
			return Forward
		}
		mu.Lock()
		defer mu.Unlock()
		if n > 0 {
			n--
			return a
		}
		return Forward
	}
}
