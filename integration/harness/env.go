package harness

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// The environment variables the harness reads. The CLI and CI use the same names.
const (
	EnvHosts    = "CQLSAFE_CASSANDRA_HOSTS"
	EnvImage    = "CQLSAFE_CASSANDRA_IMAGE"
	EnvRequire  = "CQLSAFE_REQUIRE_CASSANDRA"
	EnvNodetool = "CQLSAFE_NODETOOL"
	// EnvVersion picks the Apache Cassandra version of the native node and of the
	// Docker image (default DefaultVersion, and the image DefaultImage).
	EnvVersion = "CQLSAFE_CASSANDRA_VERSION"
	// EnvPaths is the comma-separated list of ways to get a Cassandra, in order, when
	// CQLSAFE_CASSANDRA_HOSTS is unset: "docker,native" by default.
	EnvPaths = "CQLSAFE_CASSANDRA_PATHS"
	// EnvCacheDir holds downloads between runs (default: the user cache dir + /cqlsafe).
	EnvCacheDir = "CQLSAFE_CACHE_DIR"
	// EnvJavaHome forces the Java the native node runs on (not version-checked).
	EnvJavaHome = "CQLSAFE_JAVA_HOME"
)

// DefaultImage is the image started when CQLSAFE_CASSANDRA_IMAGE is unset.
const DefaultImage = "cassandra:5.0"

// Required reports whether CQLSAFE_REQUIRE_CASSANDRA asks for a Cassandra to be present.
func Required() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvRequire))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// ParseHosts splits a "host:port[,host:port]" list. A missing port means 9042.
func ParseHosts(s string) ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			// A bare IPv6 address (::1) takes the default port like a bare name.
			if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") && net.ParseIP(h) == nil {
				return nil, fmt.Errorf("harness: bad host %q in %s: %w", h, EnvHosts, err)
			}
			h = net.JoinHostPort(strings.Trim(h, "[]"), "9042")
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("harness: %s is empty", EnvHosts)
	}
	return hosts, nil
}

const howToGetOne = `no Cassandra reachable. Either
  - set ` + EnvHosts + ` to host:port of a running Cassandra, or
  - start Docker (testcontainers-go starts ` + DefaultImage + ` or $` + EnvImage + `), or
  - install Java 17 and Maven: the harness then runs a native node itself.
Set ` + EnvRequire + `=1 to make this a failure instead of a skip.`
