// Package packagetest is the release as a user gets it: the release
// command builds this machine's packages, dpkg installs the .deb into a
// throwaway root, and what it installed runs (--version, doctor, the
// demo's first screen in tmux). It runs the installed binary, not this
// test binary, so it needs no TestMain of fwtest's.
package packagetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// buildWait bounds the release command: warm, it takes seconds; a cold
// build cache compiles fleetwatch static and the release program with
// nfpm, which took 2m40s on a two-core box loaded by other builds.
const buildWait = 6 * time.Minute

// need skips without tool on a developer's box; CI must have it.
func need(t *testing.T, tool, why string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("%s is not installed (%s)", tool, why)
		}
		t.Fatalf("CI is set but %s is not installed (%s); .ci/run installs what the tests need", tool, why)
	}
}

// The release builds a static, stamped binary and a .deb and an .rpm for
// this machine; dpkg installs the .deb into a throwaway root; the binary
// it installed says the version git describes, runs doctor in a fresh
// project and shows the demo's first screen, and its man pages and
// completions are where man and the shells look.
func TestReleaseDebInstallsAndRuns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("installing the .deb with dpkg --root needs root: run this test as root (CI does)")
	}
	need(t, "dpkg", "Debian's package tool installs the .deb")
	need(t, "go", "the release builds with go")
	need(t, "git", "the release's version is git describe's")
	need(t, "tmux", "the demo's first screen runs in tmux")
	mod := moduleRoot(t)
	want := gitDescribe(t, mod)
	dist := filepath.Join(t.TempDir(), "dist")
	start := time.Now()
	runIn(t, mod, buildWait, "go", "run", "./internal/release", "--targets", "linux/"+runtime.GOARCH, "--out", dist)
	t.Logf("release built in %v", time.Since(start).Round(time.Millisecond))

	checkSums(t, dist, 3)
	checkRPM(t, only(t, dist, "*.rpm"))
	bin := only(t, dist, "fleetwatch_*_linux_"+runtime.GOARCH)
	checkStatic(t, bin, mod)

	root := installDeb(t, only(t, dist, "*.deb"))
	checkInstalled(t, root)
	fw := filepath.Join(root, "usr", "bin", "fleetwatch")
	if out := runIn(t, t.TempDir(), 10*time.Second, fw, "--version"); out != "fleetwatch "+want+"\n" {
		t.Errorf("installed fleetwatch --version printed %q, want %q (git describe's, stamped)", out, "fleetwatch "+want+"\n")
	}
	checkDoctor(t, fw)
	checkDemo(t, fw)
}

// moduleRoot is the folder holding go.mod, above this package's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	gomod := strings.TrimSpace(runIn(t, ".", 30*time.Second, "go", "env", "GOMOD"))
	if gomod == "" || gomod == os.DevNull {
		t.Fatalf("go env GOMOD: %q", gomod)
	}
	return filepath.Dir(gomod)
}

func gitDescribe(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(runIn(t, dir, 30*time.Second, "git", "describe", "--tags", "--always", "--dirty"))
}

// runIn runs name args in dir within limit and returns its stdout,
// failing with its output when it does not exit 0.
func runIn(t *testing.T, dir string, limit time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// only is the one file in dir matching pattern.
func only(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) != 1 {
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("%s in the release: %d files, want 1 (the release holds %v)", pattern, len(m), names)
	}
	return m[0]
}

// checkSums reads SHA256SUMS: n files, every one in dist, each hash right.
func checkSums(t *testing.T, dist string, n int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("SHA256SUMS lists %d files, want %d:\n%s", len(lines), n, data)
	}
	for _, l := range lines {
		sum, name, ok := strings.Cut(l, "  ")
		f, err := os.ReadFile(filepath.Join(dist, name))
		if !ok || err != nil {
			t.Fatalf("SHA256SUMS line %q: %v", l, err)
		}
		if got := sha256.Sum256(f); hex.EncodeToString(got[:]) != sum {
			t.Errorf("SHA256SUMS says %s for %s, the file's is %x", sum, name, got)
		}
	}
}

// checkRPM: no rpm tool needed, the lead's magic and a size that holds
// the binary.
func checkRPM(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0xed, 0xab, 0xee, 0xdb}) || len(data) < 1<<20 {
		t.Errorf("%s: not an rpm (%d bytes, starts % x)", filepath.Base(p), len(data), data[:min(4, len(data))])
	}
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	if !strings.HasSuffix(p, "."+arch+".rpm") {
		t.Errorf("%s: not named for %s", filepath.Base(p), arch)
	}
}

// checkStatic: no program interpreter (CGO_ENABLED=0) and no build
// folder left in the binary (-trimpath).
func checkStatic(t *testing.T, bin, mod string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a dynamic loader: not static", filepath.Base(bin))
		}
	}
	data, _ := os.ReadFile(bin)
	if bytes.Contains(data, []byte(mod+"/")) {
		t.Errorf("%s holds the build folder %s: not built with -trimpath", filepath.Base(bin), mod)
	}
}

// installDeb installs deb with dpkg into a new root of its own and returns
// it. --force-depends: the root has no git package, the machine has git.
func installDeb(t *testing.T, deb string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, root, time.Minute, "dpkg", "--root="+root, "--force-depends", "-i", deb)
	if st := runIn(t, root, 10*time.Second, "dpkg", "--root="+root, "-s", "fleetwatch"); !strings.Contains(st, "Status: install ok installed") ||
		!strings.Contains(st, "Architecture: "+runtime.GOARCH) {
		t.Fatalf("dpkg -s fleetwatch in the new root:\n%s", st)
	}
	return root
}

// installed are files the .deb puts in place, each with a line it holds.
var installed = map[string]string{
	"usr/share/man/man1/fleetwatch.1.gz":                  `.TH "FLEETWATCH" "1"`,
	"usr/share/man/man1/fleetwatch-work-once.1.gz":        `\fB--max-plans\fP`,
	"usr/share/man/man1/fleetwatch-queue-land.1.gz":       `.SH SYNOPSIS`,
	"usr/share/bash-completion/completions/fleetwatch":    "complete -o default -F __start_fleetwatch fleetwatch",
	"usr/share/zsh/vendor-completions/_fleetwatch":        "#compdef fleetwatch",
	"usr/share/fish/vendor_completions.d/fleetwatch.fish": "complete -c fleetwatch",
	"usr/share/doc/fleetwatch/README.systemd":             "fleetwatch watch install",
}

func checkInstalled(t *testing.T, root string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(root, "usr/bin/fleetwatch"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("usr/bin/fleetwatch: %v, %v", fi, err)
	}
	for rel, line := range installed {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err == nil && strings.HasSuffix(rel, ".gz") {
			data, err = gunzip(data)
		}
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if !strings.Contains(string(data), line) {
			t.Errorf("%s lacks %q:\n%.600s", rel, line, data)
		}
	}
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// checkDoctor runs the installed doctor in a project it scaffolded: a
// line per check, git's ok, and no error (1, no endpoint on, is an answer).
func checkDoctor(t *testing.T, fw string) {
	t.Helper()
	dir := t.TempDir()
	runIn(t, dir, 10*time.Second, "git", "init", "-q")
	runIn(t, dir, 10*time.Second, fw, "scaffold")
	cmd := exec.Command(fw, "doctor")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code != 1 || !strings.Contains(string(out), "ok    git ") {
		t.Errorf("installed fleetwatch doctor: %v (exit %d)\n%s", err, code, out)
	}
}
