// Command scopeagent stands in for an AI coding agent in the scope
// scanner's tests: it writes the files it is told to in its working folder
// (folders made as needed), optionally commits everything (and tags it),
// then works on (sleeps) so a test can watch it while it runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	var writes []string
	flag.Func("write", "PATH=TEXT: write TEXT and a newline to PATH (repeatable)", func(s string) error {
		if !strings.Contains(s, "=") {
			return fmt.Errorf("want PATH=TEXT, got %q", s)
		}
		writes = append(writes, s)
		return nil
	})
	commit := flag.Bool("commit", false, "commit everything written (git add -A)")
	tag := flag.String("tag", "", "then tag HEAD with this name (a tag named like the integration branch)")
	sleep := flag.Duration("sleep", 0, "work this long after writing, before exiting")
	exit := flag.Int("exit", 0, "exit status")
	flag.Parse()

	for _, w := range writes {
		p, text, _ := strings.Cut(w, "=")
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte(text+"\n"), 0o644))
	}
	if *commit {
		for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=agent", "-c", "user.email=agent@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "scopeagent"}} {
			c := exec.Command("git", args...)
			c.Stdout, c.Stderr = os.Stderr, os.Stderr
			must(c.Run())
		}
	}
	if *tag != "" {
		c := exec.Command("git", "tag", *tag, "HEAD")
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		must(c.Run())
	}
	time.Sleep(*sleep)
	os.Exit(*exit)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "scopeagent:", err)
		os.Exit(3)
	}
}
