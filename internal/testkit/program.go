package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BuildProgram builds the main package pkg (an import path, or a folder
// relative to the calling test's package) into a new folder of its own as
// name (pkg's last element when "") and returns the binary's path; the
// caller removes filepath.Dir of it.
//
// `go build -o` relinks whenever its output is new, which cost a second
// of CPU per helper program per test binary (fifteen packages build the
// fake agent alone). So the build goes to one place per source folder in
// the user's cache, where go build finds its earlier output up to date
// and links nothing; go build's own check (the binary's build ID against
// today's sources, flags and toolchain) decides, not this code. A lock
// file serialises builds into that place across test binaries, and the
// caller gets a hard link (a copy across file systems) made under it: go
// build replaces the cached file by a new one, never the caller's.
func BuildProgram(pkg, name string) (string, error) {
	if name == "" {
		name = filepath.Base(pkg)
	}
	out, err := os.MkdirTemp("", "fleetwatch-prog-")
	if err != nil {
		return "", err
	}
	builtDirs.Store(out, true)
	bin := filepath.Join(out, name)
	if err := buildCached(pkg, bin); err != nil {
		os.RemoveAll(out)
		return "", err
	}
	return bin, nil
}

// builtDirs are the folders BuildProgram made, for RemovePrograms.
var builtDirs sync.Map

// RemovePrograms removes what BuildProgram built in this process (the
// cache stays): a test binary's TestMain calls it when done.
func RemovePrograms() {
	builtDirs.Range(func(dir, _ any) bool {
		os.RemoveAll(dir.(string))
		builtDirs.Delete(dir)
		return true
	})
}

// buildCached is go build of pkg into its place in the cache and a link
// of it at dst, both under the place's lock (another test binary's build
// may replace the file next, and go build may write it in place); with
// no cache folder (no $HOME), in a folder of its own.
func buildCached(pkg, dst string) error {
	dir, err := programCacheDir(pkg)
	if err != nil {
		if dir, err = os.MkdirTemp("", "fleetwatch-prog-build-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %v", lock.Name(), err)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	now := time.Now()
	os.Chtimes(dir, now, now) // in use: pruneProgramCache keeps it
	return linkOrCopy(bin, dst)
}

// programCacheDir is the place pkg is built into: one per module folder
// and package, so worktrees of one module do not take turns relinking
// into one file.
func programCacheDir(pkg string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	key := moduleRoot(wd) + "\x00" + pkg
	if strings.HasPrefix(pkg, ".") {
		key = filepath.Join(wd, pkg)
	}
	sum := sha256.Sum256([]byte(key))
	root := filepath.Join(base, "fleetwatch-test", "programs")
	dir := filepath.Join(root, filepath.Base(pkg)+"-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	pruneProgramCache(root, dir)
	return dir, nil
}

// moduleRoot is the nearest folder at or above dir holding go.mod (dir
// itself when none does): an import path means the same package there.
func moduleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// programCacheAge is how long a place unused keeps its binary: worktrees
// come and go, and each leaves one binary per helper program.
const programCacheAge = 7 * 24 * time.Hour

// pruneProgramCache removes places under root unused for programCacheAge,
// except keep. A place removed while another test binary builds into it
// only costs that build a relink.
func pruneProgramCache(root, keep string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if fi, err := e.Info(); err == nil && p != keep && time.Since(fi.ModTime()) > programCacheAge {
			os.RemoveAll(p)
		}
	}
}

// linkOrCopy puts src's contents at dst, a new file. A copy's write
// descriptor is open only while no fork can happen (as WriteScript's).
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
