//go:build !etcd

package claims_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// TestTaggedBackendNotBuilt opens etcd in a build without its tag: the
// name is known, and the error says how to build it.
func TestTaggedBackendNotBuilt(t *testing.T) {
	_, err := claims.Open(claims.Config{Backend: "etcd", Endpoints: []string{"http://127.0.0.1:1"}})
	if !errors.Is(err, claims.ErrNotBuilt) || !strings.Contains(err.Error(), "build it with `go build -tags etcd`") {
		t.Errorf("etcd in a build without it: %v", err)
	}
}
