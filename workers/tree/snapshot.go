package tree

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"
)

// keepIdentity signs the keep commits: fleetwatch made them, not the agent.
var keepIdentity = []string{
	"GIT_AUTHOR_NAME=fleetwatch", "GIT_AUTHOR_EMAIL=fleetwatch@localhost",
	"GIT_COMMITTER_NAME=fleetwatch", "GIT_COMMITTER_EMAIL=fleetwatch@localhost",
}

// SnapshotCommit commits dir's work tree as it stands, untracked files
// included (ignored ones are not), as a commit on top of its HEAD, through
// a temporary index: no ref moves, and the worktree's index and files are
// left as they were. Each git call is bounded by timeout.
func SnapshotCommit(dir, msg string, timeout time.Duration) (string, error) {
	idx, err := RunGit(timeout, nil, dir, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "fleetwatch-keep-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tmpIdx := filepath.Join(tmp, "index")
	// Starting from the real index spares git hashing every file again.
	if err := copyFile(idx, tmpIdx); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	env := []string{"GIT_INDEX_FILE=" + tmpIdx}
	if _, err := RunGit(timeout, env, dir, "add", "--all"); err != nil {
		return "", err
	}
	tree, err := RunGit(timeout, env, dir, "write-tree")
	if err != nil {
		return "", err
	}
	return RunGit(timeout, keepIdentity, dir, "commit-tree", "--no-gpg-sign", "-p", "HEAD", "-m", msg, tree)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
