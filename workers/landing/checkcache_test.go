package landing

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/landing/gocache"
)

// TestMain lets the test binary serve as the cache program a check's go
// command starts.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "gocacheprog" {
		os.Exit(gocache.Main(os.Args[2:]))
	}
	cacheProgram = os.Executable
	os.Exit(m.Run())
}

// goModule is a repository holding a small Go module (package lib and
// its test) with var/ ignored; it returns the folder and the commit.
func goModule(t *testing.T) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	dir := fwtest.GitRepo(t)
	files := map[string]string{
		".gitignore":      "var/\n",
		"go.mod":          "module m\n\ngo 1.22\n",
		"lib/lib.go":      "package lib\n\nimport \"fmt\"\n\n// Greeting is what the honest build says.\nfunc Greeting() string { return fmt.Sprint(\"hon\", \"est\") }\n",
		"lib/lib_test.go": "package lib\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) { t.Log(\"says \" + Greeting()) }\n",
	}
	return dir, commitFiles(t, dir, files, "module")
}

func commitFiles(t *testing.T, dir string, files map[string]string, msg string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fwtest.GitOut(t, dir, "add", ".")
	fwtest.GitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", msg)
	return fwtest.GitOut(t, dir, "rev-parse", "HEAD")
}

// seedOperatorCache makes a stand-in for the operator's GOCACHE in a temp
// dir holding what go build and vet of a package importing fmt need (a
// check's test needs more: package testing's closure, which the trusted
// build compiles): the entries the real GOCACHE served such a run (copied,
// never linked), and what it had to build. Cheap when the real cache is
// warm; the real one is never written.
func seedOperatorCache(t *testing.T) string {
	t.Helper()
	op, private, dir := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module seed\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "seed.go"), []byte("package seed\n\nimport \"fmt\"\n\nvar S = fmt.Sprint(1)\n"), 0o644)
	real := operatorGoCache()
	used := filepath.Join(t.TempDir(), "used")
	self, _ := os.Executable()
	prog := self + " gocacheprog --write " + private + " --used " + used
	if real != "" {
		prog = self + " gocacheprog --read " + real + " --write " + private + " --used " + used
	}
	for _, argv := range [][]string{{"go", "vet", "./..."}, {"go", "build", "./..."}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOCACHEPROG="+prog, "GOCACHE="+t.TempDir(), "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("seeding the operator cache: %v\n%s", err, out)
		}
	}
	copyTree(t, private, op)
	f, _ := os.Open(used)
	if f != nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			_, action, _ := strings.Cut(sc.Text(), " ")
			copyEntry(t, real, op, action)
		}
	}
	return op
}

// copyEntry copies action's index line and body from one cmd/go cache
// folder to another.
func copyEntry(t *testing.T, from, to, action string) {
	idx := filepath.Join(action[:2], action+"-a")
	line, err := os.ReadFile(filepath.Join(from, idx))
	f := strings.Fields(string(line))
	if err != nil || len(f) != 5 {
		return
	}
	body := filepath.Join(f[2][:2], f[2]+"-d")
	for _, rel := range []string{body, idx} {
		data, err := os.ReadFile(filepath.Join(from, rel))
		if err != nil {
			return
		}
		os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(to, rel), data, 0o644)
	}
}

