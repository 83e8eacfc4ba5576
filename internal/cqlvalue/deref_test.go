package cqlvalue

import (
	"reflect"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func TestDeref(t *testing.T) {
	s, i, now, u := "x", int16(3), time.Now(), gocql.MustRandomUUID()
	m := map[string]int{"a": 1}
	for _, tc := range []struct{ in, want any }{{&s, "x"}, {&i, int16(3)}, {&now, now}, {&u, u}, {&m, m}, {5, 5}, {(*string)(nil), (*string)(nil)}} {
		if got := Deref(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Deref(%#v) = %#v", tc.in, got)
		}
	}
}
