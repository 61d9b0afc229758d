package workers

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// The scope scanner: while a build runs, the driver looks at what the
// change touches (commits since the merge base with the integration
// branch, staged, unstaged and untracked files, and every file written in
// the worktree as it happened, ignored or since deleted) and says at once
// when a path is outside the build's scope or under .plans/.
//
// Cost per tick and worker: one `git status` and one `git rev-parse HEAD`;
// the committed paths are listed again only when HEAD moved, so a long
// build with a big history costs the same every second.

// scanEvery is how often a running build's worktree is looked at: a change
// is seen within two of them.
var scanEvery = time.Second // a variable for tests

// scanTimeout bounds each git call of a scan: a wedged git must not stall
// the driver's heartbeat for long.
const scanTimeout = 15 * time.Second

// scanner watches one running build's worktree.
type scanner struct {
	tick *time.Ticker // nil: nothing to scan (no worktree)
	dir  string       // the worktree
	// base is what committed paths are measured from: the integration
	// branch, or, when the job names none, HEAD as the build started.
	base string
	// head is the HEAD committed was listed at; committed the paths
	// changed between the merge base and it.
	head      string
	committed []string
	reported  map[string]bool // violations already logged and sent as events
	failed    string          // the last scan error logged, so it is said once
	// next is when the next tick may scan: a scan that took long (a huge
	// work tree) spaces the next ones out, so git never takes more than a
	// quarter of a core per worker.
	next time.Time
	// writes are the files written as they happened: what git's look
	// misses (a file created and deleted between two scans, an ignored
	// one).
	writes *contain.WriteWatch
}

// newScanner starts watching r's worktree.
func (d *Driver) newScanner(r *running) *scanner {
	s := &scanner{dir: r.job.Worktree, base: r.job.Base, reported: map[string]bool{}}
	if s.dir == "" {
		return s
	}
	if s.base == "" {
		// No integration branch: at least what this run commits counts.
		s.base, _ = tree.RunGit(scanTimeout, nil, s.dir, "rev-parse", "--verify", "-q", "HEAD")
	}
	d.state.Scope, d.state.Touched, d.state.TouchedMore, d.state.Violations = scopeWords(r.job.Scope, nil, 0), nil, 0, nil
	d.save()
	if r.box != nil {
		s.writes = r.box.Writes // the box's, closed with it
	}
	s.tick = time.NewTicker(scanEvery)
	return s
}

// due fires when the worktree should be looked at again; nil (never) when
// there is nothing to scan.
func (s *scanner) due() <-chan time.Time {
	if s.tick == nil {
		return nil
	}
	return s.tick.C
}

func (s *scanner) close() {
	if s.tick != nil {
		s.tick.Stop()
	}
}

// scanTick looks at the worktree once while the agent runs; over is true
// when a violation stopped it (the plan parked).
func (d *Driver) scanTick(r *running, s *scanner) (o Outcome, over bool) {
	began := time.Now()
	if began.Before(s.next) {
		return o, false
	}
	fresh, ok := d.scanOnce(r, s)
	s.next = began.Add(4 * time.Since(began))
	if !ok || len(fresh) == 0 || !r.job.StopOnViolation {
		return o, false
	}
	d.Log.Printf("on_scope_violation is stop: stopping the agent")
	d.stop(r, r.done)
	d.bringEnd(r) // stopped is not lost: its commits stay on its branch for the operator
	return d.parkForScope(r, d.state.Violations), true
}

// scanFinal is the look after the agent exits 0, before any move: over is
// true when a violation parked the plan instead.
func (d *Driver) scanFinal(r *running, s *scanner, o Outcome) (Outcome, bool) {
	if s.tick == nil {
		return o, false
	}
	if _, ok := d.scanOnce(r, s); !ok || !r.job.StopOnViolation || len(d.state.Violations) == 0 {
		return o, false
	}
	return d.parkForScope(r, d.state.Violations), true
}

// scanOnce lists what the change touches, records it in the state file
// when it changed, and logs each violation the first time it is seen.
// fresh are those; ok is false when git could not say.
func (d *Driver) scanOnce(r *running, s *scanner) (fresh []string, ok bool) {
	touched, err := s.touched()
	if err != nil {
		if msg := tree.ErrText(err); msg != s.failed {
			d.Log.Printf("scope scan of %s failed, will retry: %s", s.dir, msg)
			s.failed = msg
		}
		return nil, false
	}
	s.failed = ""
	violations := r.job.Scope.Violations(touched)
	more := max(0, len(touched)-look.MaxTouched)
	words := scopeWords(r.job.Scope, violations, len(touched))
	capped, cappedV := touched[:len(touched)-more], violations[:min(len(violations), look.MaxTouched)]
	for _, p := range violations {
		if !s.reported[p] {
			s.reported[p] = true
			fresh = append(fresh, p)
		}
	}
	// The log and the event first: whoever sees a violation in the state
	// file finds it in both.
	if len(fresh) > 0 {
		d.reportViolations(r, fresh)
	}
	st := &d.state
	if st.Scope != words || st.TouchedMore != more || !slices.Equal(st.Touched, capped) || !slices.Equal(st.Violations, cappedV) {
		st.Scope, st.Touched, st.TouchedMore, st.Violations = words, capped, more, cappedV
		d.save()
	}
	return fresh, true
}

