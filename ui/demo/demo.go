// Package demo builds the throw-away sample project `fleetwatch demo` opens:
// jotter, a small notes web app in a real git repository, with a .plans/
// tree that has plans in every lane, one live and one expired lease, a
// dependency chain, and an event log, all made through planfs's verbs.
// jotter's files (its source, plans and config) are real files in
// _sample, embedded; the history that writes them, with its times, is code.
//
// Everything is fixed by the time passed to Create, except what git and the
// operating system choose (commit ids, lease tokens, hosts and pids).
package demo

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

const day = 24 * time.Hour

// Create makes the sample project in dir, which must be empty or not exist
// yet, and returns its absolute path. now is the moment the demo shows: the
// project's history ends there, one lease is live at now and one expired an
// hour before it.
//
// The tree it leaves (and what `fleetwatch check` says about it on purpose):
//   - drafts/: dark-mode (no Preferred models, no Done when, and a bold key
//     without its `-` bullet, which check reports), offline-sync;
//   - bugs/: note-html-injection (P1, too hard for small), utc-dates-in-list;
//   - features/: a dependency chain save-notes-to-disk (completed, met) ←
//     full-text-search ← search-result-highlighting (a `## Depends on`
//     section, unmet); rate-limit-login, met only through git history (its
//     session-cookies plan was completed, then deleted); export-to-pdf on a
//     slug no plan has (check reports it); rotate-signing-key, alice's;
//     note-pinning, keyboard-shortcuts and tag-autocomplete (promoted);
//   - in-progress/: duplicate-tags-by-case leased to mid-1 (live),
//     crash-on-empty-title leased to small-2 (expired; check reports it),
//     share-links (plan first), whose proposal by reasoner-2 waits in the
//     coordinator's inbox (var/fleet/run/proposals/share-links/1.md), the
//     lease held by the inbox;
//   - review-needed/: csv-import (peer-reviewed, approved, first in the
//     merge queue), archive-notes (approved, second: it touches the lines
//     csv-import does, so it conflicts once csv-import lands) and
//     word-count (a peer asked for changes); each on its feature branch in
//     its author's worktree; fleetwatch.yaml names dev and two checks;
//     ambiguous/: improve-performance;
//     blocked/: email-reminders (both parked with a reason);
//   - completed/: save-notes-to-disk, basic-auth-login;
//   - the usage ledger: a week of runs (builds, share-links' plan, the
//     peer reviews) against fleetwatch.yaml's budgets.
//
// With an executor (the command line of the demo's stand-in agent), the
// project gets an endpoints.yaml naming it, so workers spawned from the UI
// really run; and state files and logs for three workers: mid-1 on another
// host (live), small-2 (dead, its process gone) and reasoner-1 (exited).
func Create(dir string, now time.Time, executor []string) (project string, err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", errors.New("the demo needs git on PATH")
	}
	if project, err = emptyDir(dir); err != nil {
		return "", err
	}
	b := &builder{project: project, now: now}
	b.build()
	if executor != nil {
		b.fleet(executor)
	}
	if b.err != nil {
		return "", fmt.Errorf("cannot build the demo project in %s: %w", project, b.err)
	}
	return project, nil
}

// emptyDir makes dir if it is missing, refuses one with anything in it, and
// returns its absolute path.
func emptyDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return "", fmt.Errorf("cannot create %s: %v", abs, err)
		}
	case err != nil:
		return "", fmt.Errorf("cannot use %s for the demo: %v", abs, err)
	case len(entries) > 0:
		return "", fmt.Errorf("%s is not empty; the demo needs an empty or new directory", abs)
	}
	return abs, nil
}

// builder runs the project's history step by step; after the first failed
// step the others do nothing and err says what failed.
type builder struct {
	project string
	now     time.Time
	tree    *planfs.Tree
	err     error
}

func (b *builder) build() {
	b.git(0, author{}, "init", "-q", "-b", "main")
	// Local settings, so commits work without a global git identity, and
	// later ones (an agent's, the operator's) too.
	b.git(0, author{}, "config", "user.name", "Alice Example")
	b.git(0, author{}, "config", "user.email", "alice@jotter.invalid")
	b.git(0, author{}, "config", "commit.gpgsign", "false")

	b.writeApp("project", "README.md", "go.mod", "notes.go", "web/index.html", "web/app.js")
	b.writeApp("first-commit", "main.go")
	b.commit(14*day, alice, "Start jotter: a tiny notes server with a web page")
	b.writeApp("project", "notes_test.go")
	b.commit(13*day, alice, "Notes: test the list order")

	if b.err == nil {
		_, b.err = planfs.Scaffold(b.project)
	}
	if b.err == nil {
		b.tree, b.err = planfs.Open(b.project)
	}
	b.add(model.Features, "save-notes-to-disk", 12*day)
	b.add(model.Features, "session-cookies", 12*day-time.Hour)
	b.add(model.Features, "basic-auth-login", 12*day-2*time.Hour)
	b.commit(12*day-3*time.Hour, alice, "Plans: scaffold .plans/ and the first backlog")
	b.firstPlansDone()
	b.backlog()
	b.triage()
	b.landingQueue()
	b.inFlight()
	b.usage()
	if b.tree != nil {
		b.tree.Now = time.Now
	}
}

