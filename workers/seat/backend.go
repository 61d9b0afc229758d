package seat

// A backend per worker (fleetwatch.yaml `worktree:`). The protocol, per
// agent id, under var/fleet/backends/<safe id>.lock:
//
//  1. The repository's exclude file (the common dir's) gets the line
//     /.env.fleetwatch, once, under the project's lock and before ours, so
//     the file is never the agent's change.
//  2. The marker var/fleet/backends/<safe id>.json says what the worktree's
//     backend was set up with: agent, plan slug, worktree, ports and a hash
//     of the section. Values only, never commands or variables: an agent
//     running as the operator's user can rewrite the file, and what it
//     holds must not become a program the lander runs. The same values
//     again mean only step 4.
//  3. Different values (another plan, another agent, a changed section or
//     block) first tear the old backend down with its recorded commands; a
//     failure there keeps the marker and stops.
//  4. .env.fleetwatch is written in the worktree, atomically, never through
//     a symlink.
//  5. Setup runs; only when every command succeeds is the marker written. A
//     setup that fails is torn down again at once (best effort), so the
//     next try does not trip over half of it.
//
// Teardown (worktree remove, or step 3) runs the teardown argvs of the
// configuration (fleetwatch.yaml's section, as the caller read it), filled
// in with the marker's values, and deletes the marker only when they all
// succeed. The values are checked first (the agent id the file is named
// for, a plan slug, ports), and the worktree and the variables are never
// taken from the marker: the worktree is the caller's, the variables are
// the section's templates filled in again. When the section changed since
// setup, the current one's teardown runs and the log says so: the old
// commands are known only to a file an agent could have written.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Backend is a worktree's own backend for one job, as fleetwatch.yaml's
// `worktree:` section makes it: the agent's port block, the variables
// written to <worktree>/.env.fleetwatch (git-ignored through the
// repository's exclude file), and the setup that ran for it.
type Backend struct {
	Ports []int
	Env   []string // KEY=VALUE, in the file's order
	File  string   // the .env.fleetwatch written, "" when there is no env
	// SetUp says setup ran now (the first job in this worktree, or the
	// first after a teardown).
	SetUp bool
}

// backendDir holds the backends' markers, locks and logs, relative to the
// project's git top level.
const backendDir = "var/fleet/backends"

// backendMarker is what a worktree's backend was set up with.
type backendMarker struct {
	Agent    string     `json:"agent"`
	Slug     string     `json:"slug"`
	Worktree string     `json:"worktree"`
	Ports    []int      `json:"ports"`
	Hash     string     `json:"hash"` // of the section
	At       look.Stamp `json:"at"`
}

func (m backendMarker) same(o backendMarker) bool {
	return m.Agent == o.Agent && m.Slug == o.Slug && m.Worktree == o.Worktree &&
		slices.Equal(m.Ports, o.Ports) && m.Hash == o.Hash
}

// PrepareBackend gives agentID's worktree its backend for slug: its ports,
// .env.fleetwatch, and, when it was never set up or was set up for
// another plan (or another agent), teardown of the old one and setup of the
// new. A failing setup is an error that says which command and why; the
// caller gives the plan back.
func PrepareBackend(project string, s config.Worktree, agentID, slug, worktree string, ports []int) (Backend, error) {
	b := Backend{Ports: ports}
	home, _, err := look.PortHome(project)
	if err != nil {
		return b, err
	}
	ph := backendPlaceholders(home, agentID, slug, worktree, ports)
	if b.Env, err = backendEnv(s, ph); err != nil {
		return b, refusedByName(s, ph, err)
	}
	// The exclude file first: it takes the project's lock, which worktree
	// remove holds while it takes ours.
	if err := ignoreEnvFile(home, worktree, b.Env); err != nil {
		return b, err
	}
	unlock, err := lockBackend(home, agentID)
	if err != nil {
		return b, err
	}
	defer unlock()
	cur := backendMarker{Agent: agentID, Slug: slug, Worktree: worktree, Ports: ports, Hash: sectionHash(s)}
	old, had, err := loadMarker(home, agentID)
	if err != nil {
		return b, err
	}
	log := openBackendLog(home, agentID)
	defer log.Close()
	if had && !old.same(cur) {
		// Before the new .env.fleetwatch: the old teardown may read it.
		if err := teardownMarker(home, s, old, worktree, log); err != nil {
			return b, err
		}
	}
	if b.File, err = writeEnvFile(home, worktree, b.Env); err != nil || (had && old.same(cur)) {
		return b, err
	}
	fmt.Fprintf(log, "%s setup for plan %s in %s\n", time.Now().UTC().Format(time.RFC3339), slug, worktree)
	if err := runSetup(s, ph, worktree, append(ph.Env(), b.Env...), log); err != nil {
		return b, fmt.Errorf("%s (log: %s)", err, backendRel(agentID, ".log"))
	}
	cur.At = look.Stamp{Time: time.Now()}
	b.SetUp = true
	return b, saveMarker(home, cur)
}

