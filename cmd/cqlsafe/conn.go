package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/table"
)

// connFlags are the conventional connection flags every command that talks to
// Cassandra takes.
type connFlags struct {
	hosts        string
	keyspace     string
	consistency  string
	username     string
	passwordFile string
	tlsCA        string
	tlsCert      string
	tlsKey       string
	tlsServer    string
	connectOnly  bool
	timeout      time.Duration
	verbose      bool
	logOut       io.Writer
}

func (c *connFlags) register(fs *flag.FlagSet, keyspaceHelp string) {
	fs.StringVar(&c.hosts, "hosts", os.Getenv(harness.EnvHosts), "contact points host:port[,host:port] (default $"+harness.EnvHosts+")")
	fs.StringVar(&c.keyspace, "keyspace", "", keyspaceHelp)
	fs.StringVar(&c.consistency, "consistency", "LOCAL_QUORUM", "consistency level (ONE, LOCAL_ONE, QUORUM, LOCAL_QUORUM, ALL, …)")
	fs.StringVar(&c.username, "username", "", "username for PasswordAuthenticator")
	fs.StringVar(&c.passwordFile, "password-file", "", "file holding the password (never pass passwords as flags)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM file of CA certificates: enables TLS")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM client certificate (with --tls-key): enables TLS")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM client key")
	fs.StringVar(&c.tlsServer, "tls-server-name", "", "server name to verify (default: the host)")
	fs.BoolVar(&c.connectOnly, "connect-only", false, "connect only to the given host, never to addresses the cluster announces (port mappings, NAT)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "per-request timeout; also bounds connecting")
	fs.BoolVar(&c.verbose, "v", false, "show the driver's (gocql's) own log on stderr")
	c.logOut = stderrOf(fs)
}

// logger is where gocql's log goes: nowhere by default (its reconnect chatter would
// bury the one line that says what is wrong), stderr with -v.
func (c *connFlags) logger() gocql.StdLogger {
	if !c.verbose || c.logOut == nil {
		return harness.QuietLogger()
	}
	return log.New(c.logOut, "gocql: ", log.LstdFlags)
}

