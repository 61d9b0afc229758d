package serve

import (
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// projects= on a key's line limits its role to those projects when
// several are served: bob operates api and views web; carol operates web
// only; alice, with no projects=, operates every project; dave, in both
// files without projects=, views every one.
func TestRoleOnPerProject(t *testing.T) {
	kb, b := pubKey(t)
	kc, c := pubKey(t)
	ka, a := pubKey(t)
	kd, d := pubKey(t)
	dir := t.TempDir()
	ops, views := filepath.Join(dir, "ops"), filepath.Join(dir, "views")
	write(t, ops, `projects="api" `+b+" bob\n"+`projects=" web , " `+c+" carol\n"+a+" alice\n"+d+" dave\n")
	write(t, views, `projects="web" `+b+" bob\n"+d+" dave\n")
	r, err := LoadKeys(ops, views, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		who      string
		k        gossh.PublicKey
		api, web Role
	}{
		{"bob", kb, OperatorRole, ViewerRole}, {"carol", kc, NoRole, OperatorRole},
		{"alice", ka, OperatorRole, OperatorRole}, {"dave", kd, ViewerRole, ViewerRole},
	} {
		id, ok := r.Lookup(w.k, here)
		if !ok || id.RoleOn("api") != w.api || id.RoleOn("web") != w.web || id.RoleOn("ops") != NoRole && w.who == "carol" {
			t.Errorf("%s: roles api %v web %v (%v), want %v %v", w.who, id.RoleOn("api"), id.RoleOn("web"), ok, w.api, w.web)
		}
	}
	if _, err := parseKeys("ops", []byte(`projects=" , " `+a+" x\n")); err == nil || !strings.HasPrefix(err.Error(), "ops:1: projects=") {
		t.Errorf("an empty projects= gives %v", err)
	}
}

// A session whose key's projects change is closed: the roles it opened
// with no longer hold.
func TestVerdictProjectsChanged(t *testing.T) {
	was := Identity{Agent: "ssh:bob", uses: scope{listed: true, names: []string{"api"}}}
	cur := was
	if why := verdict(was, cur, true, true); why != "" {
		t.Errorf("the same key gives %q", why)
	}
	cur.uses = scope{listed: true, names: []string{"api", "web"}}
	if why := verdict(was, cur, true, true); !strings.Contains(why, "projects changed") {
		t.Errorf("projects changed gives %q", why)
	}
}