// runSetup runs the setup commands in worktree; when one fails, the
// teardown undoes what they made and the error names the command.
func runSetup(s config.Worktree, ph proc.Placeholders, worktree string, env []string, log io.Writer) error {
	for i, argv := range s.Setup {
		if err := runBackendCmd(ph.Expand(argv), worktree, env, s.CommandTimeout(), log); err != nil {
			fmt.Fprintf(log, "setup failed; tearing down what it made\n")
			_ = runBackendCmds(expandAll(ph, s.Teardown), worktree, env, s.CommandTimeout(), log)
			return fmt.Errorf("backend setup command %d of %d %s", i+1, len(s.Setup), err)
		}
	}
	return nil
}

// teardownBackend runs the teardown of whatever backend agentID's worktree
// was last set up with; nothing when it has none. Its failure keeps the
// worktree and says why.
func teardownBackend(project string, s config.Worktree, agentID, worktree string) error {
	home, _, err := look.PortHome(project)
	if err != nil {
		return err
	}
	unlock, err := lockBackend(home, agentID)
	if err != nil {
		return err
	}
	defer unlock()
	old, had, err := loadMarker(home, agentID)
	if err != nil || !had {
		return err
	}
	log := openBackendLog(home, agentID)
	defer log.Close()
	return teardownMarker(home, s, old, worktree, log)
}

// teardownBefore tears agentID's backend down before Remove takes its
// worktree away; a failure keeps the worktree. The commands come from
// fleetwatch.yaml, so one that does not parse stops a teardown that has
// something to tear down.
func teardownBefore(top, agentID, path string) error {
	s, err := config.Load(top)
	if err != nil {
		s.Worktree = config.Worktree{}
		if home, _, herr := look.PortHome(top); herr == nil {
			if _, had, _ := loadMarker(home, agentID); !had {
				err = nil
			}
		}
	}
	if err == nil {
		err = teardownBackend(top, s.Worktree, agentID, path)
	}
	if err != nil {
		return fmt.Errorf("%v; the worktree %s is kept", err, path)
	}
	return nil
}

// OwnBackend prepares a backend for a worktree that is no worker's (a
// check's or a review's) under the pseudo agent id: its port block from
// DefaultPorts, then PrepareBackend. done tears it down and gives the
// ports back. Without a `worktree:` section it is a no-op.
func OwnBackend(project string, s config.Worktree, id, slug, worktree string) (b Backend, done func() error, err error) {
	if !s.Set() {
		return Backend{}, func() error { return nil }, nil
	}
	ports, err := look.AssignPorts(project, id, look.DefaultPorts, max(s.Ports, 1))
	if err != nil {
		return b, nil, err
	}
	release := func() error { return look.ReleasePort(project, id, ports[0]) }
	if b, err = PrepareBackend(project, s, id, slug, worktree, ports); err != nil {
		release()
		return b, nil, err
	}
	return b, func() error {
		err := teardownBackend(project, s, id, worktree)
		if err == nil {
			err = release()
		}
		return err
	}, nil
}

