package main

import (
	"strings"
	"testing"
)

// TestParseFlags: bad flags are usage errors before anything connects.
func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--hosts", "127.0.0.1:9042", "--address-map", "127.0.0.11=127.0.0.21:19042,::1=127.0.0.1:19043"})
	if err != nil || c.addressMap["127.0.0.11"] != "127.0.0.21:19042" || c.addressMap["::1"] != "127.0.0.1:19043" {
		t.Fatalf("good flags: %+v, %v", c, err)
	}
	for _, bad := range [][]string{
		{"--timeout", "0s"},
		{"--keyspace", ""},
		{"--replication-factor", "0"},
		{"--address-map", "127.0.0.11"},
		{"--address-map", "127.0.0.11=localhost:9042"},
		{"--address-map", "node1=127.0.0.1:9042"},
		{"--address-map", "127.0.0.11=127.0.0.1:0"},
		{"--address-map", "127.0.0.11=127.0.0.21:19042,127.0.0.11=127.0.0.22:19042"},
		// Two nodes at one IP: one going down would take both out of gocql's query plan.
		{"--address-map", "127.0.0.11=127.0.0.1:19042,127.0.0.12=127.0.0.1:19043"},
		{"stray"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%s: accepted", strings.Join(bad, " "))
		}
	}
}
