module github.com/cqlsafe/cqlsafe/gocqlv2

go 1.25.0

require (
	github.com/apache/cassandra-gocql-driver/v2 v2.1.2
	github.com/cqlsafe/cqlsafe/internal/core v0.0.0
	gopkg.in/inf.v0 v0.9.1
)

replace github.com/cqlsafe/cqlsafe/internal/core => ../internal/core
