// Package giteatest starts a real Gitea (v1.26.0, SQLite, loopback) for
// the tests of the Gitea forge client and of landing through it. It owns
// the binary's lookup, the server's app.ini and lifetime, and the setup a
// test needs on it: repositories, a second user who reviews, branch
// protection. Nothing here is built or fetched inside a test: a build
// takes minutes, so the binary is made once by hand (see Binary).
package giteatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
)

// Version is the Gitea the tests run; internal/tools/gitea pins it.
const Version = "v1.26.0"

// Server is one running Gitea.
type Server struct {
	URL      string // http://127.0.0.1:PORT, no trailing slash
	Admin    string // the admin's login
	Password string // the admin's password
	Token    string // an admin token with every scope
	Dir      string // its work dir: app.ini, data, repositories, log
	Log      string // its log file

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	stop sync.Once
}

// Binary is the gitea binary the tests run: $FLEETWATCH_GITEA, else the
// cached build. skip says how to make it when there is none.
func Binary() (path, skip string) {
	if p := os.Getenv("FLEETWATCH_GITEA"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("FLEETWATCH_GITEA=%s: %v", p, err)
		}
		return p, ""
	}
	cache, err := os.UserCacheDir()
	if err == nil {
		p := filepath.Join(cache, "fleetwatch-test", "gitea-"+Version)
		if _, err := os.Stat(p); err == nil {
			return p, ""
		}
		return "", fmt.Sprintf("no Gitea %s binary: build it once (about 5 minutes) with "+
			"`go build -C internal/tools/gitea -tags \"sqlite sqlite_unlock_notify\" -o %s code.gitea.io/gitea` "+
			"or set FLEETWATCH_GITEA", Version, p)
	}
	return "", "no Gitea binary: set FLEETWATCH_GITEA (no user cache dir: " + err.Error() + ")"
}

// need skips tb when there is no binary (or no Gitea sources for it to
// serve), or fails it in CI, where the forge tests must run.
func need(tb testing.TB) string {
	tb.Helper()
	bin, skip := Binary()
	if skip == "" {
		if _, err := staticRoot(); err != nil {
			skip = err.Error()
		}
	}
	if skip == "" {
		return bin
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("giteatest: " + strings.TrimPrefix(skip, "giteatest: "))
	}
	tb.Skip("giteatest: " + strings.TrimPrefix(skip, "giteatest: "))
	return ""
}

// Start runs a Gitea of tb's own, stopped when tb ends; its log is
// printed when tb failed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := need(tb)
	s, err := Launch(bin, tb.TempDir())
	if s != nil {
		tb.Cleanup(func() {
			s.Stop()
			if tb.Failed() {
				tb.Logf("gitea log (%s):\n%s", s.Log, s.LogTail(0))
			}
		})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

var shared struct {
	once sync.Once
	s    *Server
	err  error
}

// Shared is one Gitea for every test of the package that calls it,
// started by the first. It outlives them all: the process is killed
// when the test binary exits (see startProc), and its work dir is
// removed by the next run. Use one repository per test.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	bin := need(tb)
	shared.once.Do(func() {
		sweepStale()
		dir, err := os.MkdirTemp("", sharedPrefix+fmt.Sprint(os.Getpid())+"-")
		if err != nil {
			shared.err = err
			return
		}
		shared.s, shared.err = Launch(bin, dir)
	})
	if shared.err != nil {
		if shared.s != nil {
			tb.Logf("gitea log:\n%s", shared.s.LogTail(0))
		}
		tb.Fatal(shared.err)
	}
	s := shared.s
	from := s.logSize()
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("gitea log during %s (%s):\n%s", tb.Name(), s.Log, s.LogTail(from))
		}
	})
	return s
}

const sharedPrefix = "fleetwatch-giteatest-"

// sweepStale removes the work dirs of shared servers whose test binary
// is gone (their Gitea died with it).
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), sharedPrefix+"*"))
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(strings.TrimPrefix(filepath.Base(d), sharedPrefix), "%d-", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if !alive(pid) {
			os.RemoveAll(d)
		}
	}
}

