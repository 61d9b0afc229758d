package contain

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A contained agent commits into a git store of its own, never into the
// project's: Landlock grants unlink and rename per folder, and the
// project's refs/heads/feature/ and objects/ folders are shared with every
// other plan's branch, so write access there would let an agent rewrite or
// delete what is not its own. The layout:
//
//   - GIT_DIR points at var/fleet/sandbox/<agent>/git, a git dir the driver
//     refills before each run: the keys of the project's config that say
//     how its repository is laid out and who commits (storeConfig; no
//     remote, credential or program), its branches and tags
//     as packed refs, the plan's branch as a loose ref and HEAD, the index
//     of the worktree, and an objects folder whose alternate is the
//     project's (read, never written); GIT_WORK_TREE is its worktree;
//   - the driver brings the plan's branch into the project after each turn
//     and at each heartbeat: it packs the objects the tip needs from the
//     agent's store into the project's, checks the tip is a commit, and
//     moves refs/heads/feature/<slug> with a compare-and-swap; when the run
//     ends it resets the worktree's own index to the branch.
//
// (GIT_COMMON_DIR beside the worktree's admin folder is not enough: git
// keeps refs in the common dir its commondir file names, whatever the
// variable says.) An agent that unsets the variables finds the project's
// store through its worktree's .git file and is refused there with EACCES.
type GitBox struct {
	Project string // the project's top folder
	Common  string // the project's git common dir
	Admin   string // the worktree's admin folder in common/worktrees/
	Wt      string // the worktree
	Store   string // the agent's own git dir
	Ref     string // refs/heads/feature/<slug>
}

// OpenGitBox prepares the agent's store for a run in worktree wt on
// branch ref (fully qualified). wt's admin folder is the one the project
// keeps for it (gitenv.WorktreeAdmin), never one the worktree's own .git
// file, the agent's to write, names alone.
func OpenGitBox(project, wt, store, ref string) (*GitBox, error) {
	admin, err := gitenv.WorktreeAdmin(wt)
	if err != nil {
		return nil, err
	}
	common := filepath.Dir(filepath.Dir(admin))
	b := &GitBox{Project: project, Common: common, Admin: admin, Wt: wt, Store: store, Ref: ref}
	if err := b.refill(); err != nil {
		return nil, fmt.Errorf("the agent's git store %s: %v", store, tree.ErrText(err))
	}
	return b, nil
}

// Bounds on what the driver reads of the agent's store and the worktree's
// index (gitenv.ReadFile: regular files only, never blocking).
const (
	maxRef    = 4 << 10
	maxPacked = 64 << 20
	maxIndex  = 1 << 30
)

// refill rewrites everything in the store but its objects, which may hold
// what the agent staged and has not committed yet.
func (b *GitBox) refill() error {
	if err := b.empty(); err != nil {
		return err
	}
	cfg, err := storeConfig(b.Project, filepath.Join(b.Common, "config"))
	if err != nil {
		return err
	}
	refs, err := tree.Git(b.Project, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/tags/", "refs/remotes/")
	if err != nil {
		return err
	}
	packed, tip := packRefs(refs, b.Ref)
	index, err := readIndex(filepath.Join(b.Admin, "index"))
	if err != nil {
		return err
	}
	files := map[string]string{
		"config":                  cfg,
		"HEAD":                    "ref: " + b.Ref + "\n",
		"packed-refs":             packed,
		"objects/info/alternates": filepath.Join(b.Common, "objects") + "\n",
	}
	if tip != "" {
		files[filepath.FromSlash(b.Ref)] = tip + "\n"
	}
	if data, err := os.ReadFile(filepath.Join(b.Common, "shallow")); err == nil {
		files["shallow"] = string(data)
	}
	if index != nil {
		files["index"] = string(index)
	}
	if err := writeFiles(b.Store, files); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(b.Store, "refs", "tags"), 0o755)
}