func (c *connFlags) cluster() (*gocql.ClusterConfig, error) {
	if strings.TrimSpace(c.hosts) == "" {
		return nil, usageError{errors.New("--hosts is required (host:port[,host:port])")}
	}
	hosts, err := harness.ParseHosts(c.hosts)
	if err != nil {
		return nil, usageError{fmt.Errorf("--hosts %q: %w", c.hosts, err)}
	}
	if c.timeout <= 0 {
		return nil, usageError{fmt.Errorf("--timeout must be more than 0 (got %v)", c.timeout)}
	}
	cons, err := parseConsistency(c.consistency)
	if err != nil {
		return nil, usageError{err}
	}
	cl := gocql.NewCluster(hosts...)
	cl.Keyspace = c.keyspace
	cl.Consistency = cons
	cl.ProtoVersion = 4
	cl.Timeout = c.timeout
	cl.ConnectTimeout = c.timeout
	cl.Logger = c.logger()
	if c.username != "" {
		if c.passwordFile == "" {
			return nil, usageError{errors.New("--username needs --password-file")}
		}
		pw, err := os.ReadFile(c.passwordFile)
		if err != nil {
			return nil, fmt.Errorf("read --password-file: %w", err)
		}
		cl.Authenticator = gocql.PasswordAuthenticator{Username: c.username, Password: strings.TrimRight(string(pw), "\r\n")}
	}
	if c.tlsCA != "" || c.tlsCert != "" {
		tc := &tls.Config{ServerName: c.tlsServer, MinVersion: tls.VersionTLS12}
		if c.tlsCA != "" {
			pem, err := os.ReadFile(c.tlsCA)
			if err != nil {
				return nil, fmt.Errorf("read --tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", c.tlsCA)
			}
			tc.RootCAs = pool
		}
		if c.tlsCert != "" {
			cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
			if err != nil {
				return nil, fmt.Errorf("load --tls-cert/--tls-key: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		cl.SslOpts = &gocql.SslOptions{Config: tc, EnableHostVerification: tc.ServerName != ""}
	}
	if c.connectOnly {
		tr, err := harness.ConnectOnly(hosts[0])
		if err != nil {
			return nil, fmt.Errorf("--connect-only: %w", err)
		}
		cl.Hosts = hosts[:1]
		cl.DisableInitialHostLookup = true
		cl.AddressTranslator = tr
	}
	return cl, nil
}

// session connects within --timeout. A named host that refuses, cannot be reached or
// never answers CQL ends the command with one line: which host, what happened, what to
// try.
func (c *connFlags) session(ctx context.Context) (*gocql.Session, error) {
	cl, err := c.cluster()
	if err != nil {
		return nil, err
	}
	// --timeout ends the wait through ctx; gocql's own handshake timeout runs a little
	// longer so the message is ours ("gave no CQL answer"), not its generic one.
	cl.ConnectTimeout = c.timeout + time.Second
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var tlsConf *tls.Config
	if cl.SslOpts != nil {
		tlsConf = cl.SslOpts.Config
	}
	// Only the hosts that answer CQL become contact points: gocql could otherwise spend
	// its connect timeout on a silent one before it tries one that works.
	up, down, err := harness.ProbeHosts(ctx, cl.Hosts, tlsConf)
	if err != nil {
		return nil, connectError(err, c.hosts)
	}
	for _, d := range down { // named, not dropped in silence
		if c.logOut != nil {
			fmt.Fprintf(c.logOut, "cqlsafe: %s %s; going on with %s\n", d.Host, d.Reason, strings.Join(up, ","))
		}
	}
	cl.Hosts = up
	s, err := harness.CreateSession(ctx, cl)
	if err != nil && cl.Keyspace != "" && errors.Is(err, gocql.ErrNoConnectionsStarted) {
		// gocql says only "no connections were made" when USE of the keyspace failed.
		err = c.missingKeyspace(ctx, cl, err)
	}
	if err != nil {
		return nil, connectError(err, strings.Join(cl.Hosts, ","))
	}
	return s, nil
}

// missingKeyspace tells a keyspace that does not exist from other reasons a session
// bound to it could not start.
func (c *connFlags) missingKeyspace(ctx context.Context, cl *gocql.ClusterConfig, err error) error {
	bare := *cl
	bare.Keyspace = ""
	s, berr := harness.CreateSession(ctx, &bare)
	if berr != nil {
		return err
	}
	defer s.Close()
	var name string
	qerr := s.Query(`SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?`, cl.Keyspace).
		WithContext(ctx).Scan(&name)
	if errors.Is(qerr, gocql.ErrNotFound) {
		return fmt.Errorf("%w: %q on %s (check --keyspace; names are case-sensitive when quoted)", errNoKeyspace, cl.Keyspace, c.hosts)
	}
	return err
}

// errNoKeyspace: --keyspace names a keyspace the cluster does not have.
var errNoKeyspace = errors.New("no such keyspace")

// connectError is the one line a failed connect to hosts prints: which host, what
// happened, what to try.
func connectError(err error, hosts string) error {
	if errors.Is(err, errNoKeyspace) {
		return err
	}
	what := strings.Join(strings.Fields(err.Error()), " ") // gocql joins per-host errors with newlines
	if he := (*harness.HostError)(nil); errors.As(err, &he) {
		hosts, what = he.Host, he.Reason
	}
	return fmt.Errorf("cannot connect to %s: %s; check --hosts, or start a local node with scripts/native-node.sh start and pass the host:port it prints (or set %s)",
		hosts, what, harness.EnvHosts)
}

func parseConsistency(s string) (gocql.Consistency, error) {
	names := map[string]gocql.Consistency{"ANY": gocql.Any, "ONE": gocql.One, "TWO": gocql.Two, "THREE": gocql.Three,
		"QUORUM": gocql.Quorum, "ALL": gocql.All, "LOCAL_QUORUM": gocql.LocalQuorum, "EACH_QUORUM": gocql.EachQuorum,
		"LOCAL_ONE": gocql.LocalOne}
	c, ok := names[strings.ToUpper(s)]
	if !ok {
		return 0, fmt.Errorf("unknown consistency %q", s)
	}
	return c, nil
}

// tableError says which flag named a table the keyspace does not have.
func tableError(err error, flag string) error {
	var te *table.Error
	if errors.As(err, &te) && errors.Is(err, table.ErrUnknownTable) {
		return fmt.Errorf("no table %s.%s (check %s; names are case-sensitive when quoted)", te.Keyspace, te.Table, flag)
	}
	return err
}
