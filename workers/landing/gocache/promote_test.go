package gocache

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPromote: a staging layer's entries move into trusted (what trusted
// holds already stays), the entries the build used get a fresh time, the
// staging layer goes, and doing it again is nothing.
func TestPromote(t *testing.T) {
	trusted, staging := t.TempDir(), filepath.Join(t.TempDir(), "staging")
	a, b, kept := id("a"), id("b"), id("kept")
	mustPut(t, trusted, kept, "trusted's own")
	mustPut(t, staging, kept, "staging's other")
	mustPut(t, staging, a, "built a")
	mustPut(t, trusted, b, "used b")
	old := time.Now().Add(-48 * time.Hour)
	_, bBody, _ := lookup(trusted, b)
	os.Chtimes(bBody, old, old)
	os.Chtimes(fileName(trusted, b, "a"), old, old)
	os.WriteFile(filepath.Join(staging, UsedFile), fmt.Appendf(nil, "0 %x\n1 %x\n", b, kept), 0o644)

	for range 2 {
		if err := Promote(staging, trusted); err != nil {
			t.Fatal(err)
		}
	}
	if _, body, ok := lookup(trusted, a); !ok {
		t.Error("the staged entry is not in trusted")
	} else if data, _ := os.ReadFile(body); string(data) != "built a" {
		t.Errorf("promoted body %q", data)
	}
	if _, body, _ := lookup(trusted, kept); body != "" {
		if data, _ := os.ReadFile(body); string(data) != "trusted's own" {
			t.Errorf("trusted's entry replaced by staging's: %q", data)
		}
	}
	if fi, _ := os.Stat(bBody); time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("a used entry kept its old time %v", fi.ModTime())
	}
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Errorf("staging left: %v", err)
	}
}

// TestTrim: entries unused for longer than the age go, at most once a day.
func TestTrim(t *testing.T) {
	trusted := t.TempDir()
	fresh, stale := id("fresh"), id("stale")
	mustPut(t, trusted, fresh, "fresh")
	mustPut(t, trusted, stale, "stale")
	now := time.Now()
	_, body, _ := lookup(trusted, stale)
	old := now.Add(-8 * 24 * time.Hour)
	os.Chtimes(body, old, old)
	os.Chtimes(fileName(trusted, stale, "a"), old, old)
	if ran, err := Trim(trusted, 7*24*time.Hour, now); !ran || err != nil {
		t.Fatalf("Trim: %v %v", ran, err)
	}
	if _, _, ok := lookup(trusted, stale); ok {
		t.Error("a stale entry stayed")
	}
	if _, _, ok := lookup(trusted, fresh); !ok {
		t.Error("a fresh entry went")
	}
	if ran, _ := Trim(trusted, 7*24*time.Hour, now.Add(time.Hour)); ran {
		t.Error("trimmed twice in a day")
	}
	if ran, _ := Trim(trusted, 7*24*time.Hour, now.Add(25*time.Hour)); !ran {
		t.Error("not trimmed a day later")
	}
}
