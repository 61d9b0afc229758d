package browse

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckTakesOnlyHTTPAddresses(t *testing.T) {
	good := []string{"https://git.example.com/team/api/pulls/12", "http://127.0.0.1:3000/a/b/pulls/1?x=y#z"}
	for _, u := range good {
		if err := Check(u); err != nil {
			t.Errorf("Check(%q) = %v, want nil", u, err)
		}
	}
	bad := []string{"", "file:///etc/passwd", "javascript:alert(1)", "-https://x", "https://x/a b", "https://x/\x1b]52;c;aGk=\x07",
		"https:///nohost", "https://user:pw@x/", "ssh://git@x/r", "https://x/" + strings.Repeat("a", maxURL), "HTTPS://x/\n"}
	for _, u := range bad {
		if err := Check(u); err == nil {
			t.Errorf("Check(%q) = nil, want a refusal", u)
		}
	}
}

func TestArgvKeepsTheAddressOneWord(t *testing.T) {
	u := "https://x/p;rm%20-rf$(id)`x`"
	cases := []struct {
		browser, goos string
		want          []string
	}{
		{"", "linux", []string{"xdg-open", u}},
		{"", "darwin", []string{"open", u}},
		{"firefox --new-tab", "linux", []string{"firefox", "--new-tab", u}},
		{"w3m %s -dump:lynx", "linux", []string{"w3m", u, "-dump"}},
	}
	for _, c := range cases {
		got, err := Argv(u, c.browser, c.goos)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Argv(%q, %q) = %q, %v; want %q", c.browser, c.goos, got, err, c.want)
		}
	}
	if _, err := Argv("file:///etc/passwd", "", "linux"); err == nil {
		t.Error("Argv of a file address: want a refusal")
	}
}

// Open starts $BROWSER, a real program, with the address as its one
// argument, and returns without waiting for it.
func TestOpenStartsBrowserDetached(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "argv")
	prog := filepath.Join(dir, "browser")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + out + ".tmp\nmv " + out + ".tmp " + out + "\nsleep 2\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", prog)
	u := "https://git.example.com/team/api/pulls/12?a=$(id)&b=`x`"
	start := time.Now()
	if err := Open(u); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Open waited %v for the browser", took)
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(out); err == nil {
			got = b
			break
		}
	}
	if string(got) != u+"\n" {
		t.Fatalf("the browser got %q, want the address as one argument", got)
	}
	if err := Open("ftp://x/y"); err == nil {
		t.Error("Open of an ftp address: want a refusal")
	}
}
