package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// handledFS is every filesystem right up to ABI 8 that changes something:
// reading and running are not handled at all (reads stay open, and a
// handled right costs a check on every open). Connecting to a Unix socket
// by path (ABI 9's "resolve unix") stays allowed too: a contained agent
// reaches its driver over one.
const handledFS = landlock.AccessFSSet(llsyscall.AccessFSResolveUnix-1) &^ readExec

// readExec are the rights left unhandled.
const readExec = landlock.AccessFSSet(llsyscall.AccessFSExecute | llsyscall.AccessFSReadFile | llsyscall.AccessFSReadDir)

// granted is what a writable folder allows: everything handled but making
// devices (a root agent's `mknod c 1 11` would write the kernel log) and
// ioctl on devices (TIOCSTI).
const granted = handledFS &^ landlock.AccessFSSet(llsyscall.AccessFSMakeChar|llsyscall.AccessFSMakeBlock|llsyscall.AccessFSIoctlDev)

// The main goroutine keeps the main thread for the life of the program
// (an init's lock carries over to main), so a goroutine that enters a
// domain never runs there: the main thread is the one every kill and
// ptrace of this process's pid names, and it must stay outside.
func init() { runtime.LockOSThread() }

// Start starts cmd. A goroutine locked to an OS thread of its own joins
// the run's v1 cgroups, drops every capability (bounding set included:
// capabilities are a thread's), sets no_new_privs (a setuid program gains
// nothing) and enters the domain on that thread alone, then forks cmd
// from it as the leader of a new session without a controlling terminal;
// the thread stays parked until release is called (after cmd has exited:
// a child's parent-death signal follows the thread that forked it) and
// then ends with its goroutine, never running anything else. Landlock is
// best effort by the kernel's ABI, never below minABI.
func (s Spawn) Start(cmd *exec.Cmd) (release func(), err error) {
	enter := func() error { return nil }
	if s.Policy != nil {
		if _, err := ABI(); err != nil {
			return nil, err
		}
		fd, flags, err := s.Policy.ruleset()
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		enter = func() error {
			if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
				return fmt.Errorf("landlock: %v", err)
			}
			return nil
		}
	}
	alone(cmd)
	if s.Group != nil {
		s.Group.Attach(cmd.SysProcAttr)
	}
	started, done := make(chan error, 1), make(chan struct{})
	tids := make(chan int, 1)
	go func() {
		// Never unlocked: the thread is the domain's and dies with this
		// goroutine; the runtime starts no thread from a locked one.
		runtime.LockOSThread()
		tid := unix.Gettid()
		tids <- tid
		if tid == unix.Getpid() {
			started <- errors.New("sandbox: refusing to confine the main thread")
			<-done
			return
		}
		started <- s.confine(cmd, tid, enter)
		<-done
	}()
	tid := <-tids
	err = <-started
	// The thread leaves the run's v1 groups at once: it is the driver's,
	// and must be neither counted, frozen nor killed with the run.
	s.Group.leaveV1(tid)
	var once sync.Once
	release = func() { once.Do(func() { close(done) }) }
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// confine runs on the locked thread tid, in order: it joins the run's v1
// groups, drops every capability, sets no_new_privs, enters the Landlock
// domain (enter) and starts cmd; it stops at the first step that fails.
func (s Spawn) confine(cmd *exec.Cmd, tid int, enter func() error) error {
	if err := s.Group.joinV1(tid); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %v", err)
	}
	if err := enter(); err != nil {
		return err
	}
	return cmd.Start()
}

// dropCapabilities empties the calling thread's bounding, ambient,
// inheritable, permitted and effective sets, so that nothing it starts —
// not a root agent, not a setuid program — holds a capability. A thread
// that holds none (not root) has nothing to drop.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %v", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("ambient capabilities: %v", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		for c := 0; c <= lastCap(); c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("capability bounding set: %v", err)
			}
		}
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %v", err)
	}
	return nil
}

// lastCap is the kernel's highest capability number.
var lastCap = sync.OnceValue(func() int {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n := 0
	for _, c := range data {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
})

// ruleset is p as a Landlock ruleset: writes, ports and scopes.
func (p Policy) ruleset() (fd int, flags uint32, err error) {
	rules, err := p.rules()
	if err != nil {
		return -1, 0, err
	}
	// One ruleset for paths, ports and scopes: every Landlock layer
	// denies "refer" unless it grants it. Binding stays open (an agent
	// serves on its port); connecting is what reaches the world.
	cfg := landlock.Config{HandledAccessFS: handledFS, Scoped: llsyscall.ScopeSignal | llsyscall.ScopeAbstractUnixSocket}
	if !p.OpenNetwork {
		cfg.HandledAccessNet = llsyscall.AccessNetConnectTCP
	}
	fd, flags, err = cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, fmt.Errorf("landlock: %v", err)
	}
	return fd, flags, nil
}

// rules grants writing the devices any program expects and p's paths,
// with neither ioctl on devices nor making them.
func (p Policy) rules() ([]landlock.Rule, error) {
	var dirs, files []string
	for _, w := range p.Write {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("writable path %q is not absolute", w)
		}
		fi, err := os.Stat(w)
		if err != nil {
			return nil, fmt.Errorf("writable path %s: %v", w, err)
		}
		if fi.IsDir() {
			dirs = append(dirs, w)
		} else {
			files = append(files, w)
		}
	}
	rules := []landlock.Rule{
		landlock.PathAccess(granted, deviceDirs...).IgnoreIfMissing(),
		landlock.PathAccess(fileRights, devices...).IgnoreIfMissing(),
	}
	if len(dirs) > 0 {
		rules = append(rules, landlock.PathAccess(granted, dirs...).WithRefer())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.PathAccess(fileRights, files...))
	}
	for _, port := range p.Connect {
		rules = append(rules, landlock.ConnectTCP(port))
	}
	return rules, nil
}

// fileRights are the rights that apply to a single file: writing and
// truncating it.
const fileRights = landlock.AccessFSSet(llsyscall.AccessFSWriteFile | llsyscall.AccessFSTruncate)
