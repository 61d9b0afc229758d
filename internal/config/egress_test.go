package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseEgress(t *testing.T) {
	s, err := Parse([]byte(`egress: [proxy.golang.org, Registry.NPMjs.org., "*.example.com", "127.0.0.1:8080", "[::1]:9", "10.0.0.5", "git.example.org:443"]` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range s.Egress.Allow {
		got = append(got, h.String())
	}
	want := "proxy.golang.org registry.npmjs.org *.example.com 127.0.0.1:8080 [::1]:9 10.0.0.5 git.example.org:443"
	if strings.Join(got, " ") != want || s.Egress.Open {
		t.Errorf("allow %q, open %v; want %q", got, s.Egress.Open, want)
	}
	if s, err := Parse([]byte("egress: open\n")); err != nil || !s.Egress.Open || s.Egress.Allow != nil {
		t.Errorf("egress: open: %+v %v", s.Egress, err)
	}
	if s, err := Parse([]byte("egress:\n")); err != nil || s.Egress.Open || s.Egress.Allow != nil {
		t.Errorf("egress with nothing: %+v %v", s.Egress, err)
	}
	for text, want := range map[string]string{
		"egress: closed\n":                   "1: egress: want open, or a list of hosts",
		"egress: {a: b}\n":                   "1: egress: want open, or a list of hosts",
		"egress:\n  - ok.example\n  - [a]\n": "3: egress: each host is a string",
		"egress:\n  - ok.example\n  - a b\n": `3: egress: "a b" is not a host name`,
		"egress: [\"http://x.example\"]\n":   `1: egress: "http://x.example" is not a port after the colon`,
		"egress: [x.example:0]\n":            `1: egress: "x.example:0" is not a port after the colon`,
		"egress: [x.example:70000]\n":        `1: egress: "x.example:70000" is not a port after the colon`,
		"egress: [\"127.0.0.1:0\"]\n":        `1: egress: "127.0.0.1:0" is port 0`,
		"egress: [\"a.*.example\"]\n":        `1: egress: "a.*.example" is not a host name`,
		"egress: [\"-x.example\"]\n":         `1: egress: "-x.example" is not a host name`,
		"egress: [open]\negress: [x]\n":      "2: egress is set twice",
		"egress: [x.example:]\n":             `1: egress: "x.example:" is not a port after the colon`,
	} {
		_, err := Parse([]byte(text))
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line starting %q", text, err, want)
		}
	}
}

func TestLoadEgressNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, File)
	os.WriteFile(p, []byte("sandbox: auto\negress: [\"no such host\"]\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.HasPrefix(err.Error(), p+`:2: egress: "no such host" is not a host name`) {
		t.Fatalf("error %v", err)
	}
}
