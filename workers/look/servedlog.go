package look

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// LogFetch asks the `fleetwatch serve` of a worker's machine for the last
// lines of its log, over SSH, as the operator: with the operator's own
// keys (the SSH agent at $SSH_AUTH_SOCK, else ~/.ssh/id_ed25519,
// id_ecdsa, id_rsa without a passphrase), and only from a server whose
// host key ~/.ssh/known_hosts already holds: nothing is trusted on first
// use. The server answers `log AGENT N` read-only, for viewers' keys too.
type LogFetch struct {
	Addr, Agent string // the serve's host:port, the worker's agent id
	N           int
	// Dial is the address to connect to when it was resolved and checked
	// apart from Addr (ServeElsewhere); Addr is then the name the host
	// key is known by.
	Dial string
	// Home is where .ssh/ is ("" = the user's home).
	Home string
}

// fetchTimeout bounds a whole fetch: dialling, the handshake, the answer.
const fetchTimeout = 10 * time.Second

// Fetch runs the request and returns the lines, each made safe again here
// (the other machine is not trusted either).
func (q LogFetch) Fetch(ctx context.Context) ([]string, error) {
	cfg, done, err := q.config()
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	dial := q.Addr
	if q.Dial != "" {
		dial = q.Dial
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", dial)
	if err != nil {
		return nil, fmt.Errorf("serve %s: %v", q.Addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, q.Addr, cfg)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("serve %s: %v", q.Addr, err)
	}
	client := ssh.NewClient(c, chans, reqs)
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return nil, fmt.Errorf("serve %s: %v", q.Addr, err)
	}
	defer sess.Close()
	out, err := sess.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := sess.Start("log " + q.Agent + " " + strconv.Itoa(min(max(q.N, 1), maxServedLines))); err != nil {
		return nil, fmt.Errorf("serve %s: %v", q.Addr, err)
	}
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(out, int64(maxServedLines)*(maxTailLine+8)))
	sc.Buffer(make([]byte, 0, 4096), maxTailLine*4+8)
	for sc.Scan() && len(lines) < maxServedLines {
		lines = append(lines, cleanLogLine(sc.Bytes()))
	}
	if err := sess.Wait(); err != nil {
		return lines, fmt.Errorf("serve %s refused `log %s` (%v)", q.Addr, q.Agent, err)
	}
	return lines, nil
}

// ServeElsewhere checks a serve address another machine published and
// returns the address to dial. The record is that machine's word, so an
// address naming this machine (loopback, unspecified, one of its own
// addresses, or a name resolving to any of them) is refused: dialled
// here, it would reach this machine's own serve, or some local service,
// with the operator's key. The name is resolved once, here, and the
// checked address is the one dialled.
func ServeElsewhere(ctx context.Context, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return "", fmt.Errorf("not asked: %q is not host:port", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return "", fmt.Errorf("not asked: cannot resolve %s: %v", host, err)
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("not asked: %s resolves to no address", host)
	}
	own := ownAddresses()
	for _, ip := range ips {
		if ip.IP.IsLoopback() || ip.IP.IsUnspecified() || own[ip.IP.String()] {
			return "", fmt.Errorf("not asked: %s is this machine (%s), not the worker's", addr, ip.IP)
		}
	}
	return net.JoinHostPort(ips[0].String(), port), nil
}

// ownAddresses are this machine's interfaces' addresses.
func ownAddresses() map[string]bool {
	own := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return own
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			own[n.IP.String()] = true
		}
	}
	return own
}

// config is the client's: the operator's keys and known hosts.
func (q LogFetch) config() (*ssh.ClientConfig, func(), error) {
	home := q.Home
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return nil, nil, err
		}
	}
	known := filepath.Join(home, ".ssh", "known_hosts")
	check, err := knownhosts.New(known)
	if err != nil {
		return nil, nil, fmt.Errorf("no %s to check %s's host key against: %v", known, q.Addr, tree.ErrText(err))
	}
	signers, done := operatorKeys(home)
	if len(signers) == 0 {
		done()
		return nil, nil, errors.New("no SSH key to ask with: no agent at $SSH_AUTH_SOCK and no unencrypted ~/.ssh/id_ed25519, id_ecdsa or id_rsa")
	}
	user := os.Getenv("USER")
	if user == "" {
		user = "fleetwatch"
	}
	return &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signers...)},
		HostKeyCallback: check, Timeout: fetchTimeout}, done, nil
}

// operatorKeys are the SSH agent's keys and the unencrypted default key
// files; done closes the agent's connection.
func operatorKeys(home string) ([]ssh.Signer, func()) {
	var out []ssh.Signer
	done := func() {}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
			if s, err := agent.NewClient(c).Signers(); err == nil {
				out = append(out, s...)
			}
			done = func() { c.Close() }
		}
	}
	for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
		data, err := os.ReadFile(filepath.Join(home, ".ssh", name))
		if err != nil || len(data) > 64<<10 {
			continue
		}
		if s, err := ssh.ParsePrivateKey(data); err == nil {
			out = append(out, s)
		}
	}
	return out, done
}
