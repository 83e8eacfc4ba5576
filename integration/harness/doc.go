// Package harness starts or finds a real Apache Cassandra for tests and tools, and gives
// each test a fresh keyspace on it.
//
// It is exported so applications can run their own suites against real Cassandra in CI
// the same way cqlsafe does. Start (and Main) tries, in order, and reports which it used:
//
//   - CQLSAFE_CASSANDRA_HOSTS=host:port[,host:port]: use this running cluster; nothing is
//     started.
//   - docker, when a Docker daemon answers: CQLSAFE_CASSANDRA_IMAGE (default
//     "cassandra:5.0", the official image) present locally or pulled, through
//     testcontainers-go.
//   - native: Apache Cassandra CQLSAFE_CASSANDRA_VERSION (default DefaultVersion) fetched
//     with Maven into CQLSAFE_CACHE_DIR (checksums checked, jars' SHA-256 recorded and
//     verified), started as a child process on a loopback address with a private data
//     directory and the configuration embedded in this package; it dies with the
//     process that started it. Needs Java 17 (11 for 4.1) and Maven.
//
// CQLSAFE_CASSANDRA_PATHS ("docker,native") changes which of the last two are tried.
// CQLSAFE_REQUIRE_CASSANDRA=1 makes no reachable Cassandra a failure, not a skip.
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
