package proc

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Placeholders are the values an executor command line may use, as {plan}
// {worktree} {agent_id} {model} {base_url} {port} {slug}, and that reach
// the executor as FLEET_PLAN, FLEET_WORKTREE, ... in its environment.
// Root and LeaseToken reach it only in the environment, as FLEET_ROOT and
// FLEET_LEASE_TOKEN: the verbs an agent runs itself (`fleetwatch complete`)
// act on the main project's tree and prove they hold the lease with them.
type Placeholders struct {
	Plan, Worktree, AgentID, Model, BaseURL, Slug string
	Port                                          int
	Root, LeaseToken                              string
	// Mode is build (the default), plan or review; a review also names
	// the frozen commit and its merge base.
	Mode, Commit, Base string
	// Proposal, ApprovedPlan and Feedback are the coordinator's files for a
	// plan-first plan (absolute): where a plan turn writes its proposal,
	// the approved text a build follows, a rejection's note.
	Proposal, ApprovedPlan, Feedback string
	// Ports is the agent's whole port block (Ports[0] is Port), as {port_1}
	// ... and FLEET_PORT_1 ...; Project is the project's folder name
	// ({project}).
	Ports   []int
	Project string
	// Session is the agent session a resumed build continues.
	Session string
	// TalkPort is a loopback port of a conversation's own ({talk_port}):
	// a tool that talks to itself over HTTP (opencode's ACP server) listens
	// there, a port its sandbox lets it connect to.
	TalkPort int
}

func (p Placeholders) pairs() [][2]string {
	port := ""
	if p.Port > 0 {
		port = strconv.Itoa(p.Port)
	}
	out := [][2]string{
		{"plan", p.Plan}, {"worktree", p.Worktree}, {"agent_id", p.AgentID}, {"model", p.Model},
		{"base_url", p.BaseURL}, {"port", port}, {"slug", p.Slug},
		{"mode", cmp.Or(p.Mode, ModeBuild)}, {"commit", p.Commit}, {"base", p.Base},
		{"proposal", p.Proposal}, {"approved_plan", p.ApprovedPlan}, {"feedback", p.Feedback},
		{"project", p.Project}, {"session", p.Session},
	}
	for i := 1; i < len(p.Ports); i++ {
		out = append(out, [2]string{"port_" + strconv.Itoa(i), strconv.Itoa(p.Ports[i])})
	}
	if p.TalkPort > 0 {
		out = append(out, [2]string{"talk_port", strconv.Itoa(p.TalkPort)})
	}
	return out
}

// optionalKeys reach the environment only when they have a value: a build
// has no proposal, a work run no commit under review.
var optionalKeys = map[string]bool{"commit": true, "base": true, "proposal": true, "approved_plan": true, "feedback": true, "project": true, "session": true}

// Expand fills the placeholders in each word of argv in one pass, so a value
// that itself contains `{slug}` is never expanded again. Each word stays one
// argument whatever the values hold: no shell ever sees them.
func (p Placeholders) Expand(argv []string) []string {
	var old []string
	for _, kv := range p.pairs() {
		old = append(old, "{"+kv[0]+"}", kv[1])
	}
	r := strings.NewReplacer(old...)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// Env is the FLEET_* variables for p.
func (p Placeholders) Env() []string {
	var out []string
	for _, kv := range p.pairs() {
		if optionalKeys[kv[0]] && kv[1] == "" {
			continue
		}
		out = append(out, "FLEET_"+strings.ToUpper(kv[0])+"="+kv[1])
	}
	return append(out, "FLEET_ROOT="+p.Root, "FLEET_LEASE_TOKEN="+p.LeaseToken)
}

// CheckExecutor makes sure argv can be started before a plan is claimed for
// it: a command with a slash is taken from dir when relative and must exist;
// a bare name must be on PATH. It returns argv with its program resolved.
func CheckExecutor(argv []string, dir string) ([]string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("the executor command is empty")
	}
	out := append([]string(nil), argv...)
	prog := argv[0]
	if strings.Contains(prog, "{") {
		return out, nil // names a placeholder; checked when it is started
	}
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(dir, prog)
		}
		fi, err := os.Stat(prog)
		if err != nil {
			return nil, fmt.Errorf("executor %s: %v", argv[0], tree.ErrText(err))
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return nil, fmt.Errorf("executor %s: not an executable file", argv[0])
		}
		out[0] = prog
		return out, nil
	}
	p, err := exec.LookPath(prog)
	if err != nil {
		return nil, fmt.Errorf("executor %s: not found on PATH", prog)
	}
	out[0] = p
	return out, nil
}

// Plan-first modes (Job.Mode, FLEET_MODE).
const (
	ModeBuild  = "build"
	ModePlan   = "plan"
	ModeReview = "review"
)
