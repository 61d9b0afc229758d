package shape

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The module's backends are found by their registrations.
func TestBackendNamesAreRead(t *testing.T) {
	got := registeredBackends("../..")
	if !reflect.DeepEqual(got, map[string]bool{"git": true, "etcd": true}) {
		t.Errorf("registered backends %v, want git and etcd", got)
	}
}

// A module whose faces name its backends in every way the rule knows,
// next to uses of the same words that are no choice.
func TestFacesNameNoBackend(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("planfs/claims/zkclaims/zk.go", "package zkclaims\n\nconst backendName = \"zk\"\n\n"+
		"func init() { claims.Register(claims.Description{Name: backendName, Where: nil}) }\n")
	write("planfs/claims/kvclaims/kv.go", "package kvclaims\n\nfunc init() { claims.Register(claims.Description{Tag: \"kv\", Name: \"kv\"}) }\n")
	write("planfs/claims/claims.go", "package claims\n\nfunc Names() []string { return []string{\"local\", \"other\"} }\n")
	write("ui/faces.go", `package ui

func f(b string, m map[string]int) {
	if b == "zk" || "kv" != b {
	}
	switch b {
	case "local", "kv":
	}
	_ = map[string]int{"zk": 1}
	_ = claims.Config{Backend: "kv"}
	run("zk", "kv")
	d.field("zk", b)
	x := "kv"
	_ = b == "local" || b == "other"
}
`)
	write("ui/cli/cmd.go", "package cli\n\nfunc g(name string) bool { return name != \"zk\" }\n")
	write("main.go", "package main\n\nfunc main() { _ = os.Args[1] == \"kv\" }\n")
	write("ui/faces_test.go", "package ui\n\nfunc h(b string) bool { return b == \"zk\" }\n")
	write("ui/uitest/kit.go", "package uitest\n\nfunc h(b string) bool { return b == \"zk\" }\n")
	write("ui/testdata/x.go", "package x\n\nfunc h(b string) bool { return b == \"zk\" }\n")
	write("workers/w.go", "package workers\n\nfunc h(b string) bool { return b == \"zk\" }\n")
	var got []string
	for _, b := range facesNameNoBackend(dir) {
		at, _, _ := strings.Cut(b, ": names the claims backend ")
		name, _, _ := strings.Cut(strings.TrimPrefix(b, at+": names the claims backend "), " ")
		got = append(got, at+" "+name)
	}
	want := []string{`main.go:3 "kv"`, `ui/cli/cmd.go:3 "zk"`, `ui/faces.go:4 "zk"`, `ui/faces.go:4 "kv"`, `ui/faces.go:7 "kv"`,
		`ui/faces.go:9 "zk"`, `ui/faces.go:10 "kv"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("breaches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b := facesNameNoBackend(dir); len(b) > 0 && !strings.Contains(b[0], "claims.Describe") {
		t.Errorf("a breach says what to do instead: %s", b[0])
	}
}
