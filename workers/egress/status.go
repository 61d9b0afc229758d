package egress

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
)

// netABI is the first Landlock ABI with TCP rules.
const netABI = 4

// Status is sandbox.Status with the network's part: whether contained
// processes' TCP goes only to the driver's ports (closed), and the one
// line every face shows. Where Landlock contains writes and signals but
// not the network (`egress: open`, or a kernel before ABI 4) the line
// starts with sandbox.NotContained and says exactly what is open, so
// every face that warns of uncontained agents warns of this too.
func Status(m sandbox.Mode, e config.Egress) (contained, closed bool, line string, err error) {
	contained, line, err = sandbox.Status(m)
	if err != nil || !contained {
		return contained, false, line, err
	}
	abi, _ := sandbox.ABI()
	if why := OpenBecause(e); why != "" {
		return true, false, fmt.Sprintf("%s on the network (%s): Landlock ABI %d contains their writes and signals", sandbox.NotContained, why, abi), nil
	}
	return true, true, fmt.Sprintf("agents are contained (Landlock ABI %d; network only through the driver: %s)", abi, Allowed(e)), nil
}

// OpenBecause is why contained processes' network stays open on this
// host ("egress: open", or a kernel without Landlock's TCP rules); ""
// when Landlock closes it.
func OpenBecause(e config.Egress) string {
	abi, err := sandbox.ABI()
	switch {
	case e.Open:
		return "egress: open"
	case err != nil:
		return err.Error()
	case abi < netABI:
		return fmt.Sprintf("the kernel's Landlock ABI %d has no TCP rules; %d has", abi, netABI)
	}
	return ""
}

// Allowed says in a few words which hosts e lets through.
func Allowed(e config.Egress) string {
	switch n := len(e.Allow); {
	case e.Open:
		return "egress: open"
	case n == 0:
		return "no egress host allowed"
	case n == 1:
		return "egress to " + e.Allow[0].String()
	case n <= 3:
		s := "egress to " + e.Allow[0].String()
		for _, h := range e.Allow[1 : n-1] {
			s += ", " + h.String()
		}
		return s + " and " + e.Allow[n-1].String()
	default:
		return fmt.Sprintf("egress to %s and %d more hosts", e.Allow[0], n-1)
	}
}

// PortOf is the port of a loopback http URL (a driver's metering proxy),
// the one a contained process must be let connect to.
func PortOf(rawURL string) (uint16, bool) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		return 0, false
	}
	host, port := u.Hostname(), u.Port()
	a, err := netip.ParseAddr(host)
	n, perr := strconv.ParseUint(port, 10, 16)
	if err != nil || !a.IsLoopback() || perr != nil || n == 0 {
		return 0, false
	}
	return uint16(n), true
}