// firstPlansDone is the fleet's first work, and a pruned completed/.
func (b *builder) firstPlansDone() {
	disk := b.claim("features/save-notes-to-disk.md", "mid-1", 11*day, planfs.DefaultTTL)
	cookies := b.claim("features/session-cookies.md", "mid-2", 11*day-time.Hour, planfs.DefaultTTL)
	b.complete(disk, model.Completed, "mid-1", 11*day-3*time.Hour)
	b.complete(cookies, model.Completed, "mid-2", 11*day-5*time.Hour)
	b.writeApp("project", "main.go", "persist.go", "session.go", ".gitignore")
	b.commit(11*day-6*time.Hour, agent("mid-1"), "Save notes to disk; sign session cookies")
	login := b.claim("features/basic-auth-login.md", "reasoner-1", 10*day, planfs.DefaultTTL)
	b.complete(login, model.Completed, "reasoner-1", 10*day-6*time.Hour)
	b.writeApp("project", "auth.go")
	b.commit(10*day-7*time.Hour, agent("reasoner-1"), "Hash and check passwords with PBKDF2")

	// Pruned: from now on only git history knows session-cookies was done.
	b.git(7*day, alice, "rm", "-q", filepath.Join(planfs.Dir, "completed", "session-cookies.md"))
	b.commit(7*day, alice, "Plans: prune completed/ (session-cookies shipped in v0.2)")
}

// backlog is the v0.3 backlog.
func (b *builder) backlog() {
	// The v0.3 backlog, written over a few days: the ready order comes from
	// these times where lane, priority and value tie.
	b.add(model.Bugs, "crash-on-empty-title", 6*day)
	b.add(model.Features, "full-text-search", 6*day-2*time.Hour)
	b.add(model.Features, "note-pinning", 6*day-4*time.Hour)
	b.add(model.Bugs, "utc-dates-in-list", 5*day)
	b.add(model.Features, "search-result-highlighting", 5*day-time.Hour)
	b.add(model.Features, "rate-limit-login", 5*day-3*time.Hour)
	b.add(model.Features, "csv-import", 5*day-5*time.Hour)
	b.add(model.Features, "email-reminders", 4*day)
	b.add(model.Bugs, "duplicate-tags-by-case", 4*day-time.Hour)
	b.add(model.Features, "export-to-pdf", 4*day-2*time.Hour)
	b.add(model.Bugs, "note-html-injection", 4*day-3*time.Hour)
	b.add(model.Features, "rotate-signing-key", 4*day-4*time.Hour)
	b.add(model.Features, "improve-performance", 4*day-6*time.Hour)
	b.add(model.Features, "keyboard-shortcuts", 3*day-time.Hour)
	b.add(model.Features, "archive-notes", 3*day-90*time.Minute)
	b.add(model.Features, "word-count", 3*day-100*time.Minute)
	b.add(model.Drafts, "tag-autocomplete", 3*day-2*time.Hour)
	b.add(model.Drafts, "dark-mode", 3*day-3*time.Hour)
	b.add(model.Drafts, "offline-sync", 3*day-5*time.Hour)
	b.commit(3*day-6*time.Hour, alice, "Plans: backlog for v0.3")
}

// triage reviews, promotes and parks.
func (b *builder) triage() {
	// Triage: one plan done and waiting for a person, one promoted, two set
	// aside by the agents that claimed them.
	csv := b.claim("features/csv-import.md", "reasoner-1", 2*day, planfs.DefaultTTL)
	b.complete(csv, model.ReviewNeeded, "reasoner-1", 2*day-5*time.Hour)
	b.promote("drafts/tag-autocomplete.md", model.Features, "alice", day)
	perf := b.claim("features/improve-performance.md", "mid-2", day-time.Hour, planfs.DefaultTTL)
	b.park(perf, model.Ambiguous, "mid-2", "no target: which pages are slow, and how fast is fast enough?", day-80*time.Minute)
	mail := b.claim("features/email-reminders.md", "mid-2", day-3*time.Hour, planfs.DefaultTTL)
	b.park(mail, model.Blocked, "mid-2", "needs SMTP credentials: there is no sending domain yet", day-210*time.Minute)
	b.commit(day-4*time.Hour, alice, "Plans: csv-import for review, tag-autocomplete ready, two plans parked")
}

