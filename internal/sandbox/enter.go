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

// The main goroutine keeps the main thread for the life of the program
// (an init's lock carries over to main), so a goroutine that enters a
// domain never runs there: the main thread is the one every kill and
// ptrace of this process's pid names, and it must stay outside.
func init() { runtime.LockOSThread() }

// Start starts cmd inside p's domain. A goroutine locked to an OS thread
// of its own sets no_new_privs and enters the domain on that thread alone,
// then starts cmd from it; the thread stays parked until release is
// called (after cmd has exited: a child's parent-death signal follows the
// thread that forked it) and then ends with its goroutine, never running
// anything else. Best effort by the kernel's ABI, never below minABI.
func (p Policy) Start(cmd *exec.Cmd) (release func(), err error) {
	if _, err := ABI(); err != nil {
		return nil, err
	}
	rules, err := p.rules()
	if err != nil {
		return nil, err
	}
	// One ruleset for paths, ports and scopes: every Landlock layer
	// denies "refer" unless it grants it. Binding stays open (an agent
	// serves on its port); connecting is what reaches the world.
	cfg := landlock.Config{HandledAccessFS: handledFS, Scoped: llsyscall.ScopeSignal | llsyscall.ScopeAbstractUnixSocket}
	if !p.OpenNetwork {
		cfg.HandledAccessNet = llsyscall.AccessNetConnectTCP
	}
	cfg = cfg.BestEffort()
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return nil, fmt.Errorf("landlock: %v", err)
	}
	defer unix.Close(fd)
	started, done := make(chan error, 1), make(chan struct{})
	go func() {
		// Never unlocked: the thread is the domain's and dies with this
		// goroutine; the runtime starts no thread from a locked one.
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			started <- errors.New("sandbox: refusing to confine the main thread")
			<-done
			return
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			started <- fmt.Errorf("no_new_privs: %v", err)
			return
		}
		if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
			started <- fmt.Errorf("landlock: %v", err)
			return
		}
		err := cmd.Start()
		started <- err
		if err == nil {
			<-done
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }, nil
}

// rules grants writing the devices any program expects and p's paths.
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
		landlock.RWDirs(deviceDirs...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(dirs) > 0 {
		rules = append(rules, landlock.RWDirs(dirs...).WithRefer())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.RWFiles(files...))
	}
	for _, port := range p.Connect {
		rules = append(rules, landlock.ConnectTCP(port))
	}
	return rules, nil
}
