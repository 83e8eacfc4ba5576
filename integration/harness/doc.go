// Package harness starts or finds a real Apache Cassandra for tests and tools, and gives
// each test a fresh keyspace on it.
//
// It is exported so applications can run their own suites against real Cassandra in CI
// the same way cqlsafe does. Three environment variables steer it:
//
//   - CQLSAFE_CASSANDRA_HOSTS=host:port[,host:port]: use this running cluster; no
//     container is started.
//   - CQLSAFE_CASSANDRA_IMAGE=image: the image testcontainers-go starts otherwise
//     (default "cassandra:5.0", the official image).
//   - CQLSAFE_REQUIRE_CASSANDRA=1: no reachable Cassandra is a failure, not a skip.
//
// A package's TestMain starts one node for all its tests:
//
//	var node *harness.Node
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m, &node)) }
//
//	func TestSomething(t *testing.T) {
//		s, ks := node.Keyspace(t) // fresh keyspace, dropped when the test ends
//		...
//	}
//
// "Ready" means a gocql session answers a query and the cluster agrees on its schema,
// not that a log line appeared. Testcontainers-go needs
// TESTCONTAINERS_HOST_OVERRIDE=localhost on machines where it would otherwise pick the
// default gateway as the Docker host, and TESTCONTAINERS_RYUK_DISABLED=true where the
// Ryuk image cannot be pulled.
package harness
