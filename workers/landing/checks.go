package landing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
)

// How check results are kept. Every result is keyed by the candidate's tree
// and a hash of everything that decides the verdict (argv, env,
// expect_output, timeout), so it holds for any commit with that tree, and
// it lives at var/fleet/checks/<tree>/<name>-<hash>.json with its log
// beside it (.log). A runner holds <name>-<hash>.lock while the check runs:
// a reader that finds it held says Running, a second runner waits for the
// first and takes its result. A result is written (atomically) only once the
// check has finished on its own or timed out; a cancelled or killed runner
// leaves none, so the check stays Missing and runs again next time.
//
// Each check runs in a detached worktree of the commit under
// var/fleet/checks/wt/, whose directory its runner holds flocked; the next
// runner removes any such worktree whose lock nobody holds (its runner
// died).

// checksRel is where results, logs and throwaway worktrees live.
const checksRel = "var/fleet/checks"

// checkRecord is a stored result: the CheckResult plus what it was run on.
type checkRecord struct {
	CheckResult
	Tree   string   `json:"tree"`
	Commit string   `json:"commit"` // the commit it ran on; any with the same tree shares it
	Argv   []string `json:"argv"`
	// Spec is checkSpec of the check it ran; with Tree it must match the
	// check and tree asked about, or the record does not count.
	Spec string    `json:"spec"`
	At   time.Time `json:"at"`
	// Rerun marks a result of the environment rather than the tree (the
	// program could not be started): shown, but run again next time, so
	// installing the tool is enough.
	Rerun bool `json:"rerun,omitempty"`
}

// treeID is what git prints for a tree: SHA-1 or SHA-256 hex.
var treeID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// TreeOf is commit's tree id.
func TreeOf(project, commit string) (string, error) {
	if commit == "" || commit[0] == '-' {
		return "", fmt.Errorf("commit %q: not a commit id", commit)
	}
	out, err := git(project, "rev-parse", "--verify", "--quiet", "--end-of-options", commit+"^{tree}")
	if err != nil || !treeID.MatchString(out) {
		return "", fmt.Errorf("commit %s: not found in %s", commit, project)
	}
	return out, nil
}

// checkSpec is the hash of everything that decides a check's verdict
// beyond the tree: its name, argv, env, expect_output and timeout, as read
// from the committed settings. A stored result counts only for the spec it
// names, so a record written for another spec (or copied from one) is
// ignored.
// A check's `cache:` is left out: a private copy of a folder the operator
// trusts makes a check faster, never changes what it sees of the tree.
func checkSpec(c config.Check) string {
	env := make([]string, 0, len(c.Env))
	for k, v := range c.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	var expect *string
	if c.ExpectOutput != nil {
		re := c.ExpectOutput.String()
		expect = &re
	}
	data, _ := json.Marshal(struct {
		Name    string   `json:"name"`
		Run     []string `json:"run"`
		Env     []string `json:"env"`
		Expect  *string  `json:"expect"`
		Timeout int64    `json:"timeout"`
	}{c.Name, c.Run, env, expect, int64(checkTimeout(c))})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// checkKey is the short form of checkSpec in the result's file name.
func checkKey(c config.Check) string { return checkSpec(c)[:12] }

func checkTimeout(c config.Check) time.Duration {
	if c.Timeout <= 0 {
		return config.DefaultCheckTimeout
	}
	return c.Timeout
}

// checkFiles names one check's files on one tree.
type checkFiles struct {
	dirRel string // var/fleet/checks/<tree>, relative to the project
	dir    string // absolute
	base   string // <name>-<hash>
}

func filesOf(project, tree string, c config.Check) checkFiles {
	rel := checksRel + "/" + tree
	return checkFiles{dirRel: rel, dir: filepath.Join(project, filepath.FromSlash(rel)), base: c.Name + "-" + checkKey(c)}
}

func (f checkFiles) rel(ext string) string { return f.dirRel + "/" + f.base + ext }
func (f checkFiles) abs(ext string) string { return filepath.Join(f.dir, f.base+ext) }

// readRecord reads a stored result for check c on tree; false when there is
// none, it does not parse, or it names another tree or spec (a rerun then
// replaces it).
func readRecord(project string, f checkFiles, c config.Check, tree string) (checkRecord, bool) {
	rec, ok := readRecordAs(project, f, ".json", c, tree)
	if !ok {
		return rec, false
	}
	rec.Log = f.abs(".log")
	if rec.Result == Pass {
		if _, retried := readRecordAs(project, f, retryExt+".json", c, tree); retried {
			rec.Flaky, rec.FlakyLog = true, f.abs(retryExt+".log")
		}
	}
	return rec, true
}

// retryExt marks the record and log of a check's failed attempt that was
// run again on the same tree (<name>-<hash>.retry.json and .log beside the
// result): a pass beside one is flaky, a failure beside one was retried.
const retryExt = ".retry"

// readRecordAs reads the record at f's ext for c on tree.
func readRecordAs(project string, f checkFiles, ext string, c config.Check, tree string) (checkRecord, bool) {
	file, err := safepath.OpenFile(project, f.rel(ext), os.O_RDONLY, 0)
	if err != nil {
		return checkRecord{}, false
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, 1<<20))
	var rec checkRecord
	if err != nil || json.Unmarshal(data, &rec) != nil {
		return checkRecord{}, false
	}
	switch rec.Result {
	case Pass, Fail, Error, Timeout:
	default:
		return checkRecord{}, false
	}
	if rec.Tree != tree || rec.Spec != checkSpec(c) || rec.Name != c.Name {
		return checkRecord{}, false
	}
	return rec, true
}

