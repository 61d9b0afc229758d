package egress

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
)

func TestStatusSaysWhatIsOpen(t *testing.T) {
	if c, closed, line, err := Status(sandbox.Off, config.Egress{}); c || closed || err != nil || line != "agents are not contained (sandbox: off)" {
		t.Errorf("off: %v %v %q %v", c, closed, line, err)
	}
	abi, err := sandbox.ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	c, closed, line, err := Status(sandbox.Auto, config.Egress{Open: true})
	if !c || closed || err != nil || !strings.HasPrefix(line, "agents are not contained on the network (egress: open): Landlock ABI") {
		t.Errorf("egress: open: %v %v %q %v", c, closed, line, err)
	}
	h, _ := config.ParseEgressHost("proxy.golang.org")
	c, closed, line, err = Status(sandbox.Auto, config.Egress{Allow: []config.EgressHost{h}})
	switch {
	case abi < netABI && (closed || !strings.HasPrefix(line, "agents are not contained on the network (the kernel's Landlock ABI")):
		t.Errorf("ABI %d: %v %q", abi, closed, line)
	case abi >= netABI && (!c || !closed || err != nil || !strings.HasSuffix(line, "; network only through the driver: egress to proxy.golang.org)")):
		t.Errorf("ABI %d: %v %v %q %v", abi, c, closed, line, err)
	}
}

func TestAllowed(t *testing.T) {
	var e config.Egress
	for _, h := range []string{"a.example", "b.example", "c.example", "d.example"} {
		x, _ := config.ParseEgressHost(h)
		e.Allow = append(e.Allow, x)
	}
	for n, want := range []string{"no egress host allowed", "egress to a.example", "egress to a.example and b.example", "egress to a.example, b.example and c.example", "egress to a.example and 3 more hosts"} {
		if got := Allowed(config.Egress{Allow: e.Allow[:n]}); got != want {
			t.Errorf("%d hosts: %q, want %q", n, got, want)
		}
	}
}
