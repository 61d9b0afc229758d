package firsthour4test

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// Right after scaffold, endpoints.yaml is there with every endpoint
// commented out: agents says it is there and turns none on, and how to turn
// one on; doctor says so on a FAIL line and exits 1. One endpoint on, and
// that line is gone.
func TestScaffoldedEndpointsTurnNothingOn(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t)
	a := fwtest.Run(t, dir, "agents")
	if a.Code != 0 || strings.Contains(a.Stdout, "No ") || !strings.Contains(a.Stdout, "endpoints.yaml turns no endpoint on yet: delete the # of \"#endpoints:\"") {
		t.Errorf("agents after scaffold: %v", a)
	}
	d := fwtest.Run(t, dir, "doctor")
	if d.Code != 1 || !strings.Contains(d.Stdout, "FAIL  endpoints: "+dir+"/endpoints.yaml turns no endpoint on") {
		t.Errorf("doctor after scaffold: %v", d)
	}
	writeFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: own\n    tier: mid\n    command: [/bin/true, '{plan}']\n")
	if d := fwtest.Run(t, dir, "doctor"); d.Code != 0 || strings.Contains(d.Stdout, "endpoints:") {
		t.Errorf("doctor with an endpoint on: %v", d)
	}
	if a := fwtest.Run(t, dir, "agents"); a.Code != 0 || !strings.Contains(a.Stdout, "  own  tier mid") || strings.Contains(a.Stdout, "turns no endpoint on") {
		t.Errorf("agents with an endpoint on: %v", a)
	}
}
