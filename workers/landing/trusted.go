package landing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/workers/landing/gocache"
)

// Trusted builds fill the trusted layer. While a candidate's checks run,
// the lander also compiles the same tree, never running any of it (go
// test with -exec=/bin/true, go vet, go build), contained, through the
// same cache program writing a staging layer of its own
// (gocache/staging/<tree>). When that exact tree lands, its staging layer
// is promoted into the trusted one; staging of trees that never land is
// removed a day later. A landing run also builds the integration tip's
// tree when no trusted build ever did, and promotes it at once.

// trustedLogName is the trusted build's log, beside the check logs.
const trustedLogName = "trusted-build.log"

// doneName marks a staging layer whose build ran to its end.
const doneName = ".done"

// trustedKeep is how long a trusted entry no build used stays.
const trustedKeep = 7 * 24 * time.Hour

// stagingKeep is how long a staging layer of a tree that did not land
// stays.
const stagingKeep = 24 * time.Hour

// trustedTrue is what the trusted build's go test runs instead of each
// test binary.
const trustedTrue = "/bin/true"

// trustedBuilds are the commands a trusted build of a tree runs, each with
// the env and timeout of the check it comes from: each check that is `go
// test` (with -exec=/bin/true after test), `go vet` or `go build`; when no
// check is, and the tree has a go.mod, go vet and go test of ./... . A
// check that names its own -exec or -toolexec (in its argv or GOFLAGS), or
// fuzzes, is left out: it would run the candidate's code.
func trustedBuilds(checks []config.Check, goMod bool) []config.Check {
	var out []config.Check
	for _, c := range checks {
		if argv, ok := trustedArgv(c.Run); ok && !runsAProgram(strings.Fields(c.Env["GOFLAGS"])) {
			out = append(out, config.Check{Name: "trusted-build", Run: argv, Env: c.Env, Timeout: c.Timeout})
		}
	}
	if len(out) == 0 && goMod {
		out = []config.Check{
			{Name: "trusted-build", Run: []string{"go", "vet", "./..."}},
			{Name: "trusted-build", Run: []string{"go", "test", "-exec=" + trustedTrue, "./..."}},
		}
	}
	return out
}

func trustedArgv(argv []string) ([]string, bool) {
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" {
		return nil, false
	}
	if runsAProgram(argv[2:]) {
		return nil, false
	}
	switch argv[1] {
	case "test":
		return append([]string{argv[0], "test", "-exec=" + trustedTrue}, argv[2:]...), true
	case "vet", "build":
		return argv, true
	}
	return nil, false
}

// runsAProgram says whether go flags name a program of their own to run
// what they build (-exec, -toolexec) or fuzz: a trusted build never runs
// the candidate's code, nor lets another program do so.
func runsAProgram(flags []string) bool {
	for _, a := range flags {
		f := strings.TrimLeft(a, "-")
		if a != f && (strings.HasPrefix(f, "exec") || strings.HasPrefix(f, "toolexec") || strings.HasPrefix(f, "fuzz")) {
			return true
		}
	}
	return false
}

// exists says whether path is there.
func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

// startTrustedBuild starts the trusted build of commit's tree alongside
// its checks, unless one ran already, one runs now, checks_cache is off or
// nothing is contained here; wait waits for it to end.
func startTrustedBuild(ctx context.Context, project string, checks []config.Check, commit, tree string) (wait func()) {
	noop := func() {}
	s, err := config.Load(project)
	if err != nil || s.ChecksCache.Off || exists(builtMark(project, tree)) || exists(filepath.Join(stagingDir(project, tree), doneName)) {
		return noop
	}
	if contained, _, _ := sandbox.Status(s.Sandbox); !contained {
		return noop
	}
	if _, err := cacheProgram(); err != nil {
		return noop // its go commands could not be served: it would fill nothing
	}
	if inherits(project, commit) {
		// Nothing to build: once landed it counts as built (promoteTree).
		_ = os.MkdirAll(stagingDir(project, tree), 0o755)
		_ = os.WriteFile(filepath.Join(stagingDir(project, tree), doneName), nil, 0o644)
		return noop
	}
	_, err = git(project, "cat-file", "-e", commit+":go.mod")
	builds := trustedBuilds(checks, err == nil)
	if len(builds) == 0 {
		return noop
	}
	lock, ok := lockStaging(project, tree)
	if !ok {
		return noop
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer lock.Close()
		trustedBuild(ctx, project, checkGoCache(project, s), builds, commit, tree)
	}()
	return func() { <-done }
}

// inherits says whether commit's tree needs no trusted build: its first
// parent's tree reached the trusted layer, and the change adds no
// dependency (inherit.go).
func inherits(project, commit string) bool {
	parent, err := TreeOf(project, commit+"^1")
	return err == nil && exists(builtMark(project, parent)) && !addsDependencies(project, commit)
}

