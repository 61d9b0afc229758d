// Command dbagent stands in for a coding agent that uses its worktree's
// backend: it lists the tables it sees through $DATABASE_URL, with the psql
// named by its first argument, into the file named by its second, and
// commits them as tables.txt in its worktree, as a build makes a commit.
package main

import (
	"fmt"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: dbagent PSQL OUT")
		os.Exit(2)
	}
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		fmt.Fprintln(os.Stderr, "dbagent: no DATABASE_URL")
		os.Exit(1)
	}
	out, err := exec.Command(os.Args[1], "-X", "-d", url, "-Atc",
		"select tablename from pg_tables where schemaname = 'public' order by 1").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "dbagent: %v: %s", err, out)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "dbagent:", err)
		os.Exit(1)
	}
	if err := os.WriteFile("tables.txt", out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "dbagent:", err)
		os.Exit(1)
	}
	for _, args := range [][]string{{"add", "tables.txt"}, {"-c", "user.name=dbagent", "-c", "user.email=dbagent@example.com", "commit", "-q", "-m", "dbagent: the tables it saw"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "dbagent: git %s: %v: %s", args[0], err, out)
			os.Exit(1)
		}
	}
}
