package watchtest

// The names this package's tests use for the whole-program kit in
// fleetwatch/internal/testkit/fwtest; the kit holds the code.

import (
	"testing"
	"time"

	"fleetwatch/internal/cli"
	"fleetwatch/internal/testkit"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }

// The exit codes of internal/cli.
const (
	exitOK      = 0
	exitNothing = 1
	exitError   = 2
)

const (
	asFleetwatch = fwtest.AsFleetwatch
	barrierEnv   = fwtest.BarrierEnv
)

// result is what one fleetwatch process did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) kit() fwtest.Result {
	return fwtest.Result{Code: r.code, Stdout: r.stdout, Stderr: r.stderr}
}

func (r result) String() string { return r.kit().String() }

func fromKit(r fwtest.Result) result { return result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr} }

// plan is a compact plan description for newTree (fwtest.Plan).
type plan struct {
	rel    string // e.g. "features/a.md"
	fields string // header bullets, "Key: value" separated by ";"
	body   string
	age    time.Duration // mtime this long ago, so creation order is explicit
}

func (p plan) kit() fwtest.Plan {
	return fwtest.Plan{Rel: p.rel, Fields: p.fields, Body: p.body, Age: p.age}
}

func kitPlans(ps []plan) []fwtest.Plan {
	out := make([]fwtest.Plan, len(ps))
	for i, p := range ps {
		out[i] = p.kit()
	}
	return out
}

func fw(t testing.TB, dir string, args ...string) result {
	t.Helper()
	return fromKit(fwtest.Run(t, dir, args...))
}

func fwEnv(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	return fromKit(fwtest.RunEnv(t, dir, env, args...))
}

func newTree(t testing.TB, plans ...plan) string {
	t.Helper()
	return fwtest.NewTree(t, kitPlans(plans)...)
}

func writePlan(t testing.TB, dir string, p plan, defaultAge time.Duration) {
	t.Helper()
	fwtest.WritePlan(t, dir, p.kit(), defaultAge)
}

func gitProject(t *testing.T, plans ...plan) string {
	t.Helper()
	return fwtest.GitProject(t, kitPlans(plans)...)
}

func want(t testing.TB, r result, code int) {
	t.Helper()
	fwtest.Want(t, r.kit(), code)
}

func oneLineError(t *testing.T, r result, names ...string) {
	t.Helper()
	fwtest.OneLineError(t, r.kit(), names...)
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	testkit.Git(t, dir, args...)
}

var (
	fwCmd            = fwtest.Cmd
	exists           = fwtest.Exists
	openBarrier      = fwtest.OpenBarrier
	testExe          = fwtest.Exe
	leaseFilePath    = fwtest.LeaseFilePath
	leaseOf          = fwtest.LeaseOf
	activeOwner      = fwtest.ActiveOwner
	putLease         = fwtest.PutLease
	anchorLease      = fwtest.AnchorLease
	putRaw           = fwtest.PutRaw
	readRel          = fwtest.ReadRel
	lastLine         = fwtest.LastLine
	isPlanPath       = fwtest.IsPlanPath
	workOnceJSON     = fwtest.WorkOnceJSON
	jsonPlan         = fwtest.JSONPlan
	jsonWarningFiles = fwtest.JSONWarningFiles
	eventsOf         = fwtest.EventsOf
	toStrings        = fwtest.ToStrings
	age              = fwtest.Age
	fakeAgent        = fwtest.FakeAgent
	withExecutor     = fwtest.WithExecutor
	runLease         = fwtest.RunLease
	stateOf          = fwtest.StateOf
	waitFor          = fwtest.WaitFor
	readPID          = fwtest.ReadPID
	alive            = fwtest.Alive
	zombie           = fwtest.Zombie
	gitOut           = fwtest.GitOut
	gitRepo          = fwtest.GitRepo
	deadPID          = testkit.DeadPID
)
