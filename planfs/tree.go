package planfs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// Dir is the name of the plans directory inside a project.
const Dir = ".plans"

// DefaultTTL is how long a claim holds without a heartbeat, in seconds.
const DefaultTTL = 3600

// claimGrace is how old a ready-path lease may be before it counts as left
// behind by a dead claimer; a live claim holds one for milliseconds.
const claimGrace = 60.0

// Tree is one project's .plans/ directory.
type Tree struct {
	Project string // absolute project root
	Plans   string // absolute .plans/ path
	// Now is the clock; tests replace it.
	Now func() time.Time
	// ReadOnly is a viewer's tree (an SSH session with a viewer's key):
	// every verb refuses with ErrReadOnly before changing anything. Set it
	// right after Open.
	ReadOnly bool
	// Via says how the actor reached this tree ("ssh SHA256:Ab12…", the
	// operator's key fingerprint, set by serve right after Open): every
	// event the tree appends carries it, beside the actor's agent id.
	Via string
	// RunsAs is written into every lease this tree's verbs make: a
	// worker's tier, endpoint and provider, which its caps count.
	RunsAs model.RunsAs
	// realRoot is Project with its symlinks resolved, once: the operator
	// chose it; symlinks below it are refused for writes (see safe.go).
	realRoot string
	host     string
	pid      int
	pidScope string

	mu sync.Mutex
	// dirty is what the watcher saw change since the last scan (mu).
	dirty dirtySet
	// scanMu orders scans: each builds on the base the previous one left.
	scanMu sync.Mutex
	base   *scanBase // the last scan's results (scanMu)
}

// Open finds .plans/ under the project root dir.
func Open(project string) (*Tree, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	plans := filepath.Join(abs, Dir)
	fi, err := os.Stat(plans)
	if err != nil || !fi.IsDir() {
		return nil, noTreeError(fmt.Sprintf("no %s/ in %s (run `fleetwatch scaffold %s` to create one)", Dir, abs, project))
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	host, _ := os.Hostname()
	return &Tree{Project: abs, Plans: plans, realRoot: real, Now: time.Now, host: host, pid: os.Getpid(), pidScope: PIDScope()}, nil
}

// PIDScope identifies this boot and pid namespace: a pid recorded by another
// container sharing the hostname, or before a reboot, says nothing here.
// Empty when either is unknown, and then no pid is trusted.
func PIDScope() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + ns
}

func (t *Tree) now() float64 { return unixSeconds(t.Now()) }

// NowSeconds is the tree's clock in Unix seconds, as leases count time.
func (t *Tree) NowSeconds() float64 { return t.now() }

func unixSeconds(tm time.Time) float64 { return float64(tm.UnixNano()) / 1e9 }

// Abs returns the absolute path of a rel.
func (t *Tree) Abs(rel string) string { return filepath.Join(t.Plans, filepath.FromSlash(rel)) }

func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SplitRel checks that rel names a plan file directly inside a lane and
// returns both parts (model.ParseRel).
func SplitRel(rel string) (model.Lane, string, error) {
	r, err := model.ParseRel(rel)
	if err != nil {
		return "", "", err
	}
	return r.Lane(), r.Name(), nil
}

// ValidSlug rejects slugs that could name a path outside a lane.
func ValidSlug(slug string) error {
	if slug == "" || strings.ContainsAny(slug, "/\\\x00") || slug == "." || slug == ".." || strings.HasPrefix(slug, ".") {
		return fmt.Errorf("bad slug %q: want a plan name like fix-login", slug)
	}
	return nil
}

// ResolvePath turns a file path into a rel inside the tree. A relative
// path is tried against cwd, the project and .plans/, as anchor does.
func (t *Tree) ResolvePath(p, cwd string) (string, error) {
	found := t.firstThere(p, cwd)
	if found == "" {
		return "", fmt.Errorf("%s: plan not found", p)
	}
	real, err := filepath.EvalSymlinks(found)
	if err != nil {
		return "", fmt.Errorf("%s: %v", p, err)
	}
	plansReal, err := filepath.EvalSymlinks(t.Plans)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(plansReal, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: outside %s", p, t.Plans)
	}
	// A symlink inside the tree must still name the plan by where it sits.
	if lexical, err := filepath.Rel(t.Plans, found); err == nil && !strings.HasPrefix(lexical, "..") && lexical != rel {
		return "", fmt.Errorf("%s: a symlink; name the plan file itself", p)
	}
	rel = filepath.ToSlash(rel)
	if _, _, err := SplitRel(rel); err != nil {
		return "", fmt.Errorf("%s: %v", p, err)
	}
	return rel, nil
}

// firstThere is the first place path p names that exists: p itself when
// absolute, else p under cwd, the project or .plans/; "" when none does.
func (t *Tree) firstThere(p, cwd string) string {
	candidates := []string{p}
	if !filepath.IsAbs(p) {
		candidates = []string{filepath.Join(cwd, p), filepath.Join(t.Project, p), filepath.Join(t.Plans, p)}
	}
	for _, c := range candidates {
		if _, err := os.Lstat(c); err == nil {
			return c
		}
	}
	return ""
}

// FindSlug lists the rels of plans named slug (`slug.md` or `slug.local.md`)
// in the given lanes, in that order.
func (t *Tree) FindSlug(slug string, lanes ...model.Lane) ([]string, error) {
	if err := ValidSlug(slug); err != nil {
		return nil, err
	}
	var out []string
	for _, l := range lanes {
		for _, name := range []string{slug + ".md", slug + ".local.md"} {
			rel := string(model.RelOf(l, name))
			if fi, err := os.Lstat(t.Abs(rel)); err == nil && fi.Mode().IsRegular() {
				out = append(out, rel)
			}
		}
	}
	return out, nil
}

func (t *Tree) exists(rel string) bool {
	_, err := os.Lstat(t.Abs(rel))
	return err == nil
}

// laneDir returns a lane's directory, creating it when missing. A lane that
// is a symlink (or .plans/ itself) is refused: moving plans through it would
// take them out of the tree.
func (t *Tree) laneDir(lane model.Lane) (string, error) {
	return t.mkdirPlans(string(lane))
}