// inFlight is the work under way now, with its worktrees.
func (b *builder) inFlight() {
	// Work in flight: small-2 died two hours ago holding a P1 bug (its lease
	// expired an hour ago); mid-1 took the next bug ten minutes ago.
	b.claim("bugs/crash-on-empty-title.md", "small-2", 2*time.Hour, 3600)
	// reasoner-2 planned share-links first; its plan waits in the inbox.
	b.proposal()
	b.claim("bugs/duplicate-tags-by-case.md", "mid-1", 10*time.Minute, 3600)
	b.commit(5*time.Minute, alice, "Plans: claims in flight")
	// Their worktrees, as seat.Ensure makes them: small-2 died with
	// work not committed, mid-1 has just started.
	notes, err := sampleText("project/notes.go")
	b.fail("worktree for small-2", err)
	b.worktree("small-2", "crash-on-empty-title", map[string]string{"notes.go": notes + "\n// TODO(small-2): reject empty titles\n"})
	b.worktree("mid-1", "duplicate-tags-by-case", nil)
}

// worktree gives agent its worktree on the plan's feature branch and
// leaves files changed there, uncommitted.
func (b *builder) worktree(agent, slug string, files map[string]string) {
	if b.err != nil {
		return
	}
	wt, err := seat.Ensure(b.project, agent, slug)
	if err != nil {
		b.fail("worktree for "+agent, err)
		return
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(wt.Path, name), []byte(text), 0o644); err != nil {
			b.fail("worktree for "+agent, err)
			return
		}
	}
}

// author is who a commit is by, as git's "Name <email>".
type author struct{ name, email string }

var alice = author{"Alice Example", "alice@jotter.invalid"}

func agent(id string) author { return author{id, id + "@agents.jotter.invalid"} }

// at sets the tree's clock to ago before now, so leases and events carry
// the demo's times.
func (b *builder) at(ago time.Duration) {
	if b.tree != nil {
		tm := b.now.Add(-ago)
		b.tree.Now = func() time.Time { return tm }
	}
}

func (b *builder) fail(step string, err error) {
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("%s: %w", step, err)
	}
}

// writeApp writes files of the sample app (never under .plans/) from the
// sample's folder dir; names are the project's.
func (b *builder) writeApp(dir string, names ...string) {
	for _, name := range names {
		if b.err != nil {
			return
		}
		text, err := sampleText(dir + "/" + cmp.Or(storedAs[name], name))
		if err != nil {
			b.fail("write "+name, err)
			return
		}
		p := filepath.Join(b.project, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.fail("write "+name, err)
			return
		}
		b.fail("write "+name, os.WriteFile(p, []byte(text), 0o644))
	}
}

// git runs git in the project with a commit date ago before now and an
// author. Inherited GIT_* variables (a hook's GIT_DIR or GIT_INDEX_FILE)
// and the user's global and system config are kept out: the demo repo must
// not depend on them or touch another repository.
func (b *builder) git(ago time.Duration, who author, args ...string) {
	b.gitIn(b.project, ago, who, args...)
}

// gitIn is git in dir (an agent's worktree).
func (b *builder) gitIn(dir string, ago time.Duration, who author, args ...string) {
	if b.err != nil {
		return
	}
	cmd := gitenv.Command(context.Background(), dir, args...)
	// Its own environment, not gitenv's: no GIT_ variable of the caller.
	cmd.Env = nil
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	date := "@" + strconv.FormatInt(b.now.Add(-ago).Unix(), 10) + " +0000"
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if who.name != "" {
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME="+who.name, "GIT_AUTHOR_EMAIL="+who.email)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%v: %s", err, msg)
		}
		b.fail("git "+args[0], err)
	}
}

// commit records the whole project, .plans/ included (leases are ignored).
func (b *builder) commit(ago time.Duration, who author, msg string) {
	b.git(ago, who, "add", "-A")
	b.git(ago, who, "commit", "-q", "-m", msg)
}

// add writes a sample plan with its mtime and creation event ago before now.
func (b *builder) add(lane model.Lane, slug string, ago time.Duration) {
	if b.err != nil {
		return
	}
	text, err := samplePlan(lane, slug)
	if err != nil {
		b.fail("add "+slug, err)
		return
	}
	b.at(ago)
	_, err = b.tree.AddPlanAt(lane, slug+".md", text, b.now.Add(-ago))
	b.fail("add "+slug, err)
}

func (b *builder) claim(rel, agentID string, ago time.Duration, ttl float64) string {
	if b.err != nil {
		return ""
	}
	b.at(ago)
	dst, err := b.tree.Claim(rel, agentID, ttl)
	b.fail("claim "+rel, err)
	return dst
}

func (b *builder) complete(rel string, to model.Lane, agentID string, ago time.Duration) {
	if b.err != nil {
		return
	}
	b.at(ago)
	_, err := b.tree.Complete(rel, to, planfs.Actor{AgentID: agentID})
	b.fail("complete "+rel, err)
}

func (b *builder) park(rel string, to model.Lane, agentID, reason string, ago time.Duration) {
	if b.err != nil {
		return
	}
	b.at(ago)
	_, err := b.tree.Park(rel, to, planfs.Actor{AgentID: agentID}.Because(reason))
	b.fail("park "+rel, err)
}

func (b *builder) promote(rel string, to model.Lane, who string, ago time.Duration) {
	if b.err != nil {
		return
	}
	b.at(ago)
	_, _, err := b.tree.Promote(rel, to, planfs.Actor{AgentID: who})
	b.fail("promote "+rel, err)
}