// lockStaging takes the lock of tree's staging layer without waiting:
// held by its build, and by its promotion.
func lockStaging(project, tree string) (*os.File, bool) {
	d, err := safepath.OpenDir(project, gocacheRel+"/staging", true)
	if err != nil {
		return nil, false
	}
	d.Close()
	f, err := safepath.OpenFile(project, gocacheRel+"/staging/"+tree+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// trustedBuild runs builds in a throwaway worktree of commit, each
// contained, writing only the staging layer (and its temp dir); its
// output goes to the trusted build's log, and its failure fails nothing.
func trustedBuild(ctx context.Context, project string, layers *goCache, builds []config.Check, commit, tree string) {
	staging := stagingDir(project, tree)
	logDir := checksRel + "/" + tree
	if d, err := safepath.OpenDir(project, logDir, true); err == nil {
		d.Close()
	}
	log, err := safepath.OpenFile(project, logDir+"/"+trustedLogName, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return
	}
	defer log.Close()
	if err := os.MkdirAll(staging, 0o755); err != nil {
		fmt.Fprintf(log, "fleetwatch: %v\n", err)
		return
	}
	wt, err := addCheckWorktree(project, commit, "trusted")
	if err != nil {
		fmt.Fprintf(log, "fleetwatch: %v\n", err)
		return
	}
	defer wt.remove()
	cache := &goCache{reads: layers.reads, write: staging, used: filepath.Join(staging, gocache.UsedFile)}
	for _, c := range builds {
		if !runTrusted(ctx, project, c, commit, tree, wt.path, cache, log) {
			return
		}
	}
	_ = os.WriteFile(filepath.Join(staging, doneName), nil, 0o644)
}

// runTrusted runs one command of a trusted build; false when the build
// stops here (ctx ended, nothing contained).
func runTrusted(ctx context.Context, project string, c config.Check, commit, tree, dir string, cache *goCache, log io.Writer) bool {
	fmt.Fprintf(log, "fleetwatch: trusted build (compiles, runs nothing): %s\n", strings.Join(c.Run, " "))
	cmd := checkCommand(c, commit, tree, dir, 0)
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	release, cleanup, err := startContained(project, cmd, grant{write: []string{cache.write}, log: log, goCache: cache, mustContain: true})
	if err != nil {
		fmt.Fprintf(log, "fleetwatch: could not start: %s\n", startError(err))
		return false
	}
	defer cleanup()
	timedOut := waitCheck(ctx, cmd, checkTimeout(c))
	release()
	killGroup(cmd.Process.Pid)
	fmt.Fprintf(log, "fleetwatch: exit %d in %s\n", cmd.ProcessState.ExitCode(), seconds(time.Since(start)))
	return ctx.Err() == nil && !timedOut
}

// promoteTree moves tree's staging layer into the trusted one once tree
// has landed; a build still running is left for the next landing run.
func promoteTree(project, tree string) error {
	staging := stagingDir(project, tree)
	if !exists(staging) {
		return nil
	}
	lock, ok := lockStaging(project, tree)
	if !ok {
		return nil
	}
	defer lock.Close()
	complete := exists(filepath.Join(staging, doneName))
	if err := gocache.Promote(staging, trustedDir(project)); err != nil {
		return err
	}
	if complete {
		if err := os.MkdirAll(filepath.Dir(builtMark(project, tree)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(builtMark(project, tree), nil, 0o644)
	}
	return nil
}

// tidyCache trims the trusted layer (at most once a day) and removes the
// staging layers of trees that did not land within a day.
func tidyCache(project string, now time.Time) {
	if exists(trustedDir(project)) {
		_, _ = gocache.Trim(trustedDir(project), trustedKeep, now)
	}
	dir := filepath.Join(project, filepath.FromSlash(gocacheRel), "staging")
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		fi, err := n.Info()
		if err != nil || !n.IsDir() || now.Sub(fi.ModTime()) < stagingKeep {
			continue
		}
		if lock, ok := lockStaging(project, n.Name()); ok {
			os.RemoveAll(filepath.Join(dir, n.Name()))
			os.Remove(lock.Name())
			lock.Close()
		}
	}
}

// integrationTree is the integration branch's tip and its tree, "" when
// there is none.
func integrationTree(project string) (commit, tree string) {
	s, err := config.Load(project)
	if err != nil {
		return "", ""
	}
	b, err := Integration(project, s)
	if err != nil {
		return "", ""
	}
	tip := revParse(project, "refs/heads/"+b)
	if tip == "" {
		return "", ""
	}
	tree, err = TreeOf(project, tip)
	if err != nil {
		return "", ""
	}
	return tip, tree
}

// warmIntegration is what a landing run does first: the integration tip
// landed already, so a staging layer of its tree is promoted, and a tree
// no trusted build ever built is built (alongside the landing) and
// promoted then. wait waits for that.
func warmIntegration(ctx context.Context, project string) (wait func()) {
	tip, tree := integrationTree(project)
	if tree == "" || exists(builtMark(project, tree)) {
		return func() {}
	}
	if exists(stagingDir(project, tree)) {
		_ = promoteTree(project, tree)
		return func() {}
	}
	checks := []config.Check(nil)
	if committed, err := committedSettings(project, integrationName(project)); err == nil {
		checks = committed.Checks
	}
	build := startTrustedBuild(ctx, project, checks, tip, tree)
	return func() {
		build()
		_ = promoteTree(project, tree)
	}
}

// integrationName is the integration branch's name, "" when unknown.
func integrationName(project string) string {
	s, err := config.Load(project)
	if err != nil {
		return ""
	}
	b, _ := Integration(project, s)
	return b
}

// afterLanding promotes the staging layer of the tree that is now the
// integration tip (it landed) and tidies the cache.
func afterLanding(project string, log io.Writer) {
	if _, tree := integrationTree(project); tree != "" {
		if err := promoteTree(project, tree); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(log, "warning: the trusted build of %s did not reach the trusted layer: %v\n", short(tree), err)
		}
	}
	tidyCache(project, time.Now())
}
