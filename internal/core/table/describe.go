package table

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// Source is what Describe reads through a driver's session.
type Source[TI any] interface {
	// Lookup is one look at the driver's metadata cache: the table's columns, whether
	// its keyspace has user types, or found false (noKeyspace: the keyspace is
	// unknown too).
	Lookup(keyspace, name string) (cols []ColumnDef[TI], hasUDTs, found, noKeyspace bool, err error)
	// Query runs a read and calls row with each row's values, scanned into dest.
	Query(ctx context.Context, cql string, args []any, dest []any, row func()) error
}

// The statements Describe reads with, besides the driver's metadata.
const (
	userTypesCQL = "SELECT type_name, field_names, field_types FROM system_schema.types WHERE keyspace_name = ?"
	localCQL     = "SELECT release_version FROM system.local"
	peersCQL     = "SELECT release_version FROM system.peers"
)

// DescribeWait bounds how long Describe waits for a new table to reach the driver's
// metadata cache.
const DescribeWait = 3 * time.Second

// Describe reads the table through src: its columns from the driver's metadata, the
// keyspace's user types (system_schema.types: the drivers' metadata loses a field's
// user type name) and the release_version of the cluster's oldest node. An invalid
// name is ErrInvalidName, an unknown keyspace or table ErrUnknownTable.
//
// The drivers cache a keyspace's metadata and drop it when a schema change event
// arrives, debounced by about a second: a table created just now may not be in the
// cache yet. Describe looks again for DescribeWait before calling it unknown.
func Describe[TI any](ctx context.Context, drv Driver[TI], src Source[TI], keyspace, name string) (*Table[TI], error) {
	if err := cqltext.ValidName(keyspace); err != nil {
		return nil, &Error{Err: ErrInvalidName, Keyspace: keyspace, Table: name, Row: -1, Detail: err.Error()}
	}
	if err := cqltext.ValidTableName(name); err != nil {
		return nil, &Error{Err: ErrInvalidName, Keyspace: keyspace, Table: name, Row: -1, Detail: err.Error()}
	}
	if src == nil {
		return nil, errors.New("table: nil session")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fail := func(err error) error { return fmt.Errorf("table: describe %s.%s: %w", keyspace, name, err) }
	deadline := time.Now().Add(DescribeWait)
	for {
		cols, hasUDTs, found, noKeyspace, err := src.Lookup(keyspace, name)
		if err != nil {
			return nil, fail(err)
		}
		if found {
			var udts map[string]cqltype.UserType
			if hasUDTs {
				if udts, err = userTypes(ctx, src, keyspace); err != nil {
					return nil, fail(err)
				}
			}
			// Read once here, kept on the Table: the builders choose by it (see Cell).
			release, err := clusterVersion(ctx, src)
			if err != nil {
				return nil, fail(err)
			}
			return Build(drv, keyspace, name, cols, udts, release)
		}
		if time.Now().After(deadline) || wait.Sleep(ctx, 100*time.Millisecond) != nil {
			missing := &Error{Err: ErrUnknownTable, Keyspace: keyspace, Table: name, Row: -1}
			if noKeyspace {
				missing.Detail = "keyspace does not exist"
			}
			return nil, missing
		}
	}
}

// userTypes reads the keyspace's user-defined types with their fields' type texts.
func userTypes[TI any](ctx context.Context, src Source[TI], keyspace string) (map[string]cqltype.UserType, error) {
	out := map[string]cqltype.UserType{}
	var name string
	var ut cqltype.UserType
	err := src.Query(ctx, userTypesCQL, []any{keyspace}, []any{&name, &ut.Fields, &ut.Types}, func() {
		out[name] = ut
		ut = cqltype.UserType{}
	})
	if err != nil {
		return nil, fmt.Errorf("read user types: %w", err)
	}
	return out, nil
}

// clusterVersion reads the release_version of every node the session's coordinator
// knows (itself and its peers) and returns the oldest.
func clusterVersion[TI any](ctx context.Context, src Source[TI]) (string, error) {
	var releases []string
	var rel string
	for _, q := range []string{localCQL, peersCQL} {
		if err := src.Query(ctx, q, nil, []any{&rel}, func() { releases = append(releases, rel) }); err != nil {
			return "", fmt.Errorf("read release_version: %w", err)
		}
	}
	return Oldest(releases...), nil
}