// packRefs are for-each-ref's lines refs as packed-refs, but ref's, whose
// commit is tip ("" when it has none).
func packRefs(refs, ref string) (packed, tip string) {
	var b strings.Builder
	for _, line := range strings.Split(refs, "\n") {
		id, name, ok := strings.Cut(line, " ")
		switch {
		case !ok:
		case name == ref:
			tip = id
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.String(), tip
}

// writeFiles writes each file (its path under dir) with its text.
func writeFiles(dir string, files map[string]string) error {
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// empty leaves nothing of the last run in the store but its objects: no
// index, no half-done merge or rebase, no hook or config of the agent's
// making; and its objects folder is a folder, not a link the driver would
// follow into another repository.
func (b *GitBox) empty() error {
	objects := filepath.Join(b.Store, "objects")
	if fi, err := os.Lstat(objects); err == nil && !fi.IsDir() {
		if err := os.Remove(objects); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(filepath.Join(objects, "info")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(objects, "info"), 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(b.Store)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == "objects" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(b.Store, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// storeKeys are the keys of the project's config an agent's git store
// gets: how the repository is laid out (its format, its extensions, how
// files are checked out and compared) and who commits. Nothing that names
// a remote or a URL (remote.*, url.*, http.*), a credential, a program
// (hooks, filters, drivers, sshCommand, editors, pagers, fsmonitor) or
// another file (include*): the store is the agent's, and so is anything
// its config would run or reveal.
var storeKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.symlinks": true,
	"core.ignorecase": true, "core.precomposeunicode": true, "core.protectntfs": true,
	"core.protecthfs": true, "core.logallrefupdates": true, "core.autocrlf": true,
	"core.eol": true, "core.safecrlf": true, "core.checkroundtripencoding": true,
	"core.quotepath": true, "core.abbrev": true, "core.compression": true,
	"core.loosecompression": true, "core.bigfilethreshold": true, "core.trustctime": true,
	"core.checkstat": true, "core.whitespace": true, "core.commentchar": true,
	"index.version": true, "i18n.commitencoding": true, "i18n.logoutputencoding": true,
	"user.name": true, "user.email": true, "author.name": true, "author.email": true,
	"committer.name": true, "committer.email": true,
}

// storeConfig is the agent's store's config: the project's config file at
// path (its own keys, no include followed) cut to storeKeys and every
// extensions.* key, each value quoted, with core.bare false.
func storeConfig(project, path string) (string, error) {
	r, err := gitenv.Run(context.Background(), gitenv.Call{
		Dir:  project,
		Args: []string{"config", "--file", path, "--no-includes", "--null", "--list"},
	})
	if err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	sections := map[string][]string{}
	for _, entry := range strings.Split(string(r.Out), "\x00") {
		key, value, _ := strings.Cut(entry, "\n")
		section, name, ok := strings.Cut(key, ".")
		if !ok || !plainName(section) || !plainName(name) || !storeKeys[key] && section != "extensions" || key == "core.bare" {
			continue
		}
		sections[section] = append(sections[section], "\t"+name+" = "+quoteConfig(value)+"\n")
	}
	sections["core"] = append(sections["core"], "\tbare = false\n")
	var b strings.Builder
	for _, section := range slices.Sorted(maps.Keys(sections)) {
		b.WriteString("[" + section + "]\n")
		for _, line := range sections[section] {
			b.WriteString(line)
		}
	}
	return b.String(), nil
}

// plainName is a config section or variable name without a subsection:
// letters, digits and '-'.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// quoteConfig is value as a double-quoted git config value.
func quoteConfig(value string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`)
	return `"` + r.Replace(value) + `"`
}

// readIndex reads the worktree's index, so what was staged stays staged;
// nil when there is none.
func readIndex(p string) ([]byte, error) {
	data, err := gitenv.ReadFile(p, maxIndex)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// Env points the agent's git at its own store and its worktree.
func (b *GitBox) Env() []string {
	return []string{"GIT_DIR=" + b.Store, "GIT_WORK_TREE=" + b.Wt}
}

// Writable is what the agent's git writes.
func (b *GitBox) Writable() []string { return []string{b.Store} }

// Settle resets the worktree's own index to its branch once the run is
// over (the agent staged and committed in its store's index), so the
// driver's next checkout there sees the worktree as it is.
func (b *GitBox) Settle() error {
	_, err := tree.Git(b.Wt, "reset", "-q")
	return err
}

// tip reads the branch's tip in the agent's store: a loose ref, else a
// packed one; "" when the agent deleted it. Only a plain object id counts.
func (b *GitBox) tip() (string, error) {
	data, err := gitenv.ReadFile(filepath.Join(b.Store, filepath.FromSlash(b.Ref)), maxRef)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(data))
		if !isObjectID(id) {
			return "", fmt.Errorf("%s in the agent's store is not an object id", b.Ref)
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	packed, err := readPacked(filepath.Join(b.Store, "packed-refs"))
	if err != nil {
		return "", err
	}
	return packed[b.Ref], nil
}

// readPacked reads a packed-refs file's "<id> <ref>" lines.
func readPacked(p string) (map[string]string, error) {
	data, err := gitenv.ReadFile(p, maxPacked)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		id, name, ok := strings.Cut(line, " ")
		if ok && isObjectID(id) {
			out[name] = id
		}
	}
	return out, nil
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Bring moves the project's branch to the agent's tip, with the objects it
// needs, when the agent moved it. It returns the new tip, or "" when there
// was nothing to bring.
func (b *GitBox) Bring(agent string) (string, error) {
	tip, err := b.tip()
	if err != nil || tip == "" {
		return "", err
	}
	old, _ := tree.Git(b.Project, "rev-parse", "--verify", "--quiet", b.Ref)
	if tip == old {
		return "", nil
	}
	revs := tip + "\n--not\n"
	if old != "" {
		revs += old + "\n"
	}
	pack := filepath.Join(b.Common, "objects", "pack", "pack")
	if err := b.packObjects(pack, revs); err != nil {
		return "", fmt.Errorf("bring %s from %s's store: %v", b.Ref, agent, err)
	}
	if kind, err := tree.Git(b.Project, "cat-file", "-t", tip); err != nil || kind != "commit" {
		return "", fmt.Errorf("bring %s from %s's store: %s is not a commit", b.Ref, agent, tip)
	}
	expect := old
	if expect == "" {
		expect = strings.Repeat("0", len(tip))
	}
	if _, err := tree.Git(b.Project, "update-ref", "-m", "fleetwatch: brought from "+agent+"'s contained worktree", b.Ref, tip, expect); err != nil {
		return "", err
	}
	return tip, nil
}

// packObjects packs the objects revs reach, reading the agent's store as
// an alternate of the project's, into the project's store.
func (b *GitBox) packObjects(base, revs string) error {
	_, err := gitenv.Run(context.Background(), gitenv.Call{
		Dir:   b.Project,
		Args:  []string{"pack-objects", "--revs", "-q", base},
		Env:   []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(b.Store, "objects")},
		Stdin: []byte(revs),
	})
	return err
}
