package landing

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// Integration takes the first configured name that is a branch, exactly (a
// branch under dev/ is not dev), with one git call for all of them.
func TestIntegrationIsTheFirstNameThatIsABranch(t *testing.T) {
	dir, _ := checksRepo(t)
	if name, err := Integration(dir, config.Settings{}); err == nil {
		t.Fatalf("no dev or develop: %q", name)
	}
	fwtest.GitOut(t, dir, "branch", "dev/x")
	fwtest.GitOut(t, dir, "branch", "develop/y")
	if name, err := Integration(dir, config.Settings{}); err == nil {
		t.Fatalf("only dev/x and develop/y: %q", name)
	}
	fwtest.GitOut(t, dir, "branch", "-D", "develop/y")
	fwtest.GitOut(t, dir, "branch", "develop")
	var name string
	var err error
	if n := testkit.GitRuns(t, func() { name, err = Integration(dir, config.Settings{}) }); err != nil || name != "develop" || n != 1 {
		t.Fatalf("develop: %q, %v after %d git runs, want one", name, err, n)
	}
	fwtest.GitOut(t, dir, "branch", "-D", "dev/x")
	fwtest.GitOut(t, dir, "branch", "dev")
	if name, err := Integration(dir, config.Settings{}); err != nil || name != "dev" {
		t.Fatalf("dev and develop: %q, %v", name, err)
	}
	if name, err := Integration(dir, config.Settings{Integration: "develop"}); err != nil || name != "develop" {
		t.Fatalf("integration: develop: %q, %v", name, err)
	}
	if name, err := Integration(dir, config.Settings{Integration: "trunk"}); err == nil {
		t.Fatalf("integration: trunk, no such branch: %q", name)
	}
}