// TeardownBackendsIn tears down the backends set up in worktree and gives
// their ports back: what a check or review runner that was killed left
// behind, found by its worktree before the cleaner removes it.
func TeardownBackendsIn(project, worktree string) error {
	home, _, err := look.PortHome(project)
	if err != nil {
		return err
	}
	names, _ := filepath.Glob(filepath.Join(home, filepath.FromSlash(backendDir), "*.json"))
	s, cfgErr := config.Load(project)
	var first error
	for _, name := range names {
		data, err := os.ReadFile(name)
		var m backendMarker
		if err != nil || json.Unmarshal(data, &m) != nil || m.Worktree != worktree || m.Agent == "" {
			continue
		}
		err = cfgErr
		if err == nil {
			err = teardownBackend(project, s.Worktree, m.Agent, worktree)
		}
		if err == nil && len(m.Ports) > 0 {
			err = look.ReleasePort(project, m.Agent, m.Ports[0])
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// teardownMarker runs the section's teardown for the backend m records,
// in worktree (the project when that is gone), and forgets the marker when
// it succeeds. Only m's checked values are used (see loadMarker): the
// commands and variables come from s, the worktree from the caller.
func teardownMarker(home string, s config.Worktree, m backendMarker, worktree string, log io.Writer) error {
	if !s.Set() {
		return fmt.Errorf("backend teardown (agent %s, plan %s): fleetwatch.yaml has no worktree: section to tear it down with (tear it down by hand, then delete %s)",
			m.Agent, m.Slug, backendRel(m.Agent, ".json"))
	}
	dir := worktree
	if !tree.IsDir(dir) {
		dir = home
	}
	ph := backendPlaceholders(home, m.Agent, m.Slug, worktree, m.Ports)
	env, err := backendEnv(s, ph)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s teardown of the backend for plan %s in %s\n", time.Now().UTC().Format(time.RFC3339), m.Slug, worktree)
	if m.Hash != sectionHash(s) {
		fmt.Fprintf(log, "the worktree: section changed since this backend was set up; tearing down with the current one\n")
	}
	if err := runBackendCmds(expandAll(ph, s.Teardown), dir, append(ph.Env(), env...), s.CommandTimeout(), log); err != nil {
		return fmt.Errorf("backend teardown (agent %s, plan %s) %s (log: %s; retry once its cause is fixed, or delete %s to forget that backend)",
			m.Agent, m.Slug, err, backendRel(m.Agent, ".log"), backendRel(m.Agent, ".json"))
	}
	err = os.Remove(filepath.Join(home, filepath.FromSlash(backendRel(m.Agent, ".json"))))
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return err
}

// expandAll fills each argv of cmds with ph.
func expandAll(ph proc.Placeholders, cmds [][]string) [][]string {
	out := make([][]string, len(cmds))
	for i, argv := range cmds {
		out[i] = ph.Expand(argv)
	}
	return out
}

// backendPlaceholders are the values env, setup and teardown are filled
// with; {project} is the project folder's name.
func backendPlaceholders(home, agentID, slug, worktree string, ports []int) proc.Placeholders {
	ph := proc.Placeholders{AgentID: agentID, Slug: slug, Worktree: worktree, Ports: ports, Project: filepath.Base(home), Root: home}
	if len(ports) > 0 {
		ph.Port = ports[0]
	}
	return ph
}

// sectionHash names the section's content (not its lines or timeout): a
// change to what a backend is made of means a new one.
func sectionHash(s config.Worktree) string {
	env := make([]string, len(s.Env))
	for i, e := range s.Env {
		env[i] = e.Name + "=" + e.Template
	}
	data, _ := json.Marshal(struct {
		Ports           int
		Env             []string
		Setup, Teardown [][]string
	}{s.Ports, env, s.Setup, s.Teardown})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// backendEnv fills the section's env templates, NAME=value in file order.
func backendEnv(s config.Worktree, ph proc.Placeholders) ([]string, error) {
	var out []string
	for _, e := range s.Env {
		v := ph.Expand([]string{e.Template})[0]
		if _, err := dotenvValue(v); err != nil {
			return nil, fmt.Errorf("fleetwatch.yaml:%d: worktree: env: %s: %v", e.Line, e.Name, err)
		}
		out = append(out, e.Name+"="+v)
	}
	return out, nil
}

// ErrPlanRefused marks a claim that failed for a reason of the plan's own
// (its name), not the worker's: any worker would fail the same way on that
// plan, and on no other, so the caller skips it and takes the next plan.
var ErrPlanRefused = errors.New("the plan's name is refused")

// planRefused is an error of the plan's own; errors.Is matches
// ErrPlanRefused.
type planRefused struct{ err error }

func (e planRefused) Error() string      { return e.err.Error() }
func (e planRefused) Unwrap() error      { return e.err }
func (planRefused) Is(target error) bool { return target == ErrPlanRefused }

// neutralSlug stands in for a plan name that no template refuses: when the
// section takes it but not the plan's own slug, the slug is at fault.
const neutralSlug = "plan"

// refusedByName marks err (the section refusing ph) as the plan's own when
// the same section takes every value but the slug.
func refusedByName(s config.Worktree, ph proc.Placeholders, err error) error {
	slug := ph.Slug
	ph.Slug = neutralSlug
	if _, nerr := backendEnv(s, ph); nerr == nil {
		return planRefused{fmt.Errorf("plan %s: %w", slug, err)}
	}
	return err
}

// BackendRefusal returns a judge of plan slugs for agentID's worktree
// backend: why the section's env refuses the slug, "" when it takes it or
// when it refuses every plan alike (the worker's problem, which its claim
// reports). nil when there is no section. The worktree is the agent's
// registered one, else its default path; the ports are stand-ins (digits
// never make a value unwritable).
func BackendRefusal(project string, s config.Worktree, agentID string) func(slug string) string {
	if !s.Set() || len(s.Env) == 0 {
		return nil
	}
	home, _, err := look.PortHome(project)
	if err != nil {
		return nil
	}
	wt := filepath.Join(home, "var", "worktrees", tree.SafeID(agentID))
	if w, ok, err := look.Lookup(project, agentID); err == nil && ok {
		wt = w.Path
	}
	ports := make([]int, max(s.Ports, 1))
	for i := range ports {
		ports[i] = look.DefaultPorts.Lo + i
	}
	neutral := backendPlaceholders(home, agentID, neutralSlug, wt, ports)
	if _, err := backendEnv(s, neutral); err != nil {
		return func(string) string { return "" }
	}
	return func(slug string) string {
		ph := neutral
		ph.Slug = slug
		if _, err := backendEnv(s, ph); err != nil {
			return "fleetwatch.yaml's worktree: env refuses its name: " + err.Error()
		}
		return ""
	}
}

// bareValue needs no quotes in sh or any dotenv reader.
var bareValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:@%+,=-]*$`) })

// dotenvValue is v as both sh and dotenv readers (python-dotenv, godotenv,
// docker compose) read back literally: bare, in single quotes, or in double
// quotes when it holds a single quote but nothing those readers expand.
func dotenvValue(v string) (string, error) {
	switch {
	case strings.ContainsAny(v, "\n\r\x00"):
		return "", errors.New("its value holds a line break")
	case bareValue().MatchString(v):
		return v, nil
	case !strings.Contains(v, "'"):
		return "'" + v + "'", nil
	case !strings.ContainsAny(v, "\"\\$`"):
		return `"` + v + `"`, nil
	}
	return "", errors.New("its value holds both a single quote and one of \" \\ $ `, which no quoting reads back the same in sh and dotenv")
}

// ignoreEnvFile makes git ignore worktree/.env.fleetwatch when there are
// variables to write, refusing a tracked one: git would count it as the
// agent's change.
func ignoreEnvFile(home, worktree string, pairs []string) error {
	if len(pairs) == 0 {
		return nil
	}
	if tracked, _ := tree.Git(worktree, "ls-files", "--", tree.EnvFile); tracked != "" {
		return fmt.Errorf("%s: %s is tracked in the repository, so fleetwatch's copy would count as the agent's change (git rm --cached %s on the integration branch)", worktree, tree.EnvFile, tree.EnvFile)
	}
	return excludeEnvFile(home)
}

// writeEnvFile writes pairs to worktree/.env.fleetwatch (ignoreEnvFile
// first); with no pairs it removes a file left from an earlier section.
func writeEnvFile(home, worktree string, pairs []string) (string, error) {
	path := filepath.Join(worktree, tree.EnvFile)
	if len(pairs) == 0 {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			os.Remove(path)
		}
		return "", nil
	}
	var b strings.Builder
	b.WriteString("# Written by fleetwatch from fleetwatch.yaml's worktree: env; git ignores it.\n")
	for _, kv := range pairs {
		k, v, _ := strings.Cut(kv, "=")
		q, _ := dotenvValue(v)
		b.WriteString(k + "=" + q + "\n")
	}
	root := home
	if _, err := tree.RelIn(home, path); err != nil {
		root = worktree
	}
	if err := tree.WriteAtomicIn(root, path, []byte(b.String())); err != nil {
		return "", fmt.Errorf("%s: %v", path, tree.ErrText(err))
	}
	if _, err := tree.Git(worktree, "check-ignore", "-q", tree.EnvFile); err != nil {
		return "", fmt.Errorf("%s: git does not ignore %s though the exclude file names it (a .gitignore un-ignores it?); it would count as the agent's change", worktree, tree.EnvFile)
	}
	return path, nil
}

