package fwtest

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// UserEnv names a user the tests that run real agents also run fleetwatch
// as when they run as root (`.ci/run` creates it): most VMs run agents as
// root, most laptops as somebody else, and each fails its own way.
const UserEnv = "FLEETWATCH_TEST_USER"

// User is someone other than the tester to run fleetwatch as.
type User struct {
	Name     string
	Uid, Gid int
	Home     string
}

// Users are who a test runs fleetwatch as: the tester (nil) and, when the
// tester is root and $FLEETWATCH_TEST_USER names a user, that user. In CI
// as root the user must exist.
func Users(t testing.TB) []*User {
	t.Helper()
	who := []*User{nil}
	name := os.Getenv(UserEnv)
	if os.Geteuid() != 0 || name == "" {
		if os.Geteuid() == 0 && os.Getenv("CI") != "" {
			t.Fatalf("CI runs as root, so it runs the agents as a user too, but $%s names none", UserEnv)
		}
		return who
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("$%s: %v", UserEnv, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return append(who, &User{Name: name, Uid: uid, Gid: gid, Home: u.HomeDir})
}

// Label is how a subtest names u.
func (u *User) Label() string {
	if u == nil {
		if os.Geteuid() == 0 {
			return "root"
		}
		return "tester"
	}
	return u.Name
}

// RunAs is RunEnv as u (nil: the tester). dir and home, the folders the run
// works in, are u's while it runs and the tester's again after, so the
// test reads them with its own git.
func RunAs(t testing.TB, u *User, dir string, env []string, args ...string) Result {
	t.Helper()
	if u == nil {
		return RunEnv(t, dir, env, args...)
	}
	owned := []string{dir}
	for _, kv := range env {
		if v, ok := bytes.CutPrefix([]byte(kv), []byte("HOME=")); ok {
			owned = append(owned, string(v))
		}
	}
	for _, p := range owned {
		chownTree(t, p, u.Uid, u.Gid)
		reachable(t, p)
	}
	defer func() {
		for _, p := range owned {
			chownTree(t, p, os.Getuid(), os.Getgid())
		}
	}()
	cmd := Cmd(dir, append([]string{"USER=" + u.Name, "LOGNAME=" + u.Name}, env...), args...)
	cmd.Path = sharedExe(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.Uid), Gid: uint32(u.Gid)}}
	return runCmd(t, cmd, args)
}

func runCmd(t testing.TB, cmd *exec.Cmd, args []string) Result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = -int(ws.Signal()) // killed: minus the signal number
		}
	} else if err != nil {
		t.Fatalf("fleetwatch %v: %v", args, err)
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

func chownTree(t testing.TB, root string, uid, gid int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reachable lets everyone through the folders above p in the temporary
// folder (a test's own folders are private).
func reachable(t testing.TB, p string) {
	t.Helper()
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Dir(p); len(d) > len(tmp) && filepath.Dir(d) != d; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o011); err != nil {
			t.Fatal(err)
		}
	}
}

var shared struct {
	once sync.Once
	path string
	err  error
}

// sharedExe is a copy of the test binary another user can run (the build
// cache's folders are private); removed with the programs Program built.
func sharedExe(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "fleetwatch-exe-")
		if err != nil {
			shared.err = err
			return
		}
		os.Chmod(dir, 0o755)
		programDirs.Store(dir, true)
		shared.path = filepath.Join(dir, "fleetwatch")
		shared.err = copyExe(Exe(t), shared.path)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.path
}

func copyExe(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
