package overwrite

import (
	"runtime"
	"sync"
	"weak"
)

// Policies holds the default retry policy of each table overwritten without
// WithRetryPolicy, for as long as the table lives: it caches the idempotence verdicts
// of the table's statements. Keys are weak so a table described again and again is not
// kept alive by the cache.
type Policies[T, P any] struct {
	m sync.Map // weak.Pointer[T] → *P
}

// For returns t's policy, made by newPolicy the first time.
func (c *Policies[T, P]) For(t *T, newPolicy func() *P) *P {
	k := weak.Make(t)
	if p, ok := c.m.Load(k); ok {
		return p.(*P)
	}
	p, loaded := c.m.LoadOrStore(k, newPolicy())
	if !loaded {
		runtime.AddCleanup(t, func(k weak.Pointer[T]) { c.m.Delete(k) }, k)
	}
	return p.(*P)
}

// Len is the number of tables held (for tests).
func (c *Policies[T, P]) Len() int {
	n := 0
	c.m.Range(func(_, _ any) bool { n++; return true })
	return n
}
