package servetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `fleetwatch serve --root A --root B --root gone`: the real binary serves
// both projects and says the missing one is not open (here through board,
// a session without a terminal); with no project that opens it refuses,
// exit 2, in one line.
func TestServeSeveralProjects(t *testing.T) {
	base := t.TempDir()
	var dirs []string
	for _, n := range []string{"api", "web"} {
		dir := filepath.Join(base, n)
		if r := fwtest.Run(t, base, "scaffold", dir); r.Code != 0 {
			t.Fatalf("scaffold: %v", r)
		}
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "bugs/fix-" + n + ".md", Fields: "Preferred models: mid"}, time.Hour)
		dirs = append(dirs, dir)
	}
	gone := filepath.Join(base, "gone")
	alice := newKey(t, "alice@laptop")
	keys := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(keys, []byte(alice.line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := fwtest.Run(t, base, "serve", "--root", gone, "--root", gone+"2", "--listen", "127.0.0.1:0", "--authorized-keys", keys)
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, "none of the projects could be opened", "no such folder")

	_, a := serve(t, base, "--root", gone, "--root", dirs[0], "--root", dirs[1], "--authorized-keys", keys)
	// The host key is the first project's that opens: api's.
	if _, err := os.Stat(filepath.Join(dirs[0], "var", "fleet", "serve", "host_ed25519")); err != nil {
		t.Errorf("api's host key: %v", err)
	}
	c, err := gossh.Dial("tcp", a, &gossh.ClientConfig{User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(alice.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	board, err := sess.Output("board")
	got := string(board)
	if err != nil || !strings.Contains(got, "== gone ==\nnot open: no such folder") ||
		!strings.Contains(got, "== api ==") || !strings.Contains(got, "fix-api") || !strings.Contains(got, "== web ==") || !strings.Contains(got, "fix-web") {
		t.Errorf("board over several projects: %v\n%s", err, got)
	}
}
