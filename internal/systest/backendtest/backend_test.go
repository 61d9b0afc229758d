package backendtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// buildDBAgent builds testdata/dbagent, the agent that lists the tables
// its DATABASE_URL shows.
func buildDBAgent(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dbagent")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/dbagent").CombinedOutput(); err != nil {
		t.Fatalf("building dbagent: %v\n%s", err, out)
	}
	return bin
}

// settings is a fleetwatch.yaml whose worktree: section gives each agent
// its own database with a table of its own, dropped by teardown.
func settings(pg postgres, teardownDB string) string {
	quote := func(words ...string) string { return `["` + strings.Join(words, `", "`) + `"]` }
	conn := pg.conn()
	tool := func(name string, rest ...string) string {
		return quote(append(append([]string{filepath.Join(pg.bin, name)}, conn...), rest...)...)
	}
	// The agents reach the database directly: it speaks no HTTP.
	return "egress: [\"127.0.0.1:" + strconv.Itoa(pg.port) + "\"]\n" +
		"worktree:\n" +
		"  ports: 2\n" +
		"  env:\n" +
		"    DATABASE_URL: \"postgresql://postgres@127.0.0.1:" + strconv.Itoa(pg.port) + "/app_{agent_id}\"\n" +
		"    APP_PORT: \"{port_1}\"\n" +
		"  setup:\n" +
		"    - " + tool("createdb", "app_{agent_id}") + "\n" +
		"    - " + tool("psql", "-X", "-v", "ON_ERROR_STOP=1", "-d", "app_{agent_id}", "-c", "create table t_{agent_id} (id int primary key, note text)") + "\n" +
		"  teardown: " + tool("dropdb", teardownDB) + "\n" +
		"  timeout: 2m\n"
}

// Two workers, each in its own worktree with its own database: each agent
// sees its own table through DATABASE_URL and not the other's; worktree
// remove drops the database; a teardown that fails keeps the worktree; a
// setup that fails gives the plan back saying why.
func TestEachWorkerHasItsOwnDatabase(t *testing.T) {
	t.Parallel()
	pg := startPostgres(t)
	dir := fwtest.GitProject(t,
		fwtest.Plan{Rel: "features/a.md"}, fwtest.Plan{Rel: "features/b.md"},
		fwtest.Plan{Rel: "features/c.md"}, fwtest.Plan{Rel: "features/d.md"})
	seen := t.TempDir()
	fwtest.WithExecutor(t, dir, buildDBAgent(t), filepath.Join(pg.bin, "psql"), filepath.Join(seen, "{agent_id}.tables"))
	fwtest.Grant(t, dir, seen)
	yaml := filepath.Join(dir, "fleetwatch.yaml")
	if err := os.WriteFile(yaml, []byte(settings(pg, "app_{agent_id}")), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, agent := range []string{"alpha", "beta"} {
		r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", agent)
		if r.Code != 0 {
			t.Fatalf("%s's run: %v\nbackend log:\n%s", agent, r, fwtest.ReadRel(t, dir, "../var/fleet/backends/"+agent+".log"))
		}
	}
	for _, agent := range []string{"alpha", "beta"} {
		data, err := os.ReadFile(filepath.Join(seen, agent+".tables"))
		if got := strings.TrimSpace(string(data)); err != nil || got != "t_"+agent {
			t.Errorf("%s's agent saw tables %q (%v), want only t_%s", agent, got, err, agent)
		}
		wt := filepath.Join(dir, "var", "worktrees", agent)
		env, err := os.ReadFile(filepath.Join(wt, ".env.fleetwatch"))
		if err != nil || !strings.Contains(string(env), "DATABASE_URL=postgresql://postgres@127.0.0.1:"+strconv.Itoa(pg.port)+"/app_"+agent+"\n") {
			t.Errorf("%s's .env.fleetwatch: %s %v", agent, env, err)
		}
		if st := testkit.Git(t, wt, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Errorf("%s's worktree is not clean: %q", agent, st)
		}
	}
	if got := pg.psql(t, "postgres", "select datname from pg_database where datname like 'app_%' order by 1"); got != "app_alpha\napp_beta" {
		t.Fatalf("databases %q", got)
	}
	if got := pg.psql(t, "app_alpha", "select count(*) from pg_tables where tablename = 't_beta'"); got != "0" {
		t.Errorf("alpha's database has beta's table")
	}

	// worktree remove drops alpha's database and only that (--force: the
	// agent's commit is not in dev, and the branch stays).
	if r := fwtest.Run(t, dir, "worktree", "remove", "--force", "--agent-id", "alpha"); r.Code != 0 {
		t.Fatalf("remove alpha: %v", r)
	}
	if got := pg.psql(t, "postgres", "select datname from pg_database where datname like 'app_%' order by 1"); got != "app_beta" {
		t.Errorf("after removing alpha: databases %q", got)
	}

	// A teardown that fails (it names a database that is not there) keeps
	// the worktree, exit 2, one line.
	os.WriteFile(yaml, []byte(settings(pg, "app_{agent_id}_gone")), 0o644)
	if r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "gamma"); r.Code != 0 {
		t.Fatalf("gamma's run: %v", r)
	}
	r := fwtest.Run(t, dir, "worktree", "remove", "--force", "--agent-id", "gamma")
	gamma := filepath.Join(dir, "var", "worktrees", "gamma")
	t.Logf("failing teardown: %s", r.Stderr)
	if r.Code != fwtest.ExitError || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "backend teardown (agent gamma") ||
		!strings.Contains(r.Stderr, `database "app_gamma_gone" does not exist`) || !strings.HasSuffix(r.Stderr, "the worktree "+gamma+" is kept\n") {
		t.Errorf("failing teardown: %v", r)
	}
	if _, err := os.Stat(gamma); err != nil {
		t.Errorf("gamma's worktree: %v", err)
	}

	// A setup that fails gives the plan back, saying which command and why.
	pg.psql(t, "postgres", "create database app_delta")
	r = fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "delta")
	if r.Code != fwtest.ExitError || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "backend setup command 1 of 2 `"+filepath.Join(pg.bin, "createdb")) ||
		!strings.Contains(r.Stderr, `database "app_delta" already exists`) || !strings.Contains(r.Stderr, "; released in-progress/d.md") {
		t.Errorf("failing setup: %v", r)
	}
	t.Logf("failing setup: %s", r.Stderr)
	if !fwtest.Exists(dir, "features/d.md") {
		t.Errorf("d.md was not given back: %v", fwtest.Contents(t, dir))
	}
	events := fwtest.EventsOf(t, dir)
	if last := events[len(events)-1]; last["agent_id"] != "delta" || !strings.Contains(last["reason"].(string), "backend setup command 1 of 2") {
		t.Errorf("last event %v", last)
	}
}
