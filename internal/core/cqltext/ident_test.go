package cqltext

import (
	"errors"
	"strings"
	"testing"
)

func TestValidTableNameChecksEveryCharacter(t *testing.T) {
	long := strings.Repeat("t", 60)
	if err := ValidTableName(long); err != nil {
		t.Fatalf("%d characters: %v", len(long), err)
	}
	for _, bad := range []string{long + `"`, long + "-x", long + " x", strings.Repeat("t", 223), ""} {
		if err := ValidTableName(bad); !errors.Is(err, ErrIdentifier) {
			t.Errorf("ValidTableName(%q) = %v, want ErrIdentifier", bad, err)
		}
	}
}
