package demo

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/model"
)

// AgentEnv is what the stand-in agent is told, as a driver tells any
// executor: the FLEET_* variables.
type AgentEnv struct {
	Plan, Worktree, AgentID, Slug, Port string
	// Mode is "review" when the agent is asked to review a change at Commit
	// against Base, not to work on its plan; "plan" when it is asked for
	// an implementation plan only, written to Proposal (a plan-first
	// plan's first turn; Feedback is a rejection's note, if any).
	Mode, Commit, Base string
	Proposal, Feedback string
	// ApprovedPlan is the approved proposal a build follows.
	ApprovedPlan string
}

// AgentEnvFromOS reads the FLEET_* variables.
func AgentEnvFromOS() AgentEnv {
	return AgentEnv{Plan: os.Getenv("FLEET_PLAN"), Worktree: os.Getenv("FLEET_WORKTREE"),
		AgentID: os.Getenv("FLEET_AGENT_ID"), Slug: os.Getenv("FLEET_SLUG"), Port: os.Getenv("FLEET_PORT"),
		Mode: os.Getenv("FLEET_MODE"), Commit: os.Getenv("FLEET_COMMIT"), Base: os.Getenv("FLEET_BASE"),
		Proposal: os.Getenv("FLEET_PROPOSAL"), Feedback: os.Getenv("FLEET_FEEDBACK"), ApprovedPlan: os.Getenv("FLEET_APPROVED_PLAN")}
}

// Agent is the demo's stand-in for a coding agent: it reads its plan, prints
// what it does at about one line per pace, writes a short change note in
// the scope it was approved for (noteIn) and commits it on the worktree's
// branch, and returns nil (exit 0), so the
// driver hands the plan to review. Outside an agent worktree (under
// var/worktrees/) it changes nothing: it must never commit to a person's
// checkout.
func Agent(env AgentEnv, out io.Writer, pace time.Duration) error {
	switch env.Mode {
	case "review":
		return review(env, out)
	case "plan":
		return propose(env, out)
	}
	if env.Plan == "" || env.Worktree == "" {
		return errors.New("demo-agent runs under `fleetwatch work-once --run`, which sets FLEET_PLAN and FLEET_WORKTREE")
	}
	title, goal, err := planSummary(env.Plan)
	if err != nil {
		return err
	}
	// Agents work at different speeds; the same plan always at the same one.
	p := &pacer{h: fnv.New32a(), pace: pace, out: out}
	p.h.Write([]byte(env.Slug + env.AgentID))
	p.lookAround(env, title, goal)
	if !strings.Contains(filepath.ToSlash(env.Worktree), "/var/worktrees/") {
		p.step("not in an agent worktree: leaving the project untouched")
		p.step("done")
		return nil
	}
	return p.commitNote(env, title)
}

// pacer says what the stand-in does at about one line per pace, jittered
// by its hash.
type pacer struct {
	h    hash.Hash32
	pace time.Duration
	out  io.Writer
}

func (p *pacer) step(format string, args ...any) {
	jitter := time.Duration(p.h.Sum32()%500) * p.pace / 1000
	p.h.Write([]byte{1})
	time.Sleep(p.pace/2 + jitter)
	fmt.Fprintf(p.out, format+"\n", args...)
}

// lookAround is the stand-in reading its plan and its worktree.
func (p *pacer) lookAround(env AgentEnv, title, goal string) {
	p.step("reading %s: %s", filepath.Base(env.Plan), title)
	if env.ApprovedPlan != "" {
		p.step("following the approved plan %s", filepath.Base(env.ApprovedPlan))
	}
	if goal != "" {
		p.step("goal: %s", goal)
	}
	files, _ := git(env.Worktree, "ls-files")
	p.step("looking around: %d tracked files in %s", len(strings.Fields(files)), env.Worktree)
	if env.Port != "" {
		p.step("dev server would listen on 127.0.0.1:%s (this worker's own port)", env.Port)
	}
}

// commitNote writes the stand-in's change note where its scope allows and
// commits it on the worktree's branch.
func (p *pacer) commitNote(env AgentEnv, title string) error {
	note, err := noteIn(env)
	if err != nil {
		return err
	}
	p.step("writing %s", note)
	text := fmt.Sprintf("%s: worked by %s, the demo's stand-in agent, on %s.", title, env.AgentID, time.Now().UTC().Format(time.RFC3339))
	lines, err := writeNote(filepath.Join(env.Worktree, filepath.FromSlash(note)), text)
	if err != nil {
		return err
	}
	p.step("checking the change: 1 file, %d lines", lines)
	if _, err := git(env.Worktree, "add", note); err != nil {
		return err
	}
	who := env.AgentID
	if _, err := git(env.Worktree, "-c", "user.name="+who, "-c", "user.email="+who+"@agents.jotter.invalid",
		"commit", "-q", "-m", title+"\n\nStand-in work for "+env.Slug+"."); err != nil {
		return err
	}
	id, _ := git(env.Worktree, "rev-parse", "--short", "HEAD")
	branch, _ := git(env.Worktree, "rev-parse", "--abbrev-ref", "HEAD")
	p.step("committed %s on %s", id, branch)
	p.step("done: ready for review")
	return nil
}

