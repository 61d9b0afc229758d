package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// memTempEnv set to "disk" keeps a test binary's temporary folders where
// TMPDIR or the system says, for a run that wants the disk's behaviour.
const memTempEnv = "FLEETWATCH_TEST_TEMP"

// memTempRoot is the tmpfs most Linux systems mount for everyone.
const memTempRoot = "/dev/shm"

// memTempPrefix names the folders MemTemp makes there.
const memTempPrefix = "fwtest-" // short: screens under test show paths in it

// MemTemp, called first in a TestMain, points the test binary's
// temporary folder (TMPDIR: t.TempDir, os.MkdirTemp and every child
// process's) at a new folder on the tmpfs /dev/shm, and returns what
// removes it. On a disk mounted with discard, under other work, creating
// and removing a test's files and git repositories cost more than the
// test: the ui tests took 92 s with 33 s of kernel time on /tmp, 30 s and
// 6 s here. Nothing changes when TMPDIR is set already, when
// FLEETWATCH_TEST_TEMP=disk, off Linux, or when /dev/shm is missing, no
// tmpfs, or refuses to run programs (tests run scripts they write).
//
// Not for packages whose tests contain agents: the sandbox lets every
// agent write /dev/shm (scratch shared by the host), so a project there
// would be open to them.
func MemTemp() (cleanup func()) {
	nothing := func() {}
	if runtime.GOOS != "linux" || os.Getenv("TMPDIR") != "" || os.Getenv(memTempEnv) == "disk" || !isTmpfs(memTempRoot) {
		return nothing
	}
	pruneMemTemp()
	dir, err := os.MkdirTemp(memTempRoot, memTempPrefix)
	if err != nil {
		return nothing
	}
	// Like /tmp: other users' processes (tests run some as another
	// user) make their own folders here.
	if os.Chmod(dir, 0o1777) != nil || !runsPrograms(dir) {
		os.RemoveAll(dir)
		return nothing
	}
	os.Setenv("TMPDIR", dir)
	return func() {
		os.Unsetenv("TMPDIR")
		os.RemoveAll(dir)
	}
}

// tmpfsMagic is statfs's f_type of a tmpfs (linux/magic.h).
const tmpfsMagic = 0x01021994

func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && int64(st.Type) == tmpfsMagic
}

// runsPrograms reports whether a script written in dir can be run: a
// noexec mount cannot.
func runsPrograms(dir string) bool {
	p := filepath.Join(dir, "probe.sh")
	defer os.Remove(p)
	syscall.ForkLock.RLock()
	err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	syscall.ForkLock.RUnlock()
	return err == nil && exec.Command(p).Run() == nil
}

// pruneMemTemp removes what a test binary killed before its cleanup (a
// test timeout) left: the folders of ours older than a day, memory until
// the next boot otherwise.
func pruneMemTemp() {
	entries, _ := os.ReadDir(memTempRoot)
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !strings.HasPrefix(e.Name(), memTempPrefix) || time.Since(fi.ModTime()) < 24*time.Hour {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Getuid() {
			os.RemoveAll(filepath.Join(memTempRoot, e.Name()))
		}
	}
}