// CachedChecks reads the stored results for tree without running anything:
// Missing for a check never run on it, Running for one a live runner holds now.
func CachedChecks(project string, checks []config.Check, tree string) []CheckResult {
	if abs, err := filepath.Abs(project); err == nil {
		project = abs
	}
	out := make([]CheckResult, 0, len(checks))
	for _, c := range checks {
		r := CheckResult{Name: c.Name, Result: Missing}
		if treeID.MatchString(tree) && config.CheckNameOK(c.Name) {
			f := filesOf(project, tree, c)
			rec, ok := readRecord(project, f, c, tree)
			if ok {
				r = rec.CheckResult
			}
			// A verdict stands even while a runner looks at its lock; one
			// of the environment is being run again when the lock is held.
			if (!ok || rec.Rerun) && lockHeld(project, f.rel(".lock")) {
				r.Result = Running
				r.Since = lockStamp(project, f.rel(".lock"))
			}
		}
		r.Name = c.Name
		out = append(out, r)
	}
	return out
}

// lockStamp is when the lock at rel was last taken for a run (runCheck
// stamps it), zero when it cannot be read.
func lockStamp(project, rel string) time.Time {
	f, err := safepath.OpenFile(project, rel, os.O_RDONLY, 0)
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// lockHeld reports whether someone holds path's flock now.
func lockHeld(project, rel string) bool {
	f, err := safepath.OpenFile(project, rel, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB), unix.EWOULDBLOCK)
}

// RunChecks runs every check on commit (a candidate commit id) unless a
// result for its tree and the check's argv is already stored, and returns one
// result per check in config order. ctx cancelled = running checks killed,
// their results not stored (so they stay Missing).
//
// Checks run one after another, each to its end whatever the one before it
// said, so a failing change shows every check's verdict at once.
func RunChecks(ctx context.Context, project string, checks []config.Check, commit string, log io.Writer) ([]CheckResult, error) {
	project, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	tree, err := TreeOf(project, commit)
	if err != nil {
		return nil, err
	}
	// The id, not a name that may move while the checks run.
	id, err := git(project, "rev-parse", "--verify", "--end-of-options", commit+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("commit %s: %v", commit, err)
	}
	commit = id
	if len(checks) > 0 {
		cleanCheckWorktrees(project)
	}
	if anyToRun(project, checks, tree) {
		// Alongside the checks, compiling only: it warms the trusted
		// layer should this tree land.
		defer startTrustedBuild(ctx, project, checks, commit, tree)()
	}
	out := make([]CheckResult, 0, len(checks))
	var stop error
	for _, c := range checks {
		if stop == nil {
			stop = ctx.Err()
		}
		if stop != nil {
			out = append(out, CheckResult{Name: c.Name, Result: Missing})
			continue
		}
		r, err := runCheck(ctx, project, c, commit, tree, log)
		if err != nil {
			if ctx.Err() == nil {
				return out, fmt.Errorf("check %s: %w", c.Name, err)
			}
			stop = ctx.Err()
			r = CheckResult{Name: c.Name, Result: Missing}
		}
		out = append(out, r)
	}
	if stop != nil {
		return out, stop
	}
	return out, nil
}

// anyToRun says whether some check has no verdict stored on tree.
func anyToRun(project string, checks []config.Check, tree string) bool {
	for _, c := range checks {
		if !config.CheckNameOK(c.Name) {
			continue
		}
		if rec, ok := readRecord(project, filesOf(project, tree, c), c, tree); !ok || rec.Rerun {
			return true
		}
	}
	return false
}

// lockPoll is how often a runner looks again at a lock another runner holds.
const lockPoll = 50 * time.Millisecond

