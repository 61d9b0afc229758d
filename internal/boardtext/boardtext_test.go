package boardtext

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fleetwatch/planfs"
)

// Text and WriteJSON draw a real tree: the plan's slug in its column, and
// every lane in the JSON.
func TestTextAndJSON(t *testing.T) {
	dir := t.TempDir()
	for _, lane := range []string{"drafts", "bugs", "features", "in-progress", "review-needed", "completed", "ambiguous", "blocked", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, ".plans", lane), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plan := "# Plan: crash\n\n- **Priority:** P1\n- **Preferred models:** mid\n\n## Goal\nDo it.\n"
	if err := os.WriteFile(filepath.Join(dir, ".plans", "bugs", "crash.md"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Text(tree, 100)
	if err != nil || !strings.Contains(text, "── Ready (1) ──") || !strings.Contains(text, "crash") || strings.Contains(text, "\x1b") {
		t.Fatalf("Text: %v\n%s", err, text)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, tree); err != nil {
		t.Fatal(err)
	}
	var doc Doc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || len(doc.Lanes) == 0 {
		t.Fatalf("WriteJSON: %v\n%s", err, buf.String())
	}
}

func TestLeftText(t *testing.T) {
	for sec, want := range map[float64]string{42: "42s", 720: "12m", 3*3600 + 300: "3h05m"} {
		if got := LeftText(sec); got != want {
			t.Errorf("LeftText(%v) = %q, want %q", sec, got, want)
		}
	}
}
