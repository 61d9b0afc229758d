package testkit

import (
	"encoding/json"
	"os"
	"testing"
)

// ExpireLeaseFile rewrites the lease file at path as claimed and expired
// long ago, keeping its other fields: a holder that died.
func ExpireLeaseFile(tb testing.TB, path string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var l map[string]any
	if err := json.Unmarshal(data, &l); err != nil {
		tb.Fatal(err)
	}
	l["claimed_at"], l["expires_at"] = 1, 2
	if data, err = json.Marshal(l); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}
