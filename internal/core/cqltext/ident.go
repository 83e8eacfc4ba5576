package cqltext

import (
	"errors"
	"fmt"
	"strings"
)

// ErrIdentifier is matched by every error Identifier returns.
var ErrIdentifier = errors.New("cql: invalid identifier")

// MaxIdentifierLength is Cassandra's limit for keyspace and table names.
const MaxIdentifierLength = 48

// ValidName reports an error unless name can be a keyspace, table or column name that
// cqlsafe accepts: 1–48 characters of letters, digits and underscores. Names are taken
// as Cassandra stores them (case-sensitive); Quote makes them safe in CQL text.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrIdentifier)
	}
	if len(name) > MaxIdentifierLength {
		return fmt.Errorf("%w: %q is longer than %d characters", ErrIdentifier, name, MaxIdentifierLength)
	}
	for i := 0; i < len(name); i++ {
		if !isIdentPart(name[i]) {
			return fmt.Errorf("%w: %q contains %q (letters, digits and _ only)", ErrIdentifier, name, name[i])
		}
	}
	return nil
}

// Quote returns name as a quoted CQL identifier ("name", with " doubled), so that case
// and reserved words survive. It does not validate: call ValidName first.
func Quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// MaxTableNameLength is the longest table name cqlsafe reads a table by (every
// character a letter, digit or _, as ValidName): Cassandra 5.0
// takes table names longer than MaxIdentifierLength (the name and its 32-digit id make
// the data directory's name: 255 − 33), and a table that exists must be describable.
const MaxTableNameLength = 222

// ValidTableName is ValidName for the name of an existing table: up to
// MaxTableNameLength characters.
func ValidTableName(name string) error {
	if len(name) <= MaxIdentifierLength || len(name) > MaxTableNameLength {
		return ValidName(name)
	}
	for i := 0; i < len(name); i++ {
		if !isIdentPart(name[i]) {
			return fmt.Errorf("%w: %q contains %q (letters, digits and _ only)", ErrIdentifier, name, name[i])
		}
	}
	return nil
}

// QuoteQualified returns "keyspace"."table", or "table" when keyspace is empty.
func QuoteQualified(keyspace, table string) string {
	if keyspace == "" {
		return Quote(table)
	}
	return Quote(keyspace) + "." + Quote(table)
}
