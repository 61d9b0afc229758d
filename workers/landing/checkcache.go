package landing

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/workers/landing/gocache"
)

// A check's build caches. A shared writable cache would let one
// candidate's test poison what the next one builds, so a check reads only
// caches that trusted work wrote and writes only its own:
//
//   - Go: its go command's GOCACHEPROG is this program's gocacheprog verb,
//     reading the trusted layer (var/fleet/checks/gocache/trusted, filled
//     only by promoting the lander's trusted builds of trees that landed:
//     compiled, never run) and the operator's own GOCACHE, and writing a
//     private layer in the check's temp dir, thrown away with it. Landlock
//     keeps both read layers read-only to the check and to the cache
//     program it starts (it runs inside the check's domain).
//   - Other toolchains: a check's `cache:` folders are copied into its
//     temp dir (cp -a --reflink=auto, never hardlinks, which would share
//     the operator's inodes) and the copy is thrown away.
//
// What the layers serve a check is the standard library and the
// module-cache dependencies: cmd/go's action ids hold a package's folder
// (without -trimpath), and each check has a worktree folder of its own,
// so the tree's own packages compile in every check, as in any fresh
// checkout. An uncontained check could write any layer, so it gets none.

// gocacheRel is where the trusted layer, the staging layers of trusted
// builds and the record of built trees live.
const gocacheRel = checksRel + "/gocache"

func trustedDir(project string) string {
	return filepath.Join(project, filepath.FromSlash(gocacheRel), "trusted")
}

func stagingDir(project, tree string) string {
	return filepath.Join(project, filepath.FromSlash(gocacheRel), "staging", tree)
}

// builtMark records that tree's trusted build reached the trusted layer.
func builtMark(project, tree string) string {
	return filepath.Join(project, filepath.FromSlash(gocacheRel), "trees", tree)
}

// cacheProgram is the fleetwatch binary a go command starts as its
// GOCACHEPROG: this program, when it is fleetwatch (whose gocacheprog verb
// serves it). Another program (a test binary of a package using landing)
// would not answer, so its checks keep an empty private cache
// (errNoCacheProgram); landing's own tests set their binary, whose
// TestMain serves the verb.
var cacheProgram = func() (string, error) {
	if bi, ok := debug.ReadBuildInfo(); !ok || bi.Path != mainPackage {
		return "", errNoCacheProgram
	}
	return os.Executable()
}

// mainPackage is fleetwatch's main package.
const mainPackage = "github.com/fleetwatch/fleetwatch"

var errNoCacheProgram = errors.New("this program is not fleetwatch")

// operatorGoCache is the operator's own GOCACHE, "" when go has none.
var operatorGoCache = sync.OnceValue(func() string {
	if d := os.Getenv("GOCACHE"); filepath.IsAbs(d) {
		return d
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if d := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(d) {
		return d
	}
	return ""
})

// usedName is a check's record, in its temp dir, of what its go commands
// were served from the read layers.
const usedName = "gocache-used.txt"

// goCache is what a contained process's go command is served: the
// read layers, and where it writes (its temp dir when write is "").
type goCache struct {
	reads []string
	write string
	used  string
}

// checkGoCache is a check's cache per s; nil when checks_cache is off.
func checkGoCache(project string, s config.Settings) *goCache {
	if s.ChecksCache.Off {
		return nil
	}
	reads := []string{trustedDir(project)}
	if op := operatorGoCache(); op != "" && !s.ChecksCache.NoOperator {
		reads = append(reads, op)
	}
	return &goCache{reads: reads}
}

// env is the GOCACHEPROG variable for a process whose temp dir is tmp.
func (c *goCache) env(tmp string) ([]string, error) {
	self, err := cacheProgram()
	if errors.Is(err, errNoCacheProgram) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot find this program for GOCACHEPROG: %v", err)
	}
	write, used := c.write, c.used
	if write == "" {
		write, used = filepath.Join(tmp, "gocache"), filepath.Join(tmp, usedName)
	}
	words := []string{self, "gocacheprog"}
	for _, r := range c.reads {
		words = append(words, "--read", r)
	}
	words = append(words, "--write", write)
	if used != "" {
		words = append(words, "--used", used)
	}
	v, err := quoteWords(words)
	if err != nil {
		return nil, err
	}
	return []string{"GOCACHEPROG=" + v}, nil
}

// quoteWords joins words the way cmd/go's quoted.Split reads them back: a
// word with a space in single quotes, or double ones when it holds a
// single quote.
func quoteWords(words []string) (string, error) {
	out := make([]string, len(words))
	for i, w := range words {
		switch {
		case !strings.ContainsAny(w, " \t\n\r'\""):
			out[i] = w
		case !strings.Contains(w, "'"):
			out[i] = "'" + w + "'"
		case !strings.Contains(w, `"`):
			out[i] = `"` + w + `"`
		default:
			return "", fmt.Errorf("path %q holds both kinds of quotes: GOCACHEPROG cannot name it", w)
		}
	}
	return strings.Join(out, " "), nil
}

// usedSummary is the log line saying how many entries a check's go
// commands took from each read layer (from its used file), "" for none.
func (c *goCache) usedSummary(tmp string) string {
	if c == nil || c.write != "" {
		return ""
	}
	// The check could have put a FIFO or a symlink there.
	f, err := gocache.OpenUsed(filepath.Join(tmp, usedName))
	if err != nil {
		return ""
	}
	defer f.Close()
	seen := map[string]bool{}
	counts := map[string]int{}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	for sc.Scan() {
		if n, _, ok := strings.Cut(sc.Text(), " "); ok && !seen[sc.Text()] {
			seen[sc.Text()] = true
			counts[n]++
		}
	}
	names := []string{"the trusted layer", "the operator's GOCACHE"}
	var parts []string
	for i, name := range names {
		if n := counts[fmt.Sprint(i)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d from %s", n, name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Go build cache: " + strings.Join(parts, ", ")
}

// copyCaches gives each of c's `cache:` variables a private copy of its
// folder under tmp (an empty folder when it does not exist), and returns
// the environment naming them.
func copyCaches(c map[string]string, tmp string, log io.Writer) []string {
	names := make([]string, 0, len(c))
	for k := range c {
		names = append(names, k)
	}
	sort.Strings(names)
	var env []string
	for _, name := range names {
		src := c[name]
		if rest, ok := strings.CutPrefix(src, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			src = filepath.Join(home, rest)
		}
		dst := filepath.Join(tmp, "cache-"+name)
		if fi, err := os.Stat(src); err == nil && fi.IsDir() {
			// Never hardlinks: a link in the writable copy would write the
			// operator's own file.
			args := []string{"-a", "--reflink=auto", src + "/.", dst}
			if runtime.GOOS == "darwin" {
				args = []string{"-pPR", src + "/.", dst}
			}
			if out, err := exec.Command("cp", args...).CombinedOutput(); err != nil {
				fmt.Fprintf(log, "fleetwatch: cache %s: could not copy %s (%v: %s); it starts empty\n", name, src, err, strings.TrimSpace(string(out)))
				os.RemoveAll(dst)
			}
		}
		_ = os.MkdirAll(dst, 0o755)
		env = append(env, name+"="+dst)
	}
	return env
}
