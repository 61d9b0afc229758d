package look

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestServeElsewhereRefusesThisMachine: a published serve address that
// names this machine in any spelling is never dialled with the operator's
// key; another machine's is, at the address checked.
func TestServeElsewhereRefusesThisMachine(t *testing.T) {
	ctx := context.Background()
	refused := []string{"127.0.0.1:22", "localhost:22", "[::1]:22", "0.0.0.0:22", "[::]:22", "127.9.9.9:22", "no-port", ":22"}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				refused = append(refused, net.JoinHostPort(n.IP.String(), "22"))
			}
		}
	}
	for _, addr := range refused {
		if dial, err := ServeElsewhere(ctx, addr); err == nil || !strings.HasPrefix(err.Error(), "not asked: ") {
			t.Errorf("ServeElsewhere(%q) = %q, %v; want refused", addr, dial, err)
		}
	}
	// A documentation address (RFC 5737): surely no interface of this machine.
	if dial, err := ServeElsewhere(ctx, "192.0.2.7:2222"); err != nil || dial != "192.0.2.7:2222" {
		t.Errorf("another machine's address: %q, %v", dial, err)
	}
}