func copyTree(t *testing.T, from, to string) {
	out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput()
	if err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

// snapshot lists every file under dir with its size and content hash:
// any write shows (times are left out: the lander marks the trusted
// entries a check was served as used).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		sum := sha256.Sum256(data)
		lines = append(lines, fmt.Sprintf("%s %d %s", p, fi.Size(), hex.EncodeToString(sum[:8])))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// useOperatorCache points the lander's operator cache at dir for the test.
func useOperatorCache(t *testing.T, dir string) {
	old := operatorGoCache
	operatorGoCache = func() string { return dir }
	t.Cleanup(func() { operatorGoCache = old })
}

func needSandbox(t testing.TB) {
	t.Helper()
	if _, err := sandbox.ABI(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the sandbox tests, but %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
}

// trustBase builds commit's tree as the trusted side does and promotes it,
// as a landing of it would.
func trustBase(t *testing.T, dir string, checks []config.Check, commit string) {
	t.Helper()
	tree, err := TreeOf(dir, commit)
	if err != nil {
		t.Fatal(err)
	}
	startTrustedBuild(context.Background(), dir, checks, commit, tree)()
	if !exists(filepath.Join(stagingDir(dir, tree), doneName)) {
		log, _ := os.ReadFile(filepath.Join(dir, checksRel, tree, trustedLogName))
		t.Fatalf("the trusted build did not finish:\n%s", log)
	}
	if err := promoteTree(dir, tree); err != nil {
		t.Fatal(err)
	}
	if !exists(builtMark(dir, tree)) || exists(stagingDir(dir, tree)) {
		t.Fatalf("promotion left the mark %v, staging %v", exists(builtMark(dir, tree)), exists(stagingDir(dir, tree)))
	}
}

// poisoner is candidate A's test: it writes a trojan into every cache it
// can reach, keeping each body's size so cmd/go would take it, and asks
// the cache program to store forged entries into each read layer.
const poisoner = `package zevil

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func poison(root string) (wrote, denied int) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if f, err := os.Create(filepath.Join(filepath.Dir(p), "zz-trojan-a")); err == nil {
			f.Close()
		}
		if !strings.HasSuffix(p, "-d") {
			return nil
		}
		fi, _ := d.Info()
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			denied++
			return nil
		}
		f.WriteAt([]byte(strings.Repeat("TROJAN ", int(fi.Size()/7+1))[:fi.Size()]), 0)
		f.Close()
		wrote++
		return nil
	})
	return
}

// forge asks the cache program to put a trojan under every action of
// layer, written into layer itself.
func forge(layer string) (accepted int, err error) {
	words := strings.Fields(os.Getenv("GOCACHEPROG"))
	if len(words) == 0 {
		return 0, fmt.Errorf("no GOCACHEPROG")
	}
	cmd := exec.Command(words[0], "gocacheprog", "--write", layer)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	dec := json.NewDecoder(out)
	var res map[string]any
	dec.Decode(&res)
	body := []byte("TROJAN fmt")
	sum := sha256.Sum256(body)
	n := 0
	filepath.WalkDir(layer, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, "-a") {
			return nil
		}
		var action [32]byte
		fmt.Sscanf(filepath.Base(p), "%64x", &action)
		n++
		req, _ := json.Marshal(map[string]any{"ID": n, "Command": "put", "ActionID": action[:], "OutputID": sum[:], "BodySize": len(body)})
		fmt.Fprintf(in, "%s\n\"%s\"\n", req, base64.StdEncoding.EncodeToString(body))
		var r struct{ Err string }
		if dec.Decode(&r) == nil && r.Err == "" {
			accepted++
		}
		return nil
	})
	in.Close()
	cmd.Wait()
	return accepted, nil
}

func TestPoison(t *testing.T) {
	prog := os.Getenv("GOCACHEPROG")
	private := ""
	if i := strings.Index(prog, "--write "); i >= 0 {
		private = strings.Fields(prog[i:])[1]
	}
	for _, root := range []struct{ name, dir string }{
		{"gocache", os.Getenv("GOCACHE")}, {"private", private}, {"trusted", os.Getenv("TRUSTED")},
		{"staging", os.Getenv("STAGING")}, {"operator", os.Getenv("OPERATOR")},
	} {
		wrote, denied := poison(root.dir)
		t.Logf("%s: wrote %d, denied %d", root.name, wrote, denied)
	}
	for _, layer := range []string{"trusted", "operator", "staging"} {
		n, err := forge(os.Getenv(strings.ToUpper(layer)))
		t.Logf("forged puts into %s accepted: %d (%v)", layer, n, err)
	}
}
`

// TestCheckCachePoisoning: candidate A's test writes a trojan into every
// cache it can reach (its GOCACHE, its private layer, the trusted layer,
// the staging layers, the operator's cache) and asks the cache program to
// store forged entries for every action of the read layers, fmt's among
// them. Candidate B's check then builds and tests lib as honestly as
// ever, warm from the trusted layer, and no check changed a file of the
// trusted layer or of the operator's cache. With a shared writable cache
// B's `go test` reads A's trojan (docs/landing.md says how that was
// seen).
func TestCheckCachePoisoning(t *testing.T) {
	needSandbox(t)
	dir, base := goModule(t)
	useOperatorCache(t, seedOperatorCache(t))
	op := operatorGoCache()
	test := config.Check{Name: "test", Run: []string{"go", "test", "-p", "1", "-v", "./..."}, Timeout: 5 * time.Minute,
		Env: map[string]string{"TRUSTED": trustedDir(dir), "OPERATOR": op, "STAGING": filepath.Join(dir, gocacheRel, "staging"), "GOFLAGS": ""}}
	checks := []config.Check{test}
	trustBase(t, dir, checks, base)
	trustedBefore, opBefore := snapshot(t, trustedDir(dir)), snapshot(t, op)
	if n := strings.Count(trustedBefore, "-d "); n < 2 {
		t.Fatalf("the trusted build of the base left %d bodies in the trusted layer:\n%s", n, trustedBefore)
	}

	a := commitFiles(t, dir, map[string]string{"zevil/zevil_test.go": poisoner}, "A")
	got, _ := runOK(t, dir, checks, a)
	logA, _ := os.ReadFile(got[0].Log)
	if got[0].Result != Pass || !strings.Contains(string(logA), "private: wrote") {
		t.Fatalf("A's check: %+v\n%s", got[0], logA)
	}
	for _, want := range []string{"trusted: wrote 0,", "operator: wrote 0,", "staging: wrote 0,", "into trusted accepted: 0", "into operator accepted: 0"} {
		if !strings.Contains(string(logA), want) {
			t.Errorf("A's log lacks %q:\n%s", want, logA)
		}
	}
	fwtest.GitOut(t, dir, "checkout", "-q", base)
	b := commitFiles(t, dir, map[string]string{"README": "B\n"}, "B")
	got, _ = runOK(t, dir, checks, b)
	logB, _ := os.ReadFile(got[0].Log)
	if got[0].Result != Pass || !strings.Contains(string(logB), "says honest") || strings.Contains(string(logB), "TROJAN") {
		t.Fatalf("B's check saw the trojan: %+v\n%s", got[0], logB)
	}
	t.Logf("A's check: %s; B's check: %s", lastLine(logA), lastLine(logB))
	if !strings.Contains(string(logB), "from the trusted layer") {
		t.Errorf("B's check was not served from the trusted layer:\n%s", logB)
	}
	if trustedBefore != snapshot(t, trustedDir(dir)) {
		t.Errorf("a check changed the trusted layer")
	}
	if opBefore != snapshot(t, op) {
		t.Errorf("a check changed the operator's cache")
	}
}

// TestUncontainedCheckGetsNoLayers: with sandbox: off a go check keeps
// an empty private cache, and its log says why.
func TestUncontainedCheckGetsNoLayers(t *testing.T) {
	dir, commit := goModule(t)
	observed(t, dir)
	c := config.Check{Name: "env", Run: []string{"go", "env", "GOCACHEPROG"}, Timeout: time.Minute}
	got, _ := runOK(t, dir, []config.Check{c}, commit)
	log, _ := os.ReadFile(got[0].Log)
	if got[0].Result != Pass || strings.Contains(string(log), "gocacheprog") || !strings.Contains(string(log), "not contained here, so this check's Go build cache starts empty") {
		t.Errorf("uncontained go check: %+v\n%s", got[0], log)
	}
}

func TestTrustedBuilds(t *testing.T) {
	ch := func(argv ...string) config.Check { return config.Check{Name: "c", Run: argv} }
	got := trustedBuilds([]config.Check{ch("go", "test", "-count=1", "./..."), ch("go", "vet", "./..."), ch("make"),
		ch("go", "test", "-exec", "sudo", "./..."), ch("go", "test", "-fuzz=F"), ch("go", "build", "-toolexec=./wrap", "./..."),
		{Name: "c", Run: []string{"go", "vet", "./..."}, Env: map[string]string{"GOFLAGS": "-mod=mod -toolexec=./wrap"}},
		ch("/usr/bin/go", "build", "./...")}, false)
	var lines []string
	for _, c := range got {
		lines = append(lines, strings.Join(c.Run, " "))
	}
	want := "go test -exec=/bin/true -count=1 ./...|go vet ./...|/usr/bin/go build ./..."
	if strings.Join(lines, "|") != want {
		t.Errorf("trusted builds %q, want %q", strings.Join(lines, "|"), want)
	}
	if got := trustedBuilds([]config.Check{ch("make")}, true); len(got) != 2 || got[1].Run[2] != "-exec=/bin/true" {
		t.Errorf("no go check, a go.mod: %v", got)
	}
	if got := trustedBuilds([]config.Check{ch("make")}, false); len(got) != 0 {
		t.Errorf("no go check, no go.mod: %v", got)
	}
}

func TestQuoteWords(t *testing.T) {
	got, err := quoteWords([]string{"/a b/fleetwatch", "gocacheprog", "--read", "/it's", "--write", "/plain"})
	if err != nil || got != `'/a b/fleetwatch' gocacheprog --read "/it's" --write /plain` {
		t.Errorf("quoteWords: %q, %v", got, err)
	}
	if _, err := quoteWords([]string{`/a'"b`}); err == nil {
		t.Error("a path with both quotes was quoted")
	}
}

// TestCheckCacheFolders: a check's cache: folder is copied into its temp
// dir; what it writes there stays private.
func TestCheckCacheFolders(t *testing.T) {
	dir, commit := checksRepo(t)
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "pkg.tgz"), []byte("cached"), 0o644)
	c := shCheck("npm", `cat "$npm_config_cache/pkg.tgz" && echo changed > "$npm_config_cache/pkg.tgz" && echo new > "$npm_config_cache/new"`)
	c.Cache = map[string]string{"npm_config_cache": src}
	got, _ := runOK(t, dir, []config.Check{c}, commit)
	log, _ := os.ReadFile(got[0].Log)
	if got[0].Result != Pass || !strings.HasPrefix(string(log), "cached") {
		t.Errorf("check with cache: %+v\n%s", got[0], log)
	}
	if data, _ := os.ReadFile(filepath.Join(src, "pkg.tgz")); string(data) != "cached" || exists(filepath.Join(src, "new")) {
		t.Errorf("the check wrote the operator's folder: %q", data)
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// TestAddsDependencies: only a change that may need a package the
// parent's trusted build did not compile gets a trusted build of its own.
func TestAddsDependencies(t *testing.T) {
	dir, _ := goModule(t)
	for _, c := range []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"a README", map[string]string{"README": "x\n"}, false},
		{"a body, same imports", map[string]string{"lib/lib.go": "package lib\n\nimport \"fmt\"\n\n// Greeting is what the honest build says.\nfunc Greeting() string { return fmt.Sprint(\"hon\", \"est\", \"\") }\n"}, false},
		{"an import", map[string]string{"lib/lib.go": "package lib\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\nvar _ = http.StatusOK\n\nfunc Greeting() string { return fmt.Sprint(\"honest\") }\n"}, true},
		{"a new Go file importing what its folder did", map[string]string{"lib/more.go": "package lib\n\nimport \"fmt\"\n\nvar _ = fmt.Sprint\n"}, false},
		{"a new Go file importing more", map[string]string{"lib/more2.go": "package lib\n\nimport \"os\"\n\nvar _ = os.Getpid\n"}, true},
		{"a new package importing anything", map[string]string{"other/o.go": "package other\n\nimport \"fmt\"\n\nvar _ = fmt.Sprint\n"}, true},
		{"go.mod", map[string]string{"go.mod": "module m\n\ngo 1.23\n"}, true},
		{"a file that does not parse", map[string]string{"lib/lib.go": "package lib\n\nimport (\n"}, true},
	} {
		commit := commitFiles(t, dir, c.files, c.name)
		if got := addsDependencies(dir, commit); got != c.want {
			t.Errorf("%s: addsDependencies = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestUsedFileFIFO: a check that leaves a FIFO (or a symlink) where its
// go commands note what they were served does not hang the runner.
func TestUsedFileFIFO(t *testing.T) {
	needSandbox(t)
	dir, commit := checksRepo(t)
	c := shCheck("fifo", `mkfifo "$TMPDIR/gocache-used.txt" && echo made`)
	done := make(chan []CheckResult, 1)
	go func() { got, _ := runOK(t, dir, []config.Check{c}, commit); done <- got }()
	select {
	case got := <-done:
		if got[0].Result != Pass {
			t.Errorf("check: %+v", got[0])
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the runner hangs on the check's FIFO")
	}
}
