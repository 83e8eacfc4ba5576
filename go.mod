module github.com/cqlsafe/cqlsafe

go 1.24

require (
	github.com/cqlsafe/cqlsafe/internal/core v0.0.0
	github.com/gocql/gocql v1.7.0
	github.com/scylladb/gocqlx/v2 v2.8.0
	gopkg.in/inf.v0 v0.9.1
)

require (
	github.com/golang/snappy v0.0.4 // indirect
	github.com/hailocab/go-hostpool v0.0.0-20160125115350-e80d13ce29ed // indirect
	github.com/scylladb/go-reflectx v1.0.1 // indirect
)

replace github.com/cqlsafe/cqlsafe/internal/core => ./internal/core
