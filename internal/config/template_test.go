package config

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
)

// Scaffold's fleetwatch.yaml is every default as written, and with every
// setting uncommented ("#key" or "#  nested" loses its #) each section
// parses to what its comment says.
func TestTemplateParses(t *testing.T) {
	s, err := Parse([]byte(Template))
	if err != nil || s.Integration != "" || s.Checks != nil || s.Worktree.Set() || s.Claims.Line != 0 || !s.Limits.None() {
		t.Fatalf("the template as written is not the defaults: %+v, %v", s, err)
	}
	lines := strings.Split(Template, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "#  ") {
			lines[i] = l[1:]
		}
	}
	on := strings.Join(lines, "\n")
	s, err = Parse([]byte(on))
	if err != nil {
		t.Fatalf("uncommented: %v\n%s", err, on)
	}
	if s.Integration != "dev" || len(s.Checks) != 1 || s.Checks[0].Name != "test" || s.QueueDepth != 1 ||
		s.Worktree.Ports != 1 || len(s.Worktree.Env) != 2 || s.Sandbox != sandbox.Auto || s.Claims.Backend != "local" || s.OnScopeViolation != "warn" ||
		s.Limits.Fleet != 12 || s.Limits.Named["endpoint"]["claude"] != 3 || len(s.Egress.Allow) != 2 {
		t.Errorf("uncommented: %+v", s)
	}
	for _, key := range []string{"integration", "checks", "queue", "worktree", "sandbox", "claims", "on_scope_violation", "limits", "egress"} {
		if !strings.Contains(Template, "\n#"+key+":") {
			t.Errorf("the template does not show %s:", key)
		}
	}
}

// What scaffold writes names the branch it chose, and reads back as it.
func TestTemplateForNamesTheBranch(t *testing.T) {
	for _, branch := range []string{"main", "release/2.x", "@trunk", "!x"} {
		s, err := Parse([]byte(TemplateFor(branch)))
		if err != nil || s.Integration != branch {
			t.Errorf("TemplateFor(%q) reads as integration %q (%v)", branch, s.Integration, err)
		}
	}
	if TemplateFor("") != Template {
		t.Error("TemplateFor(\"\") is not the template")
	}
}
