package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

// report rounded the median time to land to the minute, after cutting its
// fraction: 20.4 s, 50.6 s and 145 s showed as 0s, 1m0s and 2m0s.
func TestReportShowsTheTimeToLandToTheSecond(t *testing.T) {
	for _, c := range []struct {
		sec  float64
		want string
	}{{20.4, "20s"}, {50.6, "51s"}, {145, "2m25s"}, {3600*3 + 12*60 + 20, "3h12m"}, {7200, "2h"}} {
		var out, errOut bytes.Buffer
		printReport(&out, &errOut, "tier", []ledger.Line{{Key: "mid", Runs: 1, Plans: 1, Landed: 1, MedianToLand: c.sec}})
		row := strings.Fields(strings.Split(out.String(), "\n")[1])
		if got := row[len(row)-2]; got != c.want {
			t.Errorf("%v s to land shows as %q, want %q:\n%s", c.sec, got, c.want, out.String())
		}
	}
}