// noteIn is where the stand-in writes its change note: changes/<slug>.md,
// unless the scope it was approved for (the approved plan's Files in
// scope, else the plan's own) leaves that out; then the first file that
// scope names which takes a note (a text or page file, a folder's new
// note, an existing Go file), so the scope scanner has nothing to flag.
func noteIn(env AgentEnv) (string, error) {
	note := "changes/" + env.Slug + ".md"
	text, err := os.ReadFile(cmp.Or(env.ApprovedPlan, env.Plan))
	if err != nil {
		return "", err
	}
	sc, found, _ := model.ParseScope(string(text))
	if !found || sc.Allows(note) {
		return note, nil
	}
	if p := notePlace(sc.Patterns, env); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("no file in the approved scope (%s) takes the stand-in's note; it changes nothing outside it", strings.Join(sc.Patterns, ", "))
}

// notePlace is the first file the scope's patterns name that takes a
// note (a text or page file), else a new note in the first whole folder
// they name, else the first existing Go file; "" when none.
func notePlace(patterns []string, env AgentEnv) string {
	var folder, goFile string
	for _, p := range patterns {
		dir, whole := strings.CutSuffix(strings.TrimSuffix(p, "**"), "/")
		switch {
		case whole && !strings.ContainsAny(dir, "*?["):
			if folder == "" {
				folder = dir + "/" + env.Slug + ".md"
			}
		case strings.ContainsAny(p, "*?["):
		case path.Ext(p) == ".go":
			// Only one that exists: a new Go file needs a package clause.
			if goFile == "" && exists(filepath.Join(env.Worktree, filepath.FromSlash(p))) {
				goFile = p
			}
		case noteExt[path.Ext(p)] != "":
			return p
		}
	}
	return cmp.Or(folder, goFile)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// noteExt is how a note is written as a comment in each kind of file
// the stand-in may write one in ("%s" is the note).
var noteExt = map[string]string{".md": "%s\n", ".txt": "%s\n", ".html": "<!-- %s -->\n", ".go": "// %s\n"}

// writeNote adds text to the file at p as a comment in its kind, making
// it and its folder when missing, and returns how many lines it added.
func writeNote(p, text string) (int, error) {
	line := fmt.Sprintf(noteExt[path.Ext(p)], text)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return 0, err
	}
	return strings.Count(line, "\n"), f.Close()
}

// propose is the stand-in's plan-only turn: a short implementation plan
// with a Files in scope section (the change note it would write), to
// FLEET_PROPOSAL, and nothing else; the driver hands the plan to the
// coordinator's inbox.
func propose(env AgentEnv, out io.Writer) error {
	if env.Plan == "" || env.Proposal == "" {
		return errors.New("demo-agent plans under `fleetwatch work-once --run` on a plan-first plan, which sets FLEET_PLAN and FLEET_PROPOSAL")
	}
	title, goal, err := planSummary(env.Plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "planning %s: %s\n", filepath.Base(env.Plan), title)
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n%s's implementation plan (the demo's stand-in agent).\n\n", title, env.AgentID)
	if goal != "" {
		fmt.Fprintf(&b, "## Goal\n%s\n\n", goal)
	}
	if env.Feedback != "" {
		if note, err := os.ReadFile(env.Feedback); err == nil {
			fmt.Fprintf(&b, "## What the coordinator asked for\n%s\n\n", strings.TrimSpace(string(note)))
			fmt.Fprintf(out, "taking the coordinator's note into account\n")
		}
	}
	fmt.Fprintf(&b, "## Steps\n1. Write changes/%s.md: what was done, and by whom.\n2. Commit it on the plan's branch.\n\n", env.Slug)
	fmt.Fprintf(&b, "## Files in scope\n- changes/%s.md\n", env.Slug)
	if err := os.MkdirAll(filepath.Dir(env.Proposal), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(env.Proposal, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote the proposal (%d lines); waiting for approval\n", strings.Count(b.String(), "\n"))
	return nil
}

// review is the stand-in's peer review: it reads what the change touches
// and accepts it, writing nothing (a reviewer that writes is refused).
func review(env AgentEnv, out io.Writer) error {
	if env.Worktree == "" || env.Commit == "" || env.Base == "" {
		return errors.New("demo-agent reviews under `fleetwatch review --peer`, which sets FLEET_WORKTREE, FLEET_COMMIT and FLEET_BASE")
	}
	stat, err := git(env.Worktree, "diff", "--stat", env.Base, env.Commit)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(stat), "\n")
	fmt.Fprintf(out, "ACCEPT\n\nReviewed %s by the demo's stand-in agent (%s).\n\n", short(env.Commit), env.AgentID)
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			fmt.Fprintf(out, "- %s\n", l)
		}
	}
	return nil
}

func short(id string) string { return id[:min(len(id), 7)] }

// planSummary is a plan's title (its first heading) and the first line of
// its Goal section.
func planSummary(path string) (title, goal string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	inGoal := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case title == "" && strings.HasPrefix(line, "# "):
			title = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "# "), "Plan:"))
		case strings.HasPrefix(line, "## "):
			inGoal = strings.EqualFold(strings.TrimSpace(line[3:]), "goal")
		case inGoal && line != "" && goal == "":
			goal = line
		}
	}
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(path), ".md")
	}
	return title, goal, sc.Err()
}

// git runs git as any agent would: in the environment its driver gave
// it, which points a contained agent's git at its own store.
func git(dir string, args ...string) (string, error) {
	return runGit(os.Environ(), dir, args...)
}

// builderGit is git for the demo's builder: in dir, whatever git
// variables its caller has set.
func builderGit(dir string, args ...string) (string, error) {
	return runGit(gitenv.GitEnv(), dir, args...)
}

func runGit(env []string, dir string, args ...string) (string, error) {
	cmd := gitenv.Command(context.Background(), dir, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %v", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}
