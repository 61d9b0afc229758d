package egresstest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

func hostile(t *testing.T) string { return fwtest.Program(t, "./testdata/hostile") }

// listener counts the connections a network address accepts.
type listener struct {
	net.Listener
	accepted atomic.Int32
}

func listen(t *testing.T, network, addr string) *listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{Listener: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	return l
}

// allowedHost is an HTTP server on loopback, the one host the test's
// fleetwatch.yaml lets through by its address.
func allowedHost(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "allowed host says hi")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// gitRemote is a bare clone of dir served by `git daemon` on loopback with
// pushes enabled, as a fleet's remote is reachable: its URL.
func gitRemote(t *testing.T, dir string) (url, bare string) {
	t.Helper()
	base := t.TempDir()
	bare = filepath.Join(base, "remote.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", dir, bare).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "--git-dir", bare, "branch", "dev", "HEAD").CombinedOutput(); err != nil {
		t.Fatalf("the remote's dev: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	daemon := exec.Command("git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
		"--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", addr.Port), base)
	if err := daemon.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	exited := make(chan struct{})
	go func() { daemon.Wait(); close(exited) }()
	t.Cleanup(func() { daemon.Process.Kill(); <-exited })
	fwtest.WaitFor(t, "git daemon to listen", 5*time.Second, func() bool {
		select {
		case <-exited:
			t.Fatalf("git daemon exited: %v", daemon.ProcessState)
		default:
		}
		c, err := net.Dial("tcp", addr.String())
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return fmt.Sprintf("git://%s/remote.git", addr), bare
}

func refsOf(t *testing.T, bare string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", bare, "for-each-ref").CombinedOutput()
	if err != nil {
		t.Fatalf("refs of %s: %v\n%s", bare, err, out)
	}
	return string(out)
}

// An agent reaches nothing over the network but its driver's ports: not
// its model's server (only the metering proxy), not the fleet's git remote,
// not an abstract socket of the operator's; the egress proxy lets it
// through to the host fleetwatch.yaml allows and no other, saying so in
// the worker's log.
func TestAgentEgressGoesThroughTheDriver(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	model := listen(t, "tcp", "127.0.0.1:0")
	abstractName := fmt.Sprintf("fw-egresstest-%d-%d", os.Getpid(), time.Now().UnixNano())
	abstract := listen(t, "unix", "@"+abstractName)
	allowed := allowedHost(t)
	remote, bare := gitRemote(t, dir)
	refs := refsOf(t, bare)
	settings := fmt.Sprintf("integration: dev\negress: [%q]\n", allowed)
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, dir, hostile(t), fwtest.Exe(t), model.Addr().String(), remote, abstractName, allowed, model.Addr().String())

	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	for _, want := range []string{
		"attack dial-model: denied (dial tcp " + model.Addr().String() + ": connect: permission denied)",
		"attack git-push: denied",
		"attack abstract-socket: denied (dial unix @" + abstractName + ": connect: operation not permitted)",
		"egress allowed: tunnel 200 OK: allowed host says hi",
		"egress refused: 403 Forbidden: fleetwatch egress proxy: " + model.Addr().String() + " is not in fleetwatch.yaml's egress",
		"egress refused CONNECT " + model.Addr().String() + ": " + model.Addr().String() + " is not in fleetwatch.yaml's egress",
		"agents are contained (Landlock ABI", "network only through the driver: egress to " + allowed,
		"honest work handed in",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if n := model.accepted.Load(); n != 0 {
		t.Errorf("the model's server accepted %d connection(s) from the agent", n)
	}
	if n := abstract.accepted.Load(); n != 0 {
		t.Errorf("the operator's abstract socket accepted %d connection(s) from the agent", n)
	}
	if got := refsOf(t, bare); got != refs {
		t.Errorf("the remote's refs moved:\nbefore\n%s\nafter\n%s", refs, got)
	}
	if st := fwtest.StateOf(t, dir, "w1"); !strings.Contains(st.Contained, "network only through the driver") {
		t.Errorf("state file: contained %q", st.Contained)
	}
	if d := fwtest.Run(t, dir, "doctor"); !strings.Contains(d.Stdout, "ok    network: TCP only to the driver's ports") {
		t.Errorf("doctor: %v", d)
	}
}

// `egress: open` keeps today's open network, and every face says exactly
// that: the state file, the log, --list, check and doctor.
func TestOpenEgressIsSaid(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	model := listen(t, "tcp", "127.0.0.1:0")
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("integration: dev\negress: open\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, dir, hostile(t), fwtest.Exe(t), model.Addr().String(), "git://127.0.0.1:1/none.git", "fw-egresstest-none", "127.0.0.1:1", "127.0.0.1:1")
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	const said = "agents are not contained on the network (egress: open): Landlock ABI"
	for _, want := range []string{"attack dial-model: ALLOWED", "egress allowed: no HTTPS_PROXY", said} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if st := fwtest.StateOf(t, dir, "w1"); !strings.HasPrefix(st.Contained, said) {
		t.Errorf("state file: contained %q", st.Contained)
	}
	if l := fwtest.Run(t, dir, "work-once", "--list"); !strings.Contains(l.Stderr, said) {
		t.Errorf("--list does not say so: %v", l)
	}
	if c := fwtest.Run(t, dir, "check"); !strings.Contains(c.Stderr, said) {
		t.Errorf("check does not say so: %v", c)
	}
	if d := fwtest.Run(t, dir, "doctor"); !strings.Contains(d.Stdout, "--    network: open (egress: open)") {
		t.Errorf("doctor: %v", d)
	}
}

// A check runs the candidate's code: it reaches its own port and, through
// the egress proxy, the allowed host, never the model's server; the
// proxy's refusal is in the check's log.
func TestCheckEgressGoesThroughTheRunner(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	t.Parallel()
	model := listen(t, "tcp", "127.0.0.1:0")
	allowed := allowedHost(t)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	dir := landkit.LandProject(t, fmt.Sprintf("checks:\n  - {name: net, run: [%s, check, %s, %s]}\negress: [%s]\n",
		q(hostile(t)), q(model.Addr().String()), q(allowed), q(allowed)))
	tip := landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	landkit.Queued(t, dir, "x")
	r := landkit.Land(t, dir, nil)
	logs, _ := filepath.Glob(filepath.Join(dir, "var", "fleet", "checks", "*", "*.log"))
	var text []byte
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		text = append(text, b...)
	}
	if r.Code != 0 {
		t.Fatalf("queue land: %v\ncheck logs:\n%s", r, text)
	}
	landkit.WantLanded(t, dir, "x", tip)
	if want := "fleetwatch: egress refused CONNECT " + model.Addr().String(); !strings.Contains(string(text), want) {
		t.Errorf("the check's log lacks %q:\n%s", want, text)
	}
	if n := model.accepted.Load(); n != 0 {
		t.Errorf("the model's server accepted %d connection(s) from the check", n)
	}
}
