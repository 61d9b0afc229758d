package planfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOrchestratorRead(t *testing.T) {
	for name, c := range map[string]struct {
		files      map[string]string
		want, from string
	}{
		"None":              {nil, "", ""},
		"Anchor":            {map[string]string{".anchor/conventions.md": "x\n**Preferred orchestrator:** `claude:opus`\n"}, "claude:opus", ".anchor/conventions.md"},
		"Root":              {map[string]string{"ANCHOR-CONVENTIONS.md": "- **preferred ORCHESTRATOR:** local:qwen3   # the box under the desk\n"}, "local:qwen3", "ANCHOR-CONVENTIONS.md"},
		"AnchorFirst":       {map[string]string{".anchor/conventions.md": "**Preferred orchestrator:** `a:b`\n", "ANCHOR-CONVENTIONS.md": "**Preferred orchestrator:** `c:d`\n"}, "a:b", ".anchor/conventions.md"},
		"EmptyFallsThrough": {map[string]string{".anchor/conventions.md": "**Preferred orchestrator:**\n", "ANCHOR-CONVENTIONS.md": "**Preferred orchestrator:** `c:d`\n"}, "c:d", "ANCHOR-CONVENTIONS.md"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for rel, text := range c.files {
				writeFile(t, filepath.Join(dir, rel), text)
			}
			v, file, err := Orchestrator(dir)
			wantFile := ""
			if c.from != "" {
				wantFile = filepath.Join(dir, filepath.FromSlash(c.from))
			}
			if err != nil || v != c.want || file != wantFile {
				t.Fatalf("Orchestrator = %q %q %v; want %q from %q", v, file, err, c.want, wantFile)
			}
		})
	}
}

func TestSetOrchestrator(t *testing.T) {
	t.Run("Creates", func(t *testing.T) {
		dir := t.TempDir()
		file, err := SetOrchestrator(dir, "claude:sonnet")
		if err != nil || file != filepath.Join(dir, "ANCHOR-CONVENTIONS.md") {
			t.Fatal(file, err)
		}
		if v, _, _ := Orchestrator(dir); v != "claude:sonnet" {
			t.Fatalf("read back %q", v)
		}
	})
	t.Run("RewritesTheLineKeepingTheRest", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, ".anchor", "conventions.md")
		writeFile(t, p, "# Ours\n\n- **Preferred orchestrator:** `claude:opus`\n- **Style:** terse\n")
		if file, err := SetOrchestrator(dir, "local:qwen3"); err != nil || file != p {
			t.Fatal(file, err)
		}
		data, _ := os.ReadFile(p)
		if string(data) != "# Ours\n\n- **Preferred orchestrator:** `local:qwen3`\n- **Style:** terse\n" {
			t.Fatalf("got %q", data)
		}
		if _, err := os.Stat(filepath.Join(dir, "ANCHOR-CONVENTIONS.md")); err == nil {
			t.Fatal("a second conventions file was created")
		}
	})
	t.Run("AppendsToAFileWithout", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "ANCHOR-CONVENTIONS.md")
		writeFile(t, p, "# Conventions\nno newline at the end")
		if _, err := SetOrchestrator(dir, "a:b"); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		if !strings.HasPrefix(string(data), "# Conventions\nno newline at the end\n") {
			t.Fatalf("got %q", data)
		}
		if v, _, _ := Orchestrator(dir); v != "a:b" {
			t.Fatalf("read back %q", v)
		}
	})
	for _, bad := range []string{"", "  ", "a`b", "a\nb", "a # b"} {
		if _, err := SetOrchestrator(t.TempDir(), bad); err == nil {
			t.Errorf("SetOrchestrator(%q): want an error", bad)
		}
	}
}

func TestScaffoldWritesConventionsOnce(t *testing.T) {
	dir := t.TempDir()
	made, err := Scaffold(dir)
	if err != nil || made[len(made)-1] != filepath.Join(dir, "ANCHOR-CONVENTIONS.md") {
		t.Fatalf("%v %v", made, err)
	}
	if v, _, _ := Orchestrator(dir); v != DefaultOrchestrator {
		t.Fatalf("default %q", v)
	}
	// A project's own conventions file is never touched.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, ".anchor", "conventions.md"), "# ours\n")
	if made, err := Scaffold(other); err != nil || strings.Contains(strings.Join(made, " "), "CONVENTIONS") {
		t.Fatalf("%v %v", made, err)
	}
	if made, _ := Scaffold(dir); len(made) != 0 {
		t.Fatalf("rescaffold made %v", made)
	}
}
