package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNotifySettings(t *testing.T) {
	s, err := Parse([]byte(`notify:
  stuck_after: 48h
  webhooks:
    - {url: "http://127.0.0.1:9/hook"}
    - name: team
      url: https://hooks.example.com/x
      format: slack
      headers: {Authorization: Bearer abc}
      kinds: [review, budget]
      per_minute: 2
  terminal: {osc: [777, 9]}
  desktop:
`))
	if err != nil {
		t.Fatal(err)
	}
	n := s.Notify
	if n == nil || n.StuckAfter != 48*time.Hour || len(n.Webhooks) != 2 || n.Line != 2 {
		t.Fatalf("notify %+v", n)
	}
	if w := n.Webhooks[0]; w.Name != "webhook-1" || w.Format != "json" || w.PerMinute != 0 {
		t.Errorf("first webhook %+v", w)
	}
	w := n.Webhooks[1]
	if w.Name != "team" || w.Format != "slack" || w.Headers["Authorization"] != "Bearer abc" || strings.Join(w.Kinds, ",") != "review,budget" || w.PerMinute != 2 {
		t.Errorf("team webhook %+v", w)
	}
	if n.Terminal == nil || !n.Terminal.OSC777 || !n.Terminal.OSC9 || n.Desktop == nil {
		t.Errorf("terminal %+v desktop %+v", n.Terminal, n.Desktop)
	}
	if got := strings.Join(n.Targets(), " "); got != "webhook-1 team terminal desktop" {
		t.Errorf("targets %q", got)
	}
	if s, _ := Parse([]byte("notify:\n  terminal:\n")); s.Notify.Terminal == nil || !s.Notify.Terminal.OSC777 || s.Notify.Terminal.OSC9 {
		t.Errorf("a bare terminal: is OSC 777 alone: %+v", s.Notify.Terminal)
	}
}

func TestNotifySettingsRefuseBadValuesWithTheLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"notify: yes", "1: notify: want a mapping"},
		{"notify:\n  pager: x", "2: notify: unknown key \"pager\""},
		{"notify:\n  webhooks:\n    - {format: slack}", "3: notify: webhook: url is required"},
		{"notify:\n  webhooks:\n    - url: ftp://x/y", "3: notify: webhook: url: want an http or https URL"},
		{"notify:\n  webhooks:\n    - url: http://x/\n      format: xml", "4: notify: webhook: format: want json or slack"},
		{"notify:\n  webhooks:\n    - {url: http://x/, name: a}\n    - {url: http://y/, name: a}", "4: notify: webhooks: name \"a\" is used twice (first at line 3)"},
		{"notify:\n  webhooks:\n    - url: http://x/\n      headers: {\"a b\": c}", "4: notify: webhook: headers: \"a b\" is not a header name"},
		{"notify:\n  webhooks:\n    - url: http://x/\n      headers: {X-A: \"a\\x01b\"}", "4: notify: webhook: headers: X-A: want one line of text"},
		{"notify:\n  desktop: {kinds: [review, tea]}", "2: notify: desktop: kinds: unknown kind \"tea\""},
		{"notify:\n  desktop:\n    per_minute: 0", "3: notify: desktop: per_minute: want a whole number from 1 to 600"},
		{"notify:\n  terminal: {osc: 52}", "2: notify: terminal: osc: want 777, 9 or [777, 9]"},
		{"notify:\n  stuck_after: soon", "2: notify: stuck_after: want a duration from 1m to 720h0m0s"},
		{"notify:\n  stuck_after: 10s", "2: notify: stuck_after: want a duration from 1m"},
		{"notify:\n  webhooks:\n    - {url: http://x/, name: terminal}", "3: notify: webhook: name: want letters"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q…", tc.in, err, tc.want)
		}
	}
}

// The project's notify: wins whole; without one, the user's config.yaml
// under $XDG_CONFIG_HOME is read, and its errors name it and the line.
func TestLoadNotifyProjectThenUser(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	project := t.TempDir()
	if n, err := LoadNotify(project); err != nil || n.Targets() != nil {
		t.Fatalf("neither file: %+v %v", n, err)
	}
	user := filepath.Join(xdg, "fleetwatch", "config.yaml")
	os.MkdirAll(filepath.Dir(user), 0o755)
	os.WriteFile(user, []byte("notify:\n  desktop:\n"), 0o644)
	if n, err := LoadNotify(project); err != nil || n.Desktop == nil || n.Path != user {
		t.Fatalf("user file: %+v %v", n, err)
	}
	os.WriteFile(filepath.Join(project, File), []byte("integration: dev\nnotify:\n  terminal:\n"), 0o644)
	n, err := LoadNotify(project)
	if err != nil || n.Desktop != nil || n.Terminal == nil || n.Path != filepath.Join(project, File) {
		t.Fatalf("the project's wins whole: %+v %v", n, err)
	}
	os.Remove(filepath.Join(project, File))
	os.WriteFile(user, []byte("# mine\nintegration: dev\n"), 0o644)
	if _, err := LoadNotify(project); err == nil || err.Error() != user+":2: unknown key \"integration\" (known: notify; project settings go in the project's fleetwatch.yaml)" {
		t.Fatalf("a project key in the user's file: %v", err)
	}
	os.WriteFile(user, []byte("notify:\n  desktop:\nnotify:\n  terminal:\n"), 0o644)
	if _, err := LoadNotify(project); err == nil || err.Error() != user+":3: notify is set twice (first at line 1)" {
		t.Fatalf("notify: twice: %v", err)
	}
	os.WriteFile(user, []byte("notify:\n  desktop: [\n"), 0o644)
	if _, err := LoadNotify(project); err == nil || !strings.HasPrefix(err.Error(), user+":") {
		t.Fatalf("a syntax error: %v", err)
	}
}
