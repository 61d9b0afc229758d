package fwtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// plan is a compact plan description for newTree.
type Plan struct {
	Rel    string // e.g. "features/a.md"
	Fields string // header bullets, "Key: value" separated by ";"
	Body   string
	Age    time.Duration // mtime this long ago, so creation order is explicit
}

func NewTree(t testing.TB, plans ...Plan) string {
	t.Helper()
	dir := t.TempDir()
	if r := Run(t, dir, "scaffold", dir); r.Code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	for i, p := range plans {
		WritePlan(t, dir, p, time.Duration(len(plans)-i)*time.Minute)
	}
	return dir
}

func WritePlan(t testing.TB, dir string, p Plan, defaultAge time.Duration) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n", strings.TrimSuffix(filepath.Base(p.Rel), ".md"))
	if p.Fields != "" {
		for _, f := range strings.Split(p.Fields, ";") {
			k, v, _ := strings.Cut(f, ":")
			fmt.Fprintf(&b, "- **%s:** %s\n", strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	b.WriteString("\n## Goal\nDo it.\n\n## Done when\n- done\n")
	b.WriteString(p.Body)
	path := filepath.Join(dir, ".plans", filepath.FromSlash(p.Rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	age := p.Age
	if age == 0 {
		age = defaultAge
	}
	mt := time.Now().Add(-age)
	if err := os.Chtimes(path, mt, mt); err != nil {
		t.Fatal(err)
	}
}

func Exists(dir, rel string) bool {
	_, err := os.Stat(filepath.Join(dir, ".plans", filepath.FromSlash(rel)))
	return err == nil
}

// LeaseFilePath is where the lease for a plan rel lives.
func LeaseFilePath(dir, rel string) string {
	return filepath.Join(dir, ".plans", ".leases", strings.ReplaceAll(rel, "/", "__")+".json")
}

// LeaseOf reads rel's lease file as JSON; nil when there is none.
func LeaseOf(t testing.TB, dir, rel string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(LeaseFilePath(dir, rel))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("lease for %s is not JSON: %v\n%s", rel, err, data)
	}
	return m
}

// ActiveOwner is the agent holding an unexpired lease on rel, or "".
func ActiveOwner(t testing.TB, dir, rel string) string {
	t.Helper()
	l := LeaseOf(t, dir, rel)
	if l == nil {
		return ""
	}
	exp, _ := l["expires_at"].(float64)
	if float64(time.Now().UnixNano())/1e9 >= exp {
		return ""
	}
	id, _ := l["agent_id"].(string)
	return id
}

// PutLease writes a lease file the way anchor does (indent 2, newline).
func PutLease(t testing.TB, dir, rel string, fields map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(fields, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	PutRaw(t, dir, ".leases/"+strings.ReplaceAll(rel, "/", "__")+".json", string(b)+"\n")
}

// AnchorLease is the lease anchor writes: no host, pid or token.
func AnchorLease(rel, agent string, claimedAgo, ttl float64) map[string]any {
	now := float64(time.Now().UnixNano()) / 1e9
	return map[string]any{"plan": rel, "agent_id": agent, "claimed_at": now - claimedAgo, "expires_at": now - claimedAgo + ttl}
}

// PutRaw writes a file under .plans/ with exactly content.
func PutRaw(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, ".plans", filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadRel returns the content of a file under .plans/.
func ReadRel(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".plans", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// LastLine is the last non-empty line of s.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// IsPlanPath reports whether got is the absolute path of rel in dir's tree.
func IsPlanPath(dir, got, rel string) bool {
	if !filepath.IsAbs(got) {
		return false
	}
	wantPath := filepath.Join(dir, ".plans", filepath.FromSlash(rel))
	if got == wantPath {
		return true
	}
	a, err1 := filepath.EvalSymlinks(got)
	b, err2 := filepath.EvalSymlinks(wantPath)
	return err1 == nil && err2 == nil && a == b
}

// WorkOnceJSON runs `work-once --list --json` and decodes its one object.
func WorkOnceJSON(t testing.TB, dir string, args ...string) map[string]any {
	t.Helper()
	r := Run(t, dir, append([]string{"work-once", "--list", "--json"}, args...)...)
	Want(t, r, 0)
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatalf("--list --json is not one JSON object: %v\n%s", err, r.Stdout)
	}
	return m
}

// JSONPlan finds rel among a --list --json object's plans.
func JSONPlan(t testing.TB, m map[string]any, rel string) map[string]any {
	t.Helper()
	plans, _ := m["plans"].([]any)
	for _, p := range plans {
		if pm, ok := p.(map[string]any); ok && pm["rel"] == rel {
			return pm
		}
	}
	t.Fatalf("plan %s not in --list --json: %v", rel, m["plans"])
	return nil
}

// JSONWarningFiles lists the file named by each --list --json warning.
func JSONWarningFiles(m map[string]any) []string {
	var out []string
	ws, _ := m["warnings"].([]any)
	for _, w := range ws {
		if wm, ok := w.(map[string]any); ok {
			f, _ := wm["file"].(string)
			out = append(out, f)
		}
	}
	return out
}

// EventsOf reads .plans/logs/events.jsonl, one map per line.
func EventsOf(t testing.TB, dir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ".plans", "logs", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("events.jsonl line is not JSON: %v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func ToStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// Age sets a file under .plans/ two minutes into the past.
func Age(t *testing.T, dir, rel string) {
	t.Helper()
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(filepath.Join(dir, ".plans", rel), old, old); err != nil {
		t.Fatal(err)
	}
}

// Contents maps each plan rel to its file content.
func Contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(dir, ".plans")
	for _, lane := range []string{"drafts", "bugs", "features", "in-progress", "review-needed", "ambiguous", "blocked", "completed"} {
		files, _ := filepath.Glob(filepath.Join(root, lane, "*.md"))
		for _, f := range files {
			if filepath.Base(f) == "README.md" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[lane+"/"+filepath.Base(f)] = string(b)
		}
	}
	return out
}

func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
