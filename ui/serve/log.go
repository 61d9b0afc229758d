package serve

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

// writeLog answers `log AGENT [N]`, for a viewer's key as for an
// operator's: the last N lines (50 unless said, at most
// look.ServedLog's cap) of a worker's log on this machine, each made
// safe for a terminal. It reads, and never writes; a cockpit on another
// machine asks it for a worker running here.
func writeLog(w io.Writer, project string, args []string) error {
	n := 50
	switch {
	case len(args) == 0 || len(args) > 2:
		return fmt.Errorf("log: want 'log AGENT [N]', not %q", clean(strings.Join(append([]string{"log"}, args...), " ")))
	case len(args) == 2:
		v, err := strconv.Atoi(args[1])
		if err != nil || v < 1 {
			return fmt.Errorf("log: N is a number of lines from 1, not %q", clean(args[1]))
		}
		n = v
	}
	lines, err := look.ServedLog(project, args[0], n)
	if err != nil {
		return fmt.Errorf("log %s: %v", clean(args[0]), err)
	}
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// reachable is addr as another machine would dial it: a wildcard listen
// is this machine's name.
func reachable(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = look.Hostname()
	}
	return net.JoinHostPort(host, port)
}
