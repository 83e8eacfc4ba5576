package retry

import (
	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/hedge"
)

// The hedging tests of this package predate internal/core/hedge: these names keep them
// reading as they did.
const (
	hedgeToken    = hedge.Token
	hedgeBurst    = hedge.Burst
	hedgeWindow   = hedge.Window
	hedgeMinCount = hedge.MinCount
	maxRetries    = hedge.MaxRetries
)

func hedgeIterator(next gocql.NextHost, extra int, x *hedgeExec) gocql.NextHost {
	return hedge.Iterator[gocql.SelectedHost](next, extra, x, hostOps)
}

func hedgeHosts(next gocql.NextHost, extra int, x *hedgeExec) gocql.NextHost {
	return hedge.Hosts[gocql.SelectedHost](next, extra, x)
}