// reportViolations says in the worker's log and the event log which paths
// the build touched out of scope.
func (d *Driver) reportViolations(r *running, paths []string) {
	why := violationText(paths)
	d.Log.Printf("%s", why)
	rel := r.job.Rel
	d.Tree.LogEvent(planfs.Event{
		Event: "scope-violation", Slug: model.SlugOf(path.Base(rel)), From: rel,
		AgentID: r.me.AgentID, Paths: paths[:min(len(paths), look.MaxTouched)], Reason: why,
	})
}

// parkForScope parks the stopped build's plan in blocked/ with the paths as
// the reason (on_scope_violation: stop).
func (d *Driver) parkForScope(r *running, paths []string) Outcome {
	return d.parkBlocked(r, "scope violation: "+listPaths(paths))
}

// touched is every path the change in s.dir touches, sorted, without
// repeats and without the worktree's .env.fleetwatch.
func (s *scanner) touched() ([]string, error) {
	// Porcelain v2: no line starts with a space, so nothing is lost when
	// the runner trims the output; without renames, a rename is its two
	// sides, both counted. A submodule's own work tree is not looked into
	// (git would run a git there, in the agent's repository).
	status, err := tree.RunGit(scanTimeout, nil, s.dir, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty")
	if err != nil {
		return nil, err
	}
	out := append(statusPaths(status), s.writes.Paths()...)
	if err := s.committedPaths(); err != nil {
		return nil, err
	}
	out = append(out, s.committed...)
	out = slices.DeleteFunc(out, func(p string) bool { return p == tree.EnvFile || p == "" })
	slices.Sort(out)
	return slices.Compact(out), nil
}

// committedPaths lists again what HEAD changed since the merge base with
// s.base, when HEAD moved since the last scan.
func (s *scanner) committedPaths() error {
	head, err := tree.RunGit(scanTimeout, nil, s.dir, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil || head == s.head {
		return nil // no commit yet (an unborn branch): nothing committed
	}
	if s.base == "" {
		s.head, s.committed = head, nil
		return nil
	}
	mb, err := tree.RunGit(scanTimeout, nil, s.dir, "merge-base", s.base, head)
	if err != nil {
		return fmt.Errorf("merge base of %s and HEAD: %v", s.base, tree.ErrText(err))
	}
	diff, err := tree.RunGit(scanTimeout, nil, s.dir, "diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", mb, head)
	if err != nil {
		return err
	}
	// --name-status -z: a status letter, then the path, each NUL-ended;
	// the letter first means a trimmed output loses nothing.
	var paths []string
	f := strings.Split(diff, "\x00")
	for i := 1; i < len(f); i += 2 {
		paths = append(paths, f[i])
	}
	s.head, s.committed = head, paths
	return nil
}

// statusPaths are the paths of `git status --porcelain=v2 -z` output:
// ordinary (1), unmerged (u) and untracked (?) entries; ignored (!) ones
// are not the agent's change.
func statusPaths(out string) []string {
	var paths []string
	f := strings.Split(out, "\x00")
	for i := 0; i < len(f); i++ {
		e := f[i]
		var fields int
		switch {
		case strings.HasPrefix(e, "1 "):
			fields = 9 // 1 XY sub mH mI mW hH hI path
		case strings.HasPrefix(e, "2 "):
			// Not with --no-renames; should one come, its source path is
			// the next field, and counts too.
			fields = 10
			if i+1 < len(f) {
				i++
				paths = append(paths, f[i])
			}
		case strings.HasPrefix(e, "u "):
			fields = 11 // u XY sub m1 m2 m3 mW h1 h2 h3 path
		case strings.HasPrefix(e, "? "):
			fields = 2
		default:
			continue
		}
		if parts := strings.SplitN(e, " ", fields); len(parts) == fields {
			paths = append(paths, parts[fields-1])
		}
	}
	return paths
}

// scopeWords is the state file's word on a build's scope.
func scopeWords(sc *model.Scope, violations []string, touched int) string {
	switch {
	case len(violations) == 1:
		return "1 path out of scope"
	case len(violations) > 1:
		return fmt.Sprintf("%d paths out of scope", len(violations))
	case sc == nil:
		return "no scope check"
	case touched == 1:
		return "in scope (1 file)"
	}
	return fmt.Sprintf("in scope (%d files)", touched)
}

// violationText is the log line and event reason for newly seen
// violations: those outside the scope and those under .plans/ said apart.
func violationText(paths []string) string {
	var plans, out []string
	for _, p := range paths {
		if p == model.PlansDir || strings.HasPrefix(p, model.PlansDir+"/") {
			plans = append(plans, p)
		} else {
			out = append(out, p)
		}
	}
	var parts []string
	if len(out) > 0 {
		parts = append(parts, listPaths(out)+" outside the approved scope")
	}
	if len(plans) > 0 {
		parts = append(parts, listPaths(plans)+" under "+model.PlansDir+"/, which only fleetwatch moves")
	}
	return "scope violation: " + strings.Join(parts, "; ")
}

// maxListed bounds how many paths a log line or reason names.
const maxListed = 10

// listPaths is "a.go, b.go", or the first maxListed and how many more.
func listPaths(paths []string) string {
	if len(paths) <= maxListed {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:maxListed], ", "), len(paths)-maxListed)
}
