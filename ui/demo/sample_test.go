package demo

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sampleFile is the sample file at name, a path under _sample.
func sampleFile(t *testing.T, name string) string {
	t.Helper()
	text, err := sampleText(name)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// TestSampleAllWritten: every file of the sample reaches the demo, in a
// commit (of main, of a feature branch, or of history since rewritten) or,
// for files git ignores, on disk where project/ lays it out.
func TestSampleAllWritten(t *testing.T) {
	t.Parallel()
	tr, _ := open(t)
	err := fs.WalkDir(sample, "_sample", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(sample, name)
		if err != nil {
			return err
		}
		hash := exec.Command("git", "-C", tr.Project, "hash-object", "--stdin")
		hash.Stdin = strings.NewReader(string(data))
		id, err := hash.Output()
		if err != nil {
			return err
		}
		if exec.Command("git", "-C", tr.Project, "cat-file", "-e", strings.TrimSpace(string(id))).Run() == nil {
			return nil
		}
		if rel, ok := strings.CutPrefix(name, "_sample/project/"); ok {
			if onDisk, err := os.ReadFile(filepath.Join(tr.Project, filepath.FromSlash(rel))); err == nil && strings.HasPrefix(string(onDisk), string(data)) {
				return nil
			}
		}
		t.Errorf("%s is in no commit of the demo and not on its disk", name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
