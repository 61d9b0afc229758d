package boardtext

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
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

// A board read from a remote view (claims.Overlay of the lanes and a
// remote lease) shows the plan in progress, "held on <host>", in the text
// and in the JSON's host and backend fields; its claims line says how old
// the view is.
func TestRemoteViewHeldOnHost(t *testing.T) {
	dir := t.TempDir()
	for _, lane := range []string{"drafts", "bugs", "features", "in-progress", "review-needed", "completed", "ambiguous", "blocked"} {
		if err := os.MkdirAll(filepath.Join(dir, ".plans", lane), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plan := "# Plan: crash\n\n- **Priority:** P1\n- **Preferred models:** mid\n"
	if err := os.WriteFile(filepath.Join(dir, ".plans", "bugs", "crash.md"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tree.Scan()
	if err != nil {
		t.Fatal(err)
	}
	now := tree.NowSeconds()
	leases := []claims.Remote{{Slug: "crash", Version: "v1", Live: true, Need: 16 * time.Minute, SeenFor: time.Minute,
		Lease: model.Lease{Plan: "bugs/crash.md", AgentID: "mid-3", Host: "gpu-box", Origin: "bugs/crash.md", ClaimedAt: now - 60, TTL: 900, Backend: "git"}}}
	v := &claims.View{Snapshot: claims.Overlay(snap, leases, now), Leases: leases, ReadAt: tree.Now().Add(-7 * time.Second)}
	b, now := FrameOf(tree, v)
	text := Render(b, Columns(false, false), nil, now, 120, false)
	if !strings.Contains(text, "── In Progress (1) ──") || !strings.Contains(text, "held on gpu-box") {
		t.Errorf("the remote lease is not shown in progress, held on its host:\n%s", text)
	}
	if line := ClaimsLine("git origin", v, now, nil); line != "claims: git origin · read 7 s ago" {
		t.Errorf("claims line %q", line)
	}
	doc := JSON(tree, b, now)
	doc.Claims = Remote("git", "git origin", v, nil)
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"host":"gpu-box"`, `"backend":"git"`, `"where":"git origin"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("board JSON lacks %s:\n%s", want, raw)
		}
	}
}

// Against a real bare remote: a claim made through gitclaims from another
// clone shows on the board text "held on" its host, and in the JSON.
func TestRemoteBoardFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program: ", err)
	}
	root := t.TempDir()
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	bare, seed, clone := filepath.Join(root, "remote.git"), filepath.Join(root, "seed"), filepath.Join(root, "clone")
	run(root, "init", "-q", "--bare", "-b", "main", bare)
	run(root, "clone", "-q", bare, seed)
	for _, lane := range []string{"bugs", "features", "in-progress", "completed"} {
		if err := os.MkdirAll(filepath.Join(seed, ".plans", lane), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(seed, ".plans", lane, ".keep"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(seed, ".plans", "bugs", "crash.md"), []byte("# Crash\n\n- **Priority:** P1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(seed, "add", "-A")
	run(seed, "commit", "-qm", "plans")
	run(seed, "push", "-q", "origin", "HEAD:main")
	run(root, "clone", "-q", bare, clone)
	ctx := context.Background()
	worker, err := gitclaims.Open(claims.Config{Backend: "git", Project: clone, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Claim(ctx, v, "bugs/crash.md", claims.Holder{AgentID: "mid-4", Host: "gpu-box"}, 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	ours, err := gitclaims.Open(claims.Config{Backend: "git", Project: seed, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(seed)
	if err != nil {
		t.Fatal(err)
	}
	text, err := TextRemote(tree, ours, "git origin", 120)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "claims: git origin · read ") || !strings.Contains(text, "── In Progress (1) ──") || !strings.Contains(text, "held on gpu-box") {
		t.Errorf("board of the remote:\n%s", text)
	}
	var buf bytes.Buffer
	if err := WriteJSONRemote(&buf, tree, ours, "git origin"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"host": "gpu-box"`, `"backend": "git"`, `"where": "git origin"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("board JSON lacks %s:\n%s", want, buf.String())
		}
	}
}
