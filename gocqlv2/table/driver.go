package table

import "github.com/cqlsafe/cqlsafe/gocqlv2/internal/cqlvalue"

// driver is the Apache Cassandra Go driver v2 for core.Table (internal/cqlvalue.Driver,
// shared with settle).
type driver = cqlvalue.Driver
