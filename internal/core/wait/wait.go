// Package wait holds the one way cqlsafe waits: a timer that gives up when the context
// is done.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done (then it returns ctx.Err()). A nil ctx waits d.
func Sleep(ctx context.Context, d time.Duration) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
