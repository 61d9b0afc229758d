// Command hostile stands in for a coding agent that goes around its
// driver on the network: it dials its model's server directly, pushes to
// the fleet's git remote, connects to an abstract unix socket of the
// operator's, and asks the egress proxy for an allowed and a refused
// host, printing one line each ("attack NAME: denied (why)" or "attack
// NAME: ALLOWED"; "egress NAME: ..." for what the proxy answered). Then
// it hands its plan in. Its arguments are the fleetwatch binary, the
// model's address, the git remote's URL, the abstract socket's name, the
// allowed host and the refused one.
//
// As a check (`hostile check MODEL ALLOWED`) it tries the same from a
// candidate's test and exits 0 only when its own port and the allowed
// host are reached and the model is not, directly or through the proxy.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "check" {
		os.Exit(check(os.Args[2], os.Args[3]))
	}
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: hostile FLEETWATCH MODEL REMOTE ABSTRACT ALLOWED REFUSED")
		os.Exit(2)
	}
	fw, model, remote, abstract, allowed, refused := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]
	wt := os.Getenv("FLEET_WORKTREE")
	attack := func(name string, err error) {
		if err != nil {
			fmt.Printf("attack %s: denied (%s)\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Printf("attack %s: ALLOWED\n", name)
		}
	}
	run := func(name string, args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, name, args...)
		c.Dir = wt
		out, err := c.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}

	// A commit of its own, so a push would move the remote's refs.
	must(os.WriteFile(filepath.Join(wt, "feature.txt"), []byte("honest work\n"), 0o644))
	must(run("git", "add", "feature.txt"))
	must(run("git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-m", "honest work"))

	attack("dial-model", dial("tcp", model))
	attack("git-push", run("git", "push", "--force", remote, "HEAD:refs/heads/dev", "HEAD:refs/heads/squat"))
	attack("abstract-socket", dial("unix", "@"+abstract))
	fmt.Printf("egress allowed: %s\n", connect(allowed))
	fmt.Printf("egress refused: %s\n", connect(refused))

	must(run(fw, "complete", "--to", "review-needed", os.Getenv("FLEET_PLAN")))
	fmt.Println("honest work handed in")
}

// check is the check's run: 0 when the network is as contained as it
// should be, 1 (and why on stdout) when not.
func check(model, allowed string) int {
	code := 0
	say := func(ok bool, format string, args ...any) {
		if !ok {
			code = 1
		}
		fmt.Printf(format+"\n", args...)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		say(false, "own port: %v", err)
	} else {
		defer ln.Close()
		err := dial("tcp", ln.Addr().String())
		say(err == nil, "own port: %v", err)
	}
	err = dial("tcp", model)
	say(err != nil, "attack dial-model: %v", err)
	got := connect(allowed)
	say(strings.HasPrefix(got, "tunnel 200 OK"), "egress allowed: %s", got)
	got = connect(model)
	say(strings.HasPrefix(got, "403 Forbidden"), "egress refused: %s", got)
	return code
}

func dial(network, addr string) error {
	c, err := net.DialTimeout(network, addr, 3*time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

// connect asks $HTTPS_PROXY for a tunnel to target and, through it, for
// "/": what the proxy (and then the host) answered.
func connect(target string) string {
	proxy := os.Getenv("HTTPS_PROXY")
	if proxy == "" {
		return "no HTTPS_PROXY"
	}
	u, err := url.Parse(proxy)
	if err != nil {
		return err.Error()
	}
	c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp.Status + ": " + strings.TrimSpace(string(body))
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		return err.Error()
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return "tunnel " + resp.Status + ": " + strings.TrimSpace(string(body))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(3)
	}
}
