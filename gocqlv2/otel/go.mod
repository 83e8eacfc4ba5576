module github.com/cqlsafe/cqlsafe/gocqlv2/otel

go 1.25.0

require (
	github.com/apache/cassandra-gocql-driver/v2 v2.1.2
	github.com/cqlsafe/cqlsafe/gocqlv2 v0.0.0
	github.com/cqlsafe/cqlsafe/internal/core v0.0.0
	github.com/cqlsafe/cqlsafe/internal/otelcore v0.0.0
	go.opentelemetry.io/otel v1.46.0
	go.opentelemetry.io/otel/metric v1.46.0
	go.opentelemetry.io/otel/sdk v1.46.0
	go.opentelemetry.io/otel/trace v1.46.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	golang.org/x/sys v0.47.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
)

replace (
	github.com/cqlsafe/cqlsafe/gocqlv2 => ..
	github.com/cqlsafe/cqlsafe/internal/core => ../../internal/core
	github.com/cqlsafe/cqlsafe/internal/otelcore => ../../internal/otelcore
)
