package inputtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// The "no executor" hint names a file that works: written as it says, with
// the agent's name filled in, --run works the plan.
func TestRunNoExecutorHintNamesAFileThatWorks(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	m := regexp.MustCompile("create (\\S+) with `([^`]+)`").FindStringSubmatch(r.Stderr)
	if r.Code != fwtest.ExitError || m == nil {
		t.Fatalf("no registry: %v", r)
	}
	text := strings.Replace(m[2], "your-agent", strconv.Quote(fwtest.FakeAgent(t)), 1)
	if err := os.WriteFile(m[1], []byte(text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m[1] != filepath.Join(dir, "endpoints.yaml") {
		t.Errorf("the hint names %s", m[1])
	}
	if r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1"); r.Code != 0 || !fwtest.Exists(dir, "review-needed/a.md") {
		t.Errorf("with the file the hint names (%q): %v", text, r)
	}
}
