package look

// What an agent changed: a branch against its merge base with the
// integration branch, and a worktree's uncommitted changes. Computed each
// time it is asked for and never stored, so it cannot go stale.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Limits past which a file is summarised on one line instead of printed:
// a generated file or a vendored tree would bury the changes that matter.
const (
	DiffFileLines = 2000      // added + deleted lines of one file
	DiffFileBytes = 512 << 10 // patch text of one file
	// diffOutputCap bounds what is read of one git diff; past it the rest
	// of the files are summarised.
	diffOutputCap = 64 << 20
	// untrackedCounted is how many untracked files get their lines
	// counted; the rest are listed only.
	untrackedCounted = 200
)

// diffTimeout bounds one git call of a diff.
var diffTimeout = 30 * time.Second

// Diff is what changed on a branch since it left the integration branch,
// and what is not committed yet in its worktree.
type Diff struct {
	Branch      string // the branch compared, or HEAD's short id when detached
	Integration string // the branch it is compared against
	Base        string // the merge base, full commit id
	Worktree    string // the worktree, relative to the project ("" none)
	Committed   []FileDiff
	// Uncommitted is the worktree's staged and unstaged changes against
	// its HEAD; Untracked its files git does not know. Both empty without
	// a worktree.
	Uncommitted []FileDiff
	Untracked   []Untracked
	// Note says why a worktree's changes are left out ("" when they are
	// not).
	Note string
}

// FileDiff is one file's change. Lines is its patch from the first hunk
// on, made safe for the terminal (tabs expanded); empty with a Summary.
type FileDiff struct {
	Path           string
	From           string // the path before a rename ("" when not renamed)
	Added, Deleted int
	Binary         bool
	// Summary says why the patch is not shown (binary, too big); "" when
	// it is.
	Summary string
	// Meta are git's lines about the file before the first hunk (new
	// file mode, deleted file mode), safe for the terminal.
	Meta  []string
	Lines []string

	raw, rawFrom string // the paths as git wrote them
}

// Untracked is a file in the worktree that git does not track. Lines is
// -1 when not counted (binary, big, not a regular file, too many files).
type Untracked struct {
	Path  string
	Lines int
}

// DiffOfPlan is the diff of slug's feature branch, with the uncommitted
// changes of the worktree that has it checked out, if any.
func DiffOfPlan(project, slug string) (Diff, error) {
	top, err := tree.Project(project)
	if err != nil {
		return Diff{}, err
	}
	branch := model.FeatureBranch(slug)
	wts, err := tree.WorktreeBranches(top)
	if err != nil {
		return Diff{}, err
	}
	wt := ""
	for p, b := range wts {
		if b == branch {
			wt = p
		}
	}
	if wt == "" && !tree.HasRef(top, "refs/heads/"+branch) {
		return Diff{}, fmt.Errorf("%s: no branch %s and no worktree on it: nothing to compare yet", slug, branch)
	}
	ref := model.BranchRef(branch)
	if wt == "" {
		return diffIn(top, "", ref)
	}
	if _, err := dirIn(top, wt); err != nil {
		d, err2 := diffIn(top, "", ref)
		d.Note = "the uncommitted changes of " + termtext.Line(wt) + " are not read: " + termtext.Line(err.Error())
		return d, err2
	}
	return diffIn(top, wt, ref)
}

// dirIn is dir relative to top when it is a folder inside top reached
// without a symlink: nothing outside the project is read.
func dirIn(top, dir string) (string, error) {
	rel, err := tree.RelIn(top, dir)
	if err != nil {
		return "", err
	}
	f, err := safepath.OpenDir(top, rel, false)
	if err != nil {
		return "", fmt.Errorf("%s: %v", dir, err)
	}
	f.Close()
	return rel, nil
}

// DiffOfWorktree is the diff of the branch checked out at path (HEAD when
// detached), with its uncommitted changes. path must be inside project.
func DiffOfWorktree(project, path string) (Diff, error) {
	top, err := tree.Project(project)
	if err != nil {
		return Diff{}, err
	}
	if !tree.IsDir(path) {
		return Diff{}, fmt.Errorf("%s: no such worktree", path)
	}
	if _, err := dirIn(top, path); err != nil {
		return Diff{}, err
	}
	head, err := gitQuery(path, "symbolic-ref", "--quiet", "HEAD")
	if err != nil || head == "" {
		head = "HEAD"
	}
	return diffIn(top, path, head)
}

