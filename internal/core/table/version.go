package table

import (
	"strconv"
	"strings"
)

// version is a Cassandra release as major.minor; the zero value is unknown.
type version struct {
	release      string // as the node reported it, e.g. "4.1.10"
	major, minor int
}

// known reports whether the release could be read and parsed.
func (v version) known() bool { return v.major > 0 }

// atLeast reports whether v is major.minor or later. An unknown version is taken as
// the newest: a Table from FromMetadata keeps the builders' 5.0 behaviour.
func (v version) atLeast(major, minor int) bool {
	if !v.known() {
		return true
	}
	return v.major > major || v.major == major && v.minor >= minor
}

// parseVersion reads "4.1.10", "5.0.9", "6.0-alpha2", "5.0-SNAPSHOT"; anything else is
// unknown.
func parseVersion(release string) version {
	v := version{release: release}
	num, _, _ := strings.Cut(release, "-")
	parts := strings.SplitN(num, ".", 3)
	if len(parts) < 2 {
		return v
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major <= 0 || minor < 0 {
		return v
	}
	v.major, v.minor = major, minor
	return v
}

// Oldest returns the oldest of the releases (release_version of each node: in a rolling
// upgrade any node may coordinate a statement, so a statement must parse on the
// oldest); releases that do not parse (a peer that has not gossiped its version yet)
// are skipped; empty when none parses.
func Oldest(releases ...string) string {
	var oldest version
	for _, rel := range releases {
		v := parseVersion(rel)
		if !v.known() {
			continue
		}
		if !oldest.known() || !v.atLeast(oldest.major, oldest.minor) {
			oldest = v
		}
	}
	return oldest.release
}

// CassandraVersion returns the release_version of the oldest node of the cluster when
// the table was described (e.g. "4.1.10"); empty when unknown (FromMetadata, or Build without it), in which
// case the builders assume Cassandra 5.0 or later.
func (t *Table[TI]) CassandraVersion() string { return t.version.release }

// cellTimesSupported reports whether WRITETIME and TTL of c can be read on t's cluster:
// before Cassandra 5.0 they are refused for a non-frozen collection or UDT (one cell
// per element or field; 5.0 added MAXWRITETIME and per-element TTL lists).
func (t *Table[TI]) cellTimesSupported(c Column[TI]) error {
	if !c.Collection || t.version.atLeast(5, 0) {
		return nil
	}
	return &UnsupportedError{Keyspace: t.Keyspace, Table: t.Name, Column: c.Name, CQLType: c.CQLType,
		Feature: "WRITETIME and TTL of a non-frozen collection or UDT", Version: t.version.release, Needs: "5.0"}
}
