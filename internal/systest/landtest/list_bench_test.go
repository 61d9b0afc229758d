package landtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// BenchmarkQueueListJSON100 is the real `fleetwatch queue list --json`
// with 100 changes approved and queued in batches of 8, warm cache
// (target ≤ 300 ms a run, the process's start included).
func BenchmarkQueueListJSON100(b *testing.B) {
	dir := b.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		b.Fatal(err)
	}
	yaml := "integration: dev\nchecks:\n  - {name: test, run: [sh, -c, 'true']}\nqueue: {batch: 8}\n"
	var stream strings.Builder
	fmt.Fprintf(&stream, "commit refs/heads/dev\nmark :1\ncommitter t <t@example.com> 1700000000 +0000\ndata 4\nbase\nM 644 inline fleetwatch.yaml\ndata %d\n%s\n", len(yaml), yaml)
	for i := range 100 {
		slug := fmt.Sprintf("c%03d", i)
		fmt.Fprintf(&stream, "commit refs/heads/feature/%s\ncommitter t <t@example.com> %d +0000\ndata 7\nchange\nfrom :1\nM 644 inline %s.txt\ndata 2\nx\n\n", slug, 1700000001+i, slug)
		fwtest.WritePlan(b, dir, fwtest.Plan{Rel: "review-needed/" + slug + ".md"}, 0)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"fast-import", "--quiet"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Stdin = strings.NewReader(stream.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	t, err := planfs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		slug := fmt.Sprintf("c%03d", i)
		tip := strings.TrimSpace(gitOrFail(b, dir, "rev-parse", "feature/"+slug))
		if _, err := t.WriteApproval(slug, tip, planfs.Agent("operator-bench")); err != nil {
			b.Fatal(err)
		}
		if err := landing.AddAs(t, slug, "operator-bench"); err != nil {
			b.Fatal(err)
		}
	}
	fwtest.Want(b, fwtest.Run(b, dir, "queue", "list", "--json"), 0) // warms the cache
	for b.Loop() {
		r := fwtest.Run(b, dir, "queue", "list", "--json")
		if r.Code != 0 || !strings.Contains(r.Stdout, `"c099"`) || !strings.Contains(r.Stdout, `"batch": {`) {
			b.Fatalf("%v", r)
		}
	}
}

func gitOrFail(b *testing.B, dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
