package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// fail prints one `fleetwatch: ` line and returns code. The words often
// quote a file name, agent id or endpoint: their control characters are
// replaced, so nothing from a file reaches the terminal raw.
func fail(stderr io.Writer, code int, format string, args ...any) int {
	say(stderr, format, args...)
	return code
}

// say prints one `fleetwatch: ` line made safe for a terminal, as fail does.
func say(stderr io.Writer, format string, args ...any) {
	msg := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
	fmt.Fprintln(stderr, "fleetwatch: "+termtext.Line(msg))
}

// defaultAgentID is anchor's: work-once-$USER, else $USERNAME, else agent;
// with neither variable set, the login name from the user database.
func defaultAgentID() string {
	if u := os.Getenv("USER"); u != "" {
		return "work-once-" + u
	}
	if u := os.Getenv("USERNAME"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "work-once-" + u.Username
	}
	return "agent"
}

// operatorAgentID is who an operator verb acts as: $FLEET_AGENT_ID when an
// agent runs the verb under its driver, else operator-$USER. Not a worker's
// id: an operator's verb must never pass for the worker's own.
func operatorAgentID() string {
	if id := os.Getenv("FLEET_AGENT_ID"); id != "" {
		return id
	}
	return defaultOperator()
}

// findRoot returns dir when given, else $FLEET_ROOT (set by the driver for
// its agent), else the nearest folder from the current one upwards that has
// a .plans/, so a worker in a subfolder still finds it. An agent's worktree
// under var/worktrees/ holds a committed copy of .plans/: the verbs act on
// the main project's instead.
func findRoot(dir string) string {
	if dir != "" {
		return dir
	}
	if env := os.Getenv("FLEET_ROOT"); env != "" {
		return env
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := cwd; ; d = filepath.Dir(d) {
		if hasPlans(d) {
			if top, ok := worktreeProject(d); ok {
				return top
			}
			return d
		}
		if filepath.Dir(d) == d {
			return cwd
		}
	}
}

func hasPlans(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, planfs.Dir))
	return err == nil && fi.IsDir()
}

// worktreeProject is the project whose var/worktrees/ holds dir, when it has
// a .plans/ of its own.
func worktreeProject(dir string) (string, bool) {
	worktrees := filepath.Dir(dir)
	if filepath.Base(worktrees) != "worktrees" || filepath.Base(filepath.Dir(worktrees)) != "var" {
		return "", false
	}
	top := filepath.Dir(filepath.Dir(worktrees))
	return top, hasPlans(top)
}

// common holds the flags every verb takes.
type common struct {
	root  string
	agent string
	token string
	force bool
}

func (c *common) registerRoot(fs *pflag.FlagSet) { rootFlag(fs, &c.root, rootHelp) }

// register adds --root, --agent-id (defaulting to agentID) and --token, and
// --force when the verb has something to force.
func (c *common) register(fs *pflag.FlagSet, agentID string, withForce bool) {
	c.registerRoot(fs)
	agentFlag(fs, &c.agent, agentID, "who is acting")
	tokenFlag(fs, &c.token)
	if withForce {
		forceFlag(fs, &c.force, "act on another agent's lease, or promote an incomplete draft")
	}
}

// actor is who the verb acts as.
func (c *common) actor() planfs.Actor {
	return planfs.Actor{AgentID: c.agent, Token: c.token, Force: c.force}
}

func (c *common) open() (*planfs.Tree, error) { return planfs.Open(findRoot(c.root)) }

// resolvePlan turns a verb's argument into a rel: a rel like
// `in-progress/foo.md`, a file path, or a bare slug looked up in lanes.
func resolvePlan(t *planfs.Tree, arg string, lanes ...model.Lane) (string, error) {
	if arg == "" {
		return "", errors.New("no plan given")
	}
	if strings.ContainsAny(arg, "/\\") || strings.HasSuffix(arg, ".md") {
		if _, _, err := planfs.SplitRel(arg); err == nil && !filepath.IsAbs(arg) {
			if _, err := os.Lstat(t.Abs(arg)); err == nil {
				return arg, nil
			}
		}
		cwd, _ := os.Getwd()
		return t.ResolvePath(arg, cwd)
	}
	hits, err := t.FindSlug(arg, lanes...)
	if err != nil {
		return "", err
	}
	switch len(hits) {
	case 0:
		names := make([]string, len(lanes))
		for i, l := range lanes {
			names[i] = string(l) + "/"
		}
		return "", notFound(fmt.Sprintf("no plan %q in %s", arg, strings.Join(names, ", ")))
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("slug %q is ambiguous: %s (name the path)", arg, strings.Join(hits, ", "))
}

// notFound is resolvePlan's error for a slug in none of the lanes searched;
// work-once reports it as "nothing to do" (exit 1), as anchor does.
type notFound string

func (e notFound) Error() string { return string(e) }
