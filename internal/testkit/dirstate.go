package testkit

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// DirState is every path under a folder with its type, mode, size, mtime
// and contents' hash: two states equal only if nothing under it was
// created, removed, written or touched.
type DirState map[string]string

// StateOf reads the state of everything under root (a project: .plans/,
// var/ and .git/ alike), symlinks not followed.
func StateOf(tb testing.TB, root string) DirState {
	tb.Helper()
	s := DirState{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		what := fmt.Sprintf("%v", fi.Mode())
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			what += fmt.Sprintf(" %d %d %x", fi.Size(), fi.ModTime().UnixNano(), sha256.Sum256(data))
		case fi.Mode()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			what += " -> " + to
		default:
			// A folder's mtime moves when a name in it is made or removed,
			// so a temp file made and removed again shows too.
			what += fmt.Sprintf(" %d", fi.ModTime().UnixNano())
		}
		s[rel] = what
		return nil
	})
	if err != nil {
		tb.Fatalf("state of %s: %v", root, err)
	}
	return s
}

// Diff lists what differs between s and after, one path a line; "" when
// nothing does.
func (s DirState) Diff(after DirState) string {
	var out []string
	for p, was := range s {
		switch now, ok := after[p]; {
		case !ok:
			out = append(out, "removed "+p)
		case now != was:
			out = append(out, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := s[p]; !ok {
			out = append(out, "created "+p)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// Unchanged fails tb when anything under root differs from before.
func (s DirState) Unchanged(tb testing.TB, root, what string) {
	tb.Helper()
	if d := s.Diff(StateOf(tb, root)); d != "" {
		tb.Errorf("%s changed %s:\n%s", what, root, d)
	}
}
