package uitest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestTmuxEnterOpensALease runs the real binary: enter on a lease shows it
// whole (the fields and the file as it is on disk), esc comes back.
func TestTmuxEnterOpensALease(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/busy.md", Fields: "Preferred models: mid"})
	boardPutLease(t, dir, "in-progress/busy.md", "mid-1", 600, 3600, "features/busy.md")
	tt := startTmux(t, 100, 40, dir, nil, "--root", dir)
	tt.waitShows(tmuxStartWait, `1 plans?`, `\[1 Plans\]`)
	tt.keys("2")
	tt.waitShows(tmuxWait, `\[2 Leases\]`, `▸ ● in-progress/busy\.md\s+mid-1`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `lease · in-progress/busy\.md`, `state\s+active, (?:49m5\d|50m00)s left`, `agent_id\s+mid-1`,
		`claimed_at\s+\d+(?:\.\d+)? · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ · 10m\d\ds ago`, `origin\s+features/busy\.md`,
		`On disk`, `"agent_id": "mid-1",`, `esc/enter close`)
	tt.keys("Escape")
	tt.waitShows(tmuxWait, `\[2 Leases\]`, `▸ ● in-progress/busy\.md\s+mid-1`)
}
