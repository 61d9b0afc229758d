package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A stamped version becomes a package version that dpkg and rpm sort in
// commit order: a build past a tag sorts after it, not before.
func TestPackageVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.0":                  "1.2.0",
		"1.2.0":                   "1.2.0",
		"v1.2.0-rc.1":             "1.2.0-rc.1",
		"v1.2.0-3-g1a2b3c4":       "1.2.0+3.g1a2b3c4",
		"v1.2.0-rc.1-3-g1a2b3c4":  "1.2.0-rc.1+3.g1a2b3c4",
		"v1.2.0-3-g1a2b3c4-dirty": "1.2.0+3.g1a2b3c4.dirty",
		"bf4f71e":                 "0.0.0+gbf4f71e",
		"bf4f71e-dirty":           "0.0.0+gbf4f71e.dirty",
	} {
		got, err := packageVersion(in)
		if err != nil || got != want {
			t.Errorf("packageVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "latest", "v1.2", "v1.2.0 rm -rf", "release-3-g1a2b3c4"} {
		if got, err := packageVersion(bad); err == nil {
			t.Errorf("packageVersion(%q) = %q, want an error", bad, got)
		}
	}
}

func TestParseTargets(t *testing.T) {
	ts, err := parseTargets("linux/amd64, linux/arm64")
	if err != nil || len(ts) != 2 || ts[1].String() != "linux/arm64" {
		t.Errorf("parseTargets: %v, %v", ts, err)
	}
	for _, bad := range []string{"", "windows/amd64", "linux/amd64,linux/amd64", "linux"} {
		if _, err := parseTargets(bad); err == nil {
			t.Errorf("parseTargets(%q): no error", bad)
		}
	}
	if ts, err := parseTargets("darwin/arm64"); err != nil || len(ts) != 1 || ts[0] != (target{"darwin", "arm64"}) {
		t.Errorf("parseTargets(darwin/arm64): %v, %v", ts, err)
	}
}

// A release ships macOS binaries beside Linux's, so the darwin build
// cannot quietly drop out of it.
func TestDefaultTargetsIncludeDarwin(t *testing.T) {
	ts, err := parseTargets(strings.Join(defaultTargets, ","))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []target{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}} {
		if !slices.Contains(ts, want) {
			t.Errorf("default targets %v lack %v", ts, want)
		}
	}
}

// An earlier release's folder is emptied; a folder holding anything else
// is refused and left as it was.
func TestFreshOut(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"SHA256SUMS", "fleetwatch_1.0.0_amd64.deb"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	if err := freshOut(dir); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %v", left)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	err := freshOut(dir)
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("freshOut over notes.txt: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "notes.txt")); serr != nil {
		t.Errorf("notes.txt went: %v", serr)
	}
}

// SHA256SUMS reads as sha256sum -c wants it: hash, two spaces, name.
func TestWriteSums(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "fleetwatch_b"), []byte("abc"), 0o644)
	os.WriteFile(filepath.Join(dir, "fleetwatch_a"), nil, 0o644)
	p, err := writeSums(dir, []string{filepath.Join(dir, "fleetwatch_b"), filepath.Join(dir, "fleetwatch_a")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  fleetwatch_a\n" +
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  fleetwatch_b\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
}