// DiffOfWorker is the diff of st's worktree when its state file names one,
// else of its plan's feature branch.
func DiffOfWorker(project string, st State) (Diff, error) {
	if st.Worktree != "" && tree.IsDir(st.Worktree) {
		return DiffOfWorktree(project, st.Worktree)
	}
	if st.Plan != "" {
		return DiffOfPlan(project, model.SlugOf(path.Base(filepath.ToSlash(st.Plan))))
	}
	return Diff{}, fmt.Errorf("%s: its state file names no worktree and no plan", st.AgentID)
}

// diffIn compares ref (a branch's full ref, or HEAD in worktree wt) with
// its merge base; wt, when set, also gives the uncommitted changes.
func diffIn(top, wt, ref string) (Diff, error) {
	dir := top
	if wt != "" {
		dir = wt
	}
	branch := ShortRef(ref)
	d := Diff{Branch: branch}
	if wt != "" {
		d.Worktree, _ = tree.RelIn(top, wt)
	}
	integration, err := FindIntegration(top)
	if err != nil {
		return d, err
	}
	d.Integration = ShortRef(integration)
	tip, err := gitQuery(dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return d, fmt.Errorf("%s: no commit to compare", branch)
	}
	if ref == "HEAD" {
		d.Branch = tip[:min(len(tip), 7)]
	}
	if d.Base, err = gitQuery(dir, "merge-base", integration, tip); err != nil {
		return d, fmt.Errorf("%s and %s share no history: %v", branch, d.Integration, err)
	}
	if wt == "" {
		d.Committed, err = fileDiffs(dir, d.Base, tip)
		return d, err
	}
	// The three readings are independent: side by side they take the
	// time of the slowest.
	var errs [3]error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.Uncommitted, errs[1] = fileDiffs(dir, "HEAD") }()
	go func() { defer wg.Done(); d.Untracked, errs[2] = untracked(top, wt) }()
	d.Committed, errs[0] = fileDiffs(dir, d.Base, tip)
	wg.Wait()
	// One line: the first failure.
	for _, err := range errs {
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// fileDiffs is the diff between revs (one rev: the work tree against
// it): counts from --numstat, then the patch of the files not summarised,
// which git lists in the same order. Renames are found; should leaving
// the summarised files out pair the others differently (the patches then
// do not line up with the counts), it asks again without renames, where
// each file is one path.
func fileDiffs(dir string, revs ...string) ([]FileDiff, error) {
	files, aligned, err := fileDiffsWith(dir, "-M", revs)
	if err == nil && !aligned {
		files, _, err = fileDiffsWith(dir, "--no-renames", revs)
	}
	return files, err
}

func fileDiffsWith(dir, renames string, revs []string) ([]FileDiff, bool, error) {
	args := append([]string{"diff", "--no-color", "--no-ext-diff", renames, "--no-textconv"}, revs...)
	out, _, err := gitCapped(dir, diffOutputCap, append(args, "--numstat", "-z")...)
	if err != nil {
		return nil, false, err
	}
	files := parseNumstat(out)
	// The summarised files are left out of the patch by name: usually a
	// few, where the shown ones may be thousands.
	var skip []string
	for i := range files {
		f := &files[i]
		switch {
		case f.Binary:
			f.Summary = "binary file, not shown"
		case f.Added+f.Deleted > DiffFileLines:
			f.Summary = "not shown: more than " + strconv.Itoa(DiffFileLines) + " changed lines"
		default:
			continue
		}
		skip = append(skip, ":(exclude,literal)"+f.raw)
		if f.rawFrom != "" {
			skip = append(skip, ":(exclude,literal)"+f.rawFrom)
		}
	}
	if len(skip) == len(files) {
		return files, true, nil
	}
	patch, truncated, err := gitCapped(dir, diffOutputCap, append(append(args, "--"), skip...)...)
	if err != nil {
		return nil, false, err
	}
	return files, attachPatches(files, patch, truncated), nil
}

// parseNumstat reads `git diff --numstat -z`: per file
// "added\tdeleted\tpath\0", or "added\tdeleted\t\0from\0path\0" for a
// rename, with "-" counts for a binary file.
func parseNumstat(out []byte) []FileDiff {
	var files []FileDiff
	recs := bytes.Split(out, []byte{0})
	for i := 0; i < len(recs); i++ {
		a, rest, ok1 := bytes.Cut(recs[i], []byte{'\t'})
		del, p, ok2 := bytes.Cut(rest, []byte{'\t'})
		if !ok1 || !ok2 {
			continue
		}
		var from []byte
		if len(p) == 0 && i+2 < len(recs) {
			from, p = recs[i+1], recs[i+2]
			i += 2
		}
		if len(p) == 0 {
			continue
		}
		f := FileDiff{Path: termtext.Line(string(p)), raw: string(p)}
		if from != nil {
			f.From, f.rawFrom = termtext.Line(string(from)), string(from)
		}
		if string(a) == "-" || string(del) == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(string(a))
			f.Deleted, _ = strconv.Atoi(string(del))
		}
		files = append(files, f)
	}
	return files
}