// runCheck gives c's stored result on tree, or runs it under its lock and
// stores it. An error means no verdict (ctx ended, the worktree could not
// be made).
func runCheck(ctx context.Context, project string, c config.Check, commit, tree string, log io.Writer) (CheckResult, error) {
	if !config.CheckNameOK(c.Name) {
		return CheckResult{}, fmt.Errorf("%q is not a check name", c.Name)
	}
	f := filesOf(project, tree, c)
	short := commit[:min(len(commit), 6)]
	if rec, ok := readRecord(project, f, c, tree); ok && !rec.Rerun {
		logf(log, "check %s on %s: %s (stored, took %s)", c.Name, short, rec.Result, seconds(rec.Took))
		return rec.CheckResult, nil
	}
	lock, err := lockCheck(ctx, project, f, c.Name, short, log)
	if err != nil {
		return CheckResult{}, err
	}
	defer lock.Close()
	// The runner we waited for may have stored it.
	if rec, ok := readRecord(project, f, c, tree); ok && !rec.Rerun {
		logf(log, "check %s on %s: %s (stored, took %s)", c.Name, short, rec.Result, seconds(rec.Took))
		return rec.CheckResult, nil
	}
	// The lock's time says since when the check runs (CachedChecks).
	now := unix.NsecToTimeval(time.Now().UnixNano())
	_ = unix.Futimes(int(lock.Fd()), []unix.Timeval{now, now})
	rec, err := execRetrying(ctx, project, c, commit, tree, f, log)
	if err != nil {
		return CheckResult{}, err
	}
	if err := storeRecord(project, f, ".json", rec); err != nil {
		return CheckResult{}, err
	}
	line := fmt.Sprintf("check %s on %s: %s in %s", c.Name, short, rec.Result, seconds(rec.Took))
	if rec.Result != Pass && rec.Note != "" {
		line += " (" + rec.Note + ")"
	}
	logf(log, "%s", line)
	stored, _ := readRecord(project, f, c, tree)
	rec.Flaky, rec.FlakyLog = stored.Flaky, stored.FlakyLog
	return rec.CheckResult, nil
}

// lockCheck opens f's lock and holds it, waiting while another runner
// holds it until ctx ends. The caller closes the lock, which frees it.
func lockCheck(ctx context.Context, project string, f checkFiles, name, short string, log io.Writer) (*os.File, error) {
	dir, err := safepath.OpenDir(project, f.dirRel, true)
	if err != nil {
		return nil, err
	}
	dir.Close()
	lock, err := safepath.OpenFile(project, f.rel(".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := waitFlock(ctx, lock, name, short, log); err != nil {
		lock.Close()
		return nil, err
	}
	return lock, nil
}

// waitFlock takes lock's flock, polling every lockPoll while another
// runner holds it, and says once that it waits.
func waitFlock(ctx context.Context, lock *os.File, name, short string, log io.Writer) error {
	waited := false
	for {
		err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if !waited {
			logf(log, "check %s on %s: another runner has it; waiting", name, short)
			waited = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// execRetrying runs c, and again up to c.Retries times while it does not
// pass, keeping each earlier attempt.
func execRetrying(ctx context.Context, project string, c config.Check, commit, tree string, f checkFiles, log io.Writer) (checkRecord, error) {
	short := commit[:min(len(commit), 6)]
	rec, err := execCheck(ctx, project, c, commit, tree, f)
	for try := 0; err == nil && rec.Result != Pass && try < c.Retries; try++ {
		logf(log, "check %s on %s: %s; running it again (retries: %d)", c.Name, short, rec.Result, c.Retries)
		if err = keepAttempt(project, f, rec); err == nil {
			rec, err = execCheck(ctx, project, c, commit, tree, f)
		}
	}
	return rec, err
}

// storeRecord writes rec as f's ext, atomically.
func storeRecord(project string, f checkFiles, ext string, rec checkRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	d, err := safepath.OpenDir(project, f.dirRel, false)
	if err != nil {
		return err
	}
	defer d.Close()
	return atomicfile.WriteAt(d, f.base+ext, append(data, '\n'), 0o644)
}

// keepAttempt sets a failed attempt aside as the retry record, its log
// with it, so the next run of the check starts a fresh log and a pass
// after it is known to be flaky.
func keepAttempt(project string, f checkFiles, rec checkRecord) error {
	d, err := safepath.OpenDir(project, f.dirRel, false)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Renameat(int(d.Fd()), f.base+".log", int(d.Fd()), f.base+retryExt+".log"); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	rec.Log = f.abs(retryExt + ".log")
	if err := storeRecord(project, f, retryExt+".json", rec); err != nil {
		return err
	}
	if err := unix.Unlinkat(int(d.Fd()), f.base+".json", 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// RetryChecks runs again, once, every check on commit whose stored result
// is not a pass and was not retried yet (a batch retried as is), and
// returns the results; a pass on the retry reads as flaky.
func RetryChecks(ctx context.Context, project string, checks []config.Check, commit string, log io.Writer) ([]CheckResult, error) {
	project, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	tree, err := TreeOf(project, commit)
	if err != nil {
		return nil, err
	}
	for _, c := range checks {
		if !config.CheckNameOK(c.Name) {
			continue
		}
		f := filesOf(project, tree, c)
		rec, ok := readRecord(project, f, c, tree)
		if _, retried := readRecordAs(project, f, retryExt+".json", c, tree); !ok || rec.Result == Pass || retried {
			continue
		}
		if err := keepAttempt(project, f, rec); err != nil {
			return nil, err
		}
	}
	return RunChecks(ctx, project, checks, commit, log)
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// seconds is d as "2.1s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// randomSuffix makes a throwaway worktree's name unique across processes.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// removeAllIn removes path, which must lie under root, refusing to follow a
// symlink on the way.
func removeAllIn(root, path string) {
	if rel, err := filepath.Rel(root, path); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return
	}
	if fi, err := os.Lstat(path); err == nil && (fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) {
		_ = os.RemoveAll(path) // RemoveAll never follows symlinks
	}
}
