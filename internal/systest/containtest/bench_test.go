package containtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
)

// The sandbox's cost, as an agent pays it: its start (its cgroup made and
// bounded, the ruleset built, a thread joining the v1 groups, dropping
// every capability and entering the domain, the fork from it into a
// session of its own, the cgroup removed), and a git commit of 100 files
// inside the domain against one outside.
// `go test -run x -bench Sandbox ./internal/systest/containtest/`.

// run runs cmd, inside a domain that may write dirs when contain is set.
func run(b *testing.B, cmd *exec.Cmd, contain bool, dirs ...string) {
	b.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release := func() {}
	var err error
	var group *sandbox.Group
	if contain {
		// A run's whole start: its cgroup, bounded, as a driver makes one.
		group, _ = sandbox.NewGroup(sandbox.GroupName(dirs[0], "bench"), sandbox.DefaultLimits())
		release, err = sandbox.Spawn{Group: group, Policy: &sandbox.Policy{Write: dirs}}.Start(cmd)
	} else {
		err = cmd.Start()
	}
	if err == nil {
		err = cmd.Wait()
		release()
	}
	group.Close()
	if err != nil {
		b.Fatalf("%v: %s", err, out.String())
	}
}

func BenchmarkSandboxStart(b *testing.B) {
	if _, err := sandbox.ABI(); err != nil {
		b.Skip(err)
	}
	tmp := b.TempDir()
	for _, contain := range []bool{false, true} {
		b.Run(fmt.Sprintf("contained=%v", contain), func(b *testing.B) {
			for b.Loop() {
				run(b, exec.Command("true"), contain, tmp)
			}
		})
	}
}

func BenchmarkSandboxCommit100Files(b *testing.B) {
	if _, err := sandbox.ABI(); err != nil {
		b.Skip(err)
	}
	for _, contain := range []bool{false, true} {
		b.Run(fmt.Sprintf("contained=%v", contain), func(b *testing.B) {
			repo := b.TempDir()
			if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			round := 0
			for b.Loop() {
				b.StopTimer()
				round++
				for i := range 100 {
					p := filepath.Join(repo, fmt.Sprintf("f%03d.txt", i))
					if err := os.WriteFile(p, fmt.Appendf(nil, "round %d file %d\n", round, i), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				cmd := exec.Command("sh", "-c", "git add -A && git -c user.name=a -c user.email=a@example.com commit -q -m round")
				cmd.Dir = repo
				b.StartTimer()
				run(b, cmd, contain, repo)
			}
		})
	}
}