// attachPatches splits patch at each "diff --git" and gives the pieces, in
// order, to the files without a summary. It reports whether there was one
// piece per file (always, when the patch was cut short).
func attachPatches(files []FileDiff, patch []byte, truncated bool) bool {
	chunks := bytes.Split(patch, []byte("\ndiff --git "))
	if len(chunks) > 0 && !bytes.HasPrefix(chunks[0], []byte("diff --git ")) {
		chunks = chunks[1:]
	}
	next, missing := 0, false
	for i := range files {
		f := &files[i]
		if f.Summary != "" {
			continue
		}
		if next >= len(chunks) {
			f.Summary = "not shown: the whole diff is over " + strconv.Itoa(diffOutputCap>>20) + " MiB"
			missing = true
			continue
		}
		chunk := chunks[next]
		next++
		if len(chunk) > DiffFileBytes {
			f.Summary = "not shown: more than " + strconv.Itoa(DiffFileBytes>>10) + " KiB of patch"
			continue
		}
		if truncated && next == len(chunks) {
			f.Summary = "not shown: the whole diff is over " + strconv.Itoa(diffOutputCap>>20) + " MiB"
			continue
		}
		f.Meta, f.Lines = splitChunk(chunk)
	}
	return truncated || (!missing && next == len(chunks))
}

// splitChunk turns one file's patch into its meta lines (those git writes
// before the first hunk, less the ones the file list already says) and
// its hunks, each line safe for the terminal.
func splitChunk(chunk []byte) (meta, lines []string) {
	text := strings.TrimSuffix(string(chunk), "\n")
	all := strings.Split(text, "\n")
	i := 1 // the "diff --git" line: the file list names the file
	for ; i < len(all) && !strings.HasPrefix(all[i], "@@"); i++ {
		l := all[i]
		if strings.HasPrefix(l, "index ") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
			continue
		}
		meta = append(meta, safeLine(l))
	}
	lines = make([]string, 0, len(all)-i)
	for ; i < len(all); i++ {
		lines = append(lines, safeLine(all[i]))
	}
	return meta, lines
}

// safeLine is a patch line for the terminal: tabs expanded, so code keeps
// its indentation, and controls replaced.
func safeLine(l string) string {
	if strings.IndexByte(l, '\t') >= 0 {
		l = strings.ReplaceAll(l, "\t", "    ")
	}
	return termtext.Line(l)
}

// untracked lists wt's untracked files (as git status shows them: ignored
// ones left out) with their line counts where cheap. Files are read only
// inside the project, never through a symlink.
func untracked(top, wt string) ([]Untracked, error) {
	out, _, err := gitCapped(wt, diffOutputCap, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	wtRel, err := tree.RelIn(top, wt)
	if err != nil {
		return nil, err
	}
	var files []Untracked
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		u := Untracked{Path: termtext.Line(string(p)), Lines: -1}
		if len(files) < untrackedCounted {
			u.Lines = countLines(top, path.Join(wtRel, string(p)))
		}
		files = append(files, u)
	}
	return files, nil
}

// countLines counts rel's lines, or -1 when it is binary, too big, or not
// a regular file reached without a symlink.
func countLines(top, rel string) int {
	f, err := safepath.OpenFile(top, rel, os.O_RDONLY, 0)
	if err != nil {
		return -1
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, DiffFileBytes+1))
	if err != nil || len(data) > DiffFileBytes || bytes.IndexByte(data, 0) >= 0 {
		return -1
	}
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// gitCapped runs git in dir like gitQuery (no optional locks, bounded by
// diffTimeout) keeping at most limit bytes of its output, untrimmed; past
// them git is stopped and the bool is true.
func gitCapped(dir string, limit int, args ...string) ([]byte, bool, error) {
	r, err := gitenv.Run(context.Background(), gitenv.Call{
		Dir:     dir,
		Args:    append([]string{"-c", "core.quotePath=false"}, args...),
		Env:     []string{"GIT_OPTIONAL_LOCKS=0"},
		Timeout: diffTimeout,
		Limit:   limit,
	})
	if err != nil {
		return nil, false, err
	}
	return r.Out, r.Truncated, nil
}
