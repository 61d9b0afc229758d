package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
)

// plan is what one release builds.
type plan struct {
	out     string // the folder written
	targets []target
	version string // "" for git describe's
}

// build writes the release into p.out and returns the files it wrote, the
// checksums last.
func build(ctx context.Context, p plan) ([]string, error) {
	root, err := goOutput(ctx, "", "env", "GOMOD")
	if err != nil || root == "" || root == os.DevNull {
		return nil, fmt.Errorf("no Go module here: run it from fleetwatch's checkout (go env GOMOD: %q %v)", root, err)
	}
	root = filepath.Dir(root)
	st, err := stampOf(ctx, root, p.version)
	if err != nil {
		return nil, err
	}
	out, err := filepath.Abs(p.out)
	if err != nil {
		return nil, err
	}
	if err := freshOut(out); err != nil {
		return nil, err
	}
	var files []string
	bins := map[target]string{}
	for _, t := range p.targets {
		bin := filepath.Join(out, fmt.Sprintf("fleetwatch_%s_%s_%s", st.pkgVersion, t.os, t.arch))
		if err := goBuild(ctx, root, t, st, bin); err != nil {
			return nil, err
		}
		bins[t] = bin
		files = append(files, bin)
	}
	pkgs, err := packageAll(ctx, root, out, st, p.targets, bins)
	if err != nil {
		return nil, err
	}
	files = append(files, pkgs...)
	sums, err := writeSums(out, files)
	if err != nil {
		return nil, err
	}
	return append(files, sums), nil
}

// stamp is the version a release carries, in the forms its parts need.
type stamp struct {
	version    string    // stamped into the binary: v1.2.0-3-g1a2b3c4
	pkgVersion string    // the packages' and file names': 1.2.0+3.g1a2b3c4
	variable   string    // the -X variable: <module>/ui/cli.stamp
	date       time.Time // the commit's time: the packages' and man pages' dates
}

// stampOf works out the release's version (given, else git describe's),
// its packages' spelling, the variable it is stamped into and its date.
func stampOf(ctx context.Context, root, given string) (stamp, error) {
	st := stamp{version: given}
	if st.version == "" {
		r, err := gitenv.Run(ctx, gitenv.Call{Dir: root, Args: []string{"describe", "--tags", "--always", "--dirty"}})
		if err != nil {
			return st, fmt.Errorf("git describe in %s: %v (or pass --version)", root, err)
		}
		st.version = r.Text()
	}
	var err error
	if st.pkgVersion, err = packageVersion(st.version); err != nil {
		return st, err
	}
	pkg, err := goOutput(ctx, root, "list", "-f", "{{.ImportPath}}", "./ui/cli")
	if err != nil {
		return st, err
	}
	st.variable = pkg + ".stamp"
	st.date, err = sourceDate(ctx, root)
	return st, err
}

// sourceDate is $SOURCE_DATE_EPOCH, else the last commit's time: a release
// rebuilt from one commit carries the same dates.
func sourceDate(ctx context.Context, root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		r, err := gitenv.Run(ctx, gitenv.Call{Dir: root, Args: []string{"log", "-1", "--format=%ct"}})
		if err != nil {
			return time.Time{}, fmt.Errorf("the last commit's date in %s: %v", root, err)
		}
		s = r.Text()
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("source date %q: not seconds since 1970", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// freshOut makes dir an empty folder. One holding only what a release
// writes (fleetwatch* and SHA256SUMS) is emptied; anything else there is
// left alone and refused.
func freshOut(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return fmt.Errorf("--out %s: %v", dir, err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "fleetwatch") && e.Name() != sumsName {
			return fmt.Errorf("--out %s holds %s, which no release wrote: name another folder", dir, e.Name())
		}
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// goBuild builds fleetwatch for t into bin: static, no build paths, the
// version stamped, symbols stripped.
func goBuild(ctx context.Context, root string, t target, st stamp, bin string) error {
	ldflags := "-s -w -X " + st.variable + "=" + st.version
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(goEnv(), "CGO_ENABLED=0", "GOOS="+t.os, "GOARCH="+t.arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %v\n%s", t, err, out)
	}
	return nil
}

// hostTarget is the platform this program runs on, whose binary can run
// here to write the man pages and completions.
func hostTarget() target { return target{runtime.GOOS, runtime.GOARCH} }

// goOutput is `go args` run in dir, its output trimmed.
func goOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// goEnv is this environment without the variables a build sets per target.
func goEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "GOOS" || k == "GOARCH" || k == "CGO_ENABLED"
	})
}
