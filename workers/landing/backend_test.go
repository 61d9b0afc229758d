package landing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A check worktree gets its own backend under a pseudo agent id (its
// variables in the check's environment, its .env.fleetwatch ignored), torn
// down and its ports given back once the check is done.
func TestChecksGetTheirOwnBackend(t *testing.T) {
	dir, commit := checksRepo(t)
	tmp := t.TempDir()
	log, seen := filepath.Join(tmp, "backend.log"), filepath.Join(tmp, "seen")
	yaml := `worktree:
  ports: 2
  env:
    APP_DB: "db_{agent_id}"
  setup: [sh, -c, "echo setup {agent_id} >> ` + log + `"]
  teardown: [sh, -c, "echo teardown {agent_id} >> ` + log + `"]
`
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	observed(t, dir)
	c := shCheck("env", `echo "$APP_DB $FLEET_PORT_1 $(git status --porcelain --untracked-files=all | wc -l) $(cat .env.fleetwatch | grep -c APP_DB)" > `+seen)
	results, logText := runOK(t, dir, []config.Check{c}, commit)
	if results[0].Result != Pass {
		t.Fatalf("check: %+v\n%s", results[0], logText)
	}
	data, _ := os.ReadFile(seen)
	f := strings.Fields(string(data))
	if len(f) != 4 || !strings.HasPrefix(f[0], "db_check-env-") || f[1] == "" || f[2] != "0" || f[3] != "1" {
		t.Errorf("the check saw %q (want its own db, a second port, a clean status, the env file)", data)
	}
	lines, _ := os.ReadFile(log)
	want := "setup " + strings.TrimPrefix(f[0], "db_") + "\nteardown " + strings.TrimPrefix(f[0], "db_") + "\n"
	if string(lines) != want {
		t.Errorf("backend log %q, want %q", lines, want)
	}
	ports, _ := look.Ports(dir)
	for id := range ports {
		if strings.HasPrefix(id, "check-") {
			t.Errorf("%s keeps its port after the check", id)
		}
	}
	noCheckWorktrees(t, dir)
}
