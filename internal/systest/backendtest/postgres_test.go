package backendtest

import (
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// postgres is a server started for one test.
type postgres struct {
	bin  string // Debian's /usr/lib/postgresql/<version>/bin
	port int
}

// conn are the client flags that reach it.
func (pg postgres) conn() []string {
	return []string{"-h", "127.0.0.1", "-p", strconv.Itoa(pg.port), "-U", "postgres"}
}

// psql runs one query in db and returns its rows, trimmed.
func (pg postgres) psql(t *testing.T, db, query string) string {
	t.Helper()
	args := append(pg.conn(), "-X", "-d", db, "-v", "ON_ERROR_STOP=1", "-Atc", query)
	out, err := exec.Command(filepath.Join(pg.bin, "psql"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %q on %s: %v\n%s", query, db, err, out)
	}
	return strings.TrimSpace(string(out))
}

// startPostgres starts a server on 127.0.0.1 and a free port, its data and
// socket in a temporary folder, stopped when the test ends. initdb refuses
// root, so as root the server runs as nobody. A server that cannot start
// here skips the test, saying why.
func startPostgres(t *testing.T) postgres {
	t.Helper()
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		t.Skip("no PostgreSQL here: /usr/lib/postgresql/*/bin/initdb is missing (Debian's postgresql package; .ci/run installs it)")
	}
	sort.Strings(found)
	pg := postgres{bin: filepath.Dir(found[len(found)-1])}
	base, err := os.MkdirTemp("", "fw-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	cred := serverUser(t, base)
	data, sock := filepath.Join(base, "data"), filepath.Join(base, "sock")
	if err := os.Mkdir(sock, 0o755); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		os.Chown(sock, int(cred.Uid), int(cred.Gid))
	}
	asServer := func(name string, args ...string) ([]byte, error) {
		cmd := exec.Command(filepath.Join(pg.bin, name), args...)
		cmd.Dir = base
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd.CombinedOutput()
	}
	if out, err := asServer("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--locale=C", "-E", "UTF8", "--no-sync"); err != nil {
		t.Skipf("PostgreSQL cannot start here: initdb: %v\n%s", err, out)
	}
	pg.port = freePort(t)
	opts := "-c listen_addresses=127.0.0.1 -p " + strconv.Itoa(pg.port) + " -k " + sock + " -c fsync=off"
	if out, err := asServer("pg_ctl", "-D", data, "-l", filepath.Join(base, "server.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(base, "server.log"))
		t.Skipf("PostgreSQL cannot start here: pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() {
		if out, err := asServer("pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", "30", "stop"); err != nil {
			t.Errorf("pg_ctl stop: %v\n%s", err, out)
		}
	})
	return pg
}

// serverUser is who runs the server: this user, or nobody when this is
// root, with base made theirs.
func serverUser(t *testing.T, base string) *syscall.Credential {
	t.Helper()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("running as root and there is no user nobody to run PostgreSQL as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(base, uid, gid); err != nil {
		t.Skipf("running as root and cannot give %s to nobody: %v", base, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// freePort is a port free on 127.0.0.1 now, outside the range agents get
// ports from.
func freePort(t *testing.T) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p < 4100 || p > 4999 {
			return p
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no free port")
	return 0
}
