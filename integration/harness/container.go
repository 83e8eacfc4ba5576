package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/testcontainers/testcontainers-go"
	tccassandra "github.com/testcontainers/testcontainers-go/modules/cassandra"
	"github.com/testcontainers/testcontainers-go/wait"
)

const cqlPort = "9042/tcp"

// startContainer runs the image through the testcontainers-go Cassandra module. Readiness
// there is "cqlsh answers"; waitReady then insists on a gocql session and schema agreement.
func (n *Node) startContainer(ctx context.Context, c config) (err error) {
	// testcontainers-go panics in a few environments without Docker; that is "unavailable".
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("testcontainers: %v", r)
		}
	}()
	c.progress("starting " + c.image + " with testcontainers-go")
	ctr, err := tccassandra.Run(ctx, c.image,
		testcontainers.WithWaitStrategyAndDeadline(c.startTimeout,
			wait.ForListeningPort(cqlPort),
			wait.ForExec([]string{"cqlsh", "-e", "SELECT bootstrapped FROM system.local"}).
				WithPollInterval(time.Second).
				WithResponseMatcher(func(body io.Reader) bool {
					data, _ := io.ReadAll(body)
					return strings.Contains(string(data), "COMPLETED")
				}),
		),
	)
	if ctr != nil {
		n.container = ctr
	}
	if err != nil {
		return err
	}
	host, err := ctr.Host(ctx)
	if err != nil {
		return err
	}
	port, err := ctr.MappedPort(ctx, cqlPort)
	if err != nil {
		return err
	}
	mapped := int(port.Num())
	n.hosts = []string{net.JoinHostPort(host, strconv.Itoa(mapped))}
	n.source = "container " + c.image
	hostIP := host
	if ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", host); err == nil && len(ips) > 0 {
		hostIP = ips[0].String()
	}
	// Every address the node announces is reached through the published port.
	n.translator = gocql.AddressTranslatorFunc(func(addr net.IP, port int) (net.IP, int) {
		return net.ParseIP(hostIP), mapped
	})
	c.progress("container up, CQL published on " + n.hosts[0] + " (port " + strconv.Itoa(mapped) + ")")
	return nil
}