// Launch starts bin with its work dir in dir, waits until it answers,
// and makes the admin and its token. On error the returned server (if
// any) is stopped but its log is kept for the caller to show.
func Launch(bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("giteatest: no loopback port: %v", err)
	}
	static, err := staticRoot()
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:      fmt.Sprintf("http://127.0.0.1:%d", port),
		Admin:    "fwadmin",
		Password: "fleetwatch-admin-pw",
		Dir:      dir,
		Log:      filepath.Join(dir, "log", "gitea.log"),
		done:     make(chan struct{}),
	}
	conf := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(conf, []byte(appIni(dir, port, static, runUser())), 0o600); err != nil {
		return nil, fmt.Errorf("giteatest: %v", err)
	}
	if err := s.startProc(bin, conf); err != nil {
		return nil, err
	}
	if err := s.waitHealthy(30 * time.Second); err != nil {
		s.Stop()
		return s, err
	}
	if err := s.makeAdmin(bin, conf); err != nil {
		s.Stop()
		return s, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// staticRoot is the Gitea module's source folder: a build without the
// bindata tag reads its templates and options from there.
func staticRoot() (string, error) {
	static.once.Do(func() { static.dir, static.err = findStaticRoot() })
	return static.dir, static.err
}

var static struct {
	once sync.Once
	dir  string
	err  error
}

func findStaticRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("giteatest: go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "code.gitea.io", "gitea@"+Version)
	if _, err := os.Stat(filepath.Join(dir, "options")); err != nil {
		return "", fmt.Errorf("giteatest: Gitea's sources are not in the module cache (%v): run `go mod download` in internal/tools/gitea", err)
	}
	return dir, nil
}

// runUser is this process's user name, which Gitea insists on.
func runUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// env is the environment every gitea process gets.
func (s *Server) env() []string {
	return append(os.Environ(),
		"GITEA_WORK_DIR="+s.Dir,
		"HOME="+s.Dir,
		// Gitea refuses root; the tests' machines often are.
		"GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true",
	)
}

func (s *Server) startProc(bin, conf string) error {
	cmd := exec.Command(bin, "web", "--config", conf, "--work-path", s.Dir)
	cmd.Dir = s.Dir
	cmd.Env = s.env()
	out, err := os.Create(filepath.Join(s.Dir, "stdout.log"))
	if err != nil {
		return fmt.Errorf("giteatest: %v", err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	setProcAttr(cmd)
	started := make(chan error, 1)
	go func() {
		// The thread that starts the process stays until it exits: the
		// kernel's parent-death signal follows that thread (Linux).
		lockThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			cmd.Wait()
		}
		out.Close()
		close(s.done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("giteatest: start %s: %v", bin, err)
	}
	s.cmd = cmd
	return nil
}

func (s *Server) waitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	c := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("giteatest: gitea exited while starting:\n%s", s.LogTail(0))
		default:
		}
		resp, err := c.Get(s.URL + "/api/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("giteatest: gitea at %s not healthy in %v:\n%s", s.URL, limit, s.LogTail(0))
}

// makeAdmin creates the admin with the CLI (the API has no user yet)
// and takes its token from the same command.
func (s *Server) makeAdmin(bin, conf string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "admin", "user", "create", "--config", conf, "--work-path", s.Dir,
		"--admin", "--username", s.Admin, "--password", s.Password, "--email", s.Admin+"@example.com",
		"--must-change-password=false", "--access-token", "--access-token-name", "fleetwatch-test",
		"--access-token-scopes", "all")
	cmd.Dir, cmd.Env = s.Dir, s.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("giteatest: gitea admin user create: %v\n%s", err, out)
	}
	const mark = "Access token was successfully created... "
	i := bytes.Index(out, []byte(mark))
	if i < 0 {
		return fmt.Errorf("giteatest: gitea admin user create printed no token:\n%s", out)
	}
	tok, _, _ := strings.Cut(string(out[i+len(mark):]), "\n")
	s.Token = strings.TrimSpace(tok)
	if s.Token == "" {
		return errors.New("giteatest: gitea admin user create printed an empty token")
	}
	return nil
}

// Stop kills the server's process group and waits for it.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.cmd == nil {
			return
		}
		killGroup(s.cmd)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	})
}

func (s *Server) logSize() int64 {
	fi, err := os.Stat(s.Log)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// maxLogShown bounds the log a failed test prints.
const maxLogShown = 64 << 10

// LogTail is the server's log from byte from on (its last 64 KiB), with
// what it printed to stdout/stderr when it logged nothing.
func (s *Server) LogTail(from int64) string {
	data, err := os.ReadFile(s.Log)
	if err != nil || int64(len(data)) <= from {
		data, _ = os.ReadFile(filepath.Join(s.Dir, "stdout.log"))
		from = 0
	}
	data = data[from:]
	if len(data) > maxLogShown {
		data = data[len(data)-maxLogShown:]
	}
	return string(data)
}

// Client is an SDK client as the admin.
func (s *Server) Client(tb testing.TB) *gitea.Client {
	tb.Helper()
	return s.ClientAs(tb, s.Token)
}

// ClientAs is an SDK client with token.
func (s *Server) ClientAs(tb testing.TB, token string) *gitea.Client {
	tb.Helper()
	c, err := gitea.NewClient(s.URL, gitea.SetToken(token), gitea.SetGiteaVersion(""))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
