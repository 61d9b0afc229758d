package serve_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/serve"
)

// Two projects served at once: bob (operator on api, viewer on web) gets
// the Projects overview with both; enter opens api, where he acts; > opens
// web, read-only. carol (operator on web only) sees web alone, in the
// cockpit and in the board without a terminal.
func TestSeveralProjectsRolePerKey(t *testing.T) {
	t.Parallel()
	api := fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/api-idea.md", Fields: "Value: high; Preferred models: mid"})
	web := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/web-crash.md", Fields: "Priority: P1; Preferred models: mid"})
	bob := newKey(t, `projects="api"`, "bob@desk")
	bobView := key{signer: bob.signer, line: `projects="web" ` + strings.TrimPrefix(bob.line, `projects="api" `)}
	carol := newKey(t, `projects="web"`, "carol@laptop")
	s := startServer(t, api, []key{bob, carol}, []key{bobView}, func(o *serve.Options) {
		o.Projects = []serve.Project{{Name: "api", Root: api}, {Name: "web", Root: web}}
	})
	t.Cleanup(func() { t.Logf("server log:\n%s", s.log) })

	tm := s.openTerm(t, 100, 30, bob)
	tm.waitFor(10*time.Second, 0, "fleetwatch · 2 projects", "api ", "web ")
	n := tm.out.Len()
	tm.send("\r")
	tm.waitFor(5*time.Second, n, "api-idea")
	n = tm.out.Len()
	tm.send("p")
	tm.waitFor(5*time.Second, n, "Promote api-idea")
	tm.send("\r")
	fwtest.WaitFor(t, "features/api-idea.md on disk", 5*time.Second, func() bool { return fwtest.Exists(api, "features/api-idea.md") })
	n = tm.out.Len()
	tm.send(">")
	tm.waitFor(5*time.Second, n, "read-only", "web-crash")

	tc := s.openTerm(t, 100, 30, carol)
	tc.waitFor(10*time.Second, 0, "fleetwatch · 1 project")
	if got := tc.text(); strings.Contains(got, "api") {
		t.Errorf("carol, with no role on api, sees it:\n%s", got)
	}
	c, err := s.dial(t, carol)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.Output("board")
	if err != nil || !strings.Contains(string(out), "== web ==") || !strings.Contains(string(out), "web-crash") || strings.Contains(string(out), "api") {
		t.Errorf("carol's board: %v\n%s", err, out)
	}

	// Without a terminal, board --json answers for every project the key
	// sees, each under its name and role.
	for _, c := range []struct {
		k    key
		want string
	}{{bob, "api:operator:api-idea web:viewer:web-crash"}, {carol, "web:operator:web-crash"}} {
		cl, err := s.dial(t, c.k)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := cl.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out, err := sess.Output("board --json")
		cl.Close()
		var doc struct {
			Projects []struct {
				Name, Role, Problem string
				Board               struct {
					Lanes []struct {
						Plans []struct{ Slug string }
					}
				}
			}
		}
		if err != nil || json.Unmarshal(out, &doc) != nil {
			t.Fatalf("board --json: %v\n%s", err, out)
		}
		var got []string
		for _, p := range doc.Projects {
			slugs := []string{}
			for _, l := range p.Board.Lanes {
				for _, pl := range l.Plans {
					slugs = append(slugs, pl.Slug)
				}
			}
			got = append(got, p.Name+":"+p.Role+":"+strings.Join(slugs, ",")+p.Problem)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("board --json gave %q, want %q\n%s", strings.Join(got, " "), c.want, out)
		}
	}
}