// excludeLine is the exclude file's line for the env file: the worktree's
// top level only.
const excludeLine = "/" + tree.EnvFile

// excludeEnvFile adds excludeLine once to the repository's exclude file,
// the common dir's (git reads no per-worktree one), under the project's
// lock so two workers starting together add it once.
func excludeEnvFile(home string) error {
	p, err := tree.Git(home, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(home, p)
	}
	unlock, err := tree.LockProject(home)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %v", p, tree.ErrText(err))
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == excludeLine {
			return nil
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, "# fleetwatch: each worktree's backend variables\n"+excludeLine+"\n"...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := tree.WriteAtomicIn(filepath.Dir(p), p, data); err != nil {
		return fmt.Errorf("%s: %v", p, tree.ErrText(err))
	}
	return nil
}

// runBackendCmds runs each argv in turn, stopping at the first failure.
func runBackendCmds(cmds [][]string, dir string, env []string, timeout time.Duration, log io.Writer) error {
	for i, argv := range cmds {
		if err := runBackendCmd(argv, dir, env, timeout, log); err != nil {
			return fmt.Errorf("command %d of %d %v", i+1, len(cmds), err)
		}
	}
	return nil
}

// runBackendCmd runs argv with no shell in dir, env added to ours, in its
// own process group, killed whole when timeout passes. Its output goes to
// log; an error is `argv` and its exit status and last output line. What it
// leaves running on success (a database server) is left alone: that is the
// backend.
func runBackendCmd(argv []string, dir string, env []string, timeout time.Duration, log io.Writer) error {
	shown := "`" + strings.Join(proc.QuoteArgs(argv), " ") + "`"
	fmt.Fprintf(log, "$ %s\n", strings.Join(proc.QuoteArgs(argv), " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = gitenv.Env(append(env, "PWD="+dir)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sandbox.SetPdeathsig(cmd.SysProcAttr, syscall.SIGKILL)
	// A pipe of our own: a daemon the command starts may hold its output
	// open for ever, and Wait must return when the command exits.
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	last := &lastLine{w: log}
	cmd.Stdout, cmd.Stderr = pw, pw
	err = cmd.Start()
	pw.Close()
	copied := make(chan struct{})
	go func() { io.Copy(last, pr); close(copied) }()
	if err != nil {
		pr.Close()
		<-copied
		return fmt.Errorf("%s did not start: %v", shown, tree.ErrText(err))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case err = <-done:
	case <-timer.C:
		timedOut = true
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		err = <-done
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
	}
	pr.Close()
	<-copied
	switch {
	case timedOut:
		return fmt.Errorf("%s did not finish within %v; killed", shown, timeout)
	case err != nil:
		return fmt.Errorf("%s failed (exit %d)%s", shown, cmd.ProcessState.ExitCode(), last.suffix())
	}
	return nil
}

// lastLine passes output on and keeps its last non-empty line.
type lastLine struct {
	w    io.Writer
	buf  []byte // the line being written
	last string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.w.Write(p)
	for _, c := range p {
		if c == '\n' {
			l.keep()
			continue
		}
		if len(l.buf) < 300 {
			l.buf = append(l.buf, c)
		}
	}
	return len(p), nil
}

func (l *lastLine) keep() {
	if s := strings.TrimSpace(string(l.buf)); s != "" {
		l.last = s
	}
	l.buf = l.buf[:0]
}

func (l *lastLine) suffix() string {
	l.keep()
	if l.last == "" {
		return ""
	}
	return ": " + strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, l.last)
}

func backendRel(agentID, ext string) string { return backendDir + "/" + tree.SafeID(agentID) + ext }

// lockBackend serialises agentID's backend changes across processes.
func lockBackend(home, agentID string) (func(), error) {
	return tree.FlockIn(home, filepath.Join(home, filepath.FromSlash(backendRel(agentID, ".lock"))))
}

// maxBackendLog is when a backend's log starts again.
const maxBackendLog = 1 << 20

// openBackendLog opens agentID's backend log for appending (afresh once it
// is large); a log that cannot be opened loses the output, never the setup.
func openBackendLog(home, agentID string) io.WriteCloser {
	p := filepath.Join(home, filepath.FromSlash(backendRel(agentID, ".log")))
	flag := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if fi, err := os.Lstat(p); err == nil && fi.Size() > maxBackendLog {
		flag |= os.O_TRUNC
	}
	f, err := tree.OpenIn(home, p, flag)
	if err != nil {
		return nopCloser{io.Discard}
	}
	return f
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func loadMarker(home, agentID string) (backendMarker, bool, error) {
	var m backendMarker
	p := filepath.Join(home, filepath.FromSlash(backendRel(agentID, ".json")))
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("%s: %v", p, tree.ErrText(err))
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, false, fmt.Errorf("%s: %v (tear that backend down by hand, then delete the file)", p, err)
	}
	if why := m.implausible(agentID); why != "" {
		return m, false, fmt.Errorf("%s: %s: not what fleetwatch wrote (tear that backend down by hand, then delete the file)", p, why)
	}
	return m, true, nil
}

// implausible says why m cannot be a marker fleetwatch wrote for agentID,
// "" when it can: its values fill the operator's argvs, so each must be
// what a setup could have recorded.
func (m backendMarker) implausible(agentID string) string {
	switch {
	case m.Agent != agentID:
		return fmt.Sprintf("agent %q, want %q", m.Agent, agentID)
	case m.Slug != "" && model.CheckSlug(m.Slug) != nil:
		return fmt.Sprintf("slug %q is no plan's", m.Slug)
	case len(m.Ports) > config.MaxBackendPorts:
		return fmt.Sprintf("%d ports", len(m.Ports))
	}
	for _, p := range m.Ports {
		if p < 1 || p > 65535 {
			return fmt.Sprintf("port %d", p)
		}
	}
	return ""
}

func saveMarker(home string, m backendMarker) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return tree.WriteAtomicIn(home, filepath.Join(home, filepath.FromSlash(backendRel(m.Agent, ".json"))), append(data, '\n'))
}
