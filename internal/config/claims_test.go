package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseClaims(t *testing.T) {
	for _, c := range []struct {
		text string
		want Claims
	}{
		{"claims: {backend: git, remote: origin}\n", Claims{Backend: "git", Remote: "origin", Line: 1}},
		{"claims:\n  backend: git\n", Claims{Backend: "git", Line: 2}},
		{"claims:\n  backend: etcd\n  endpoints: [http://10.0.0.5:2379, https://e2:2379]\n  project: shop\n",
			Claims{Backend: "etcd", Endpoints: []string{"http://10.0.0.5:2379", "https://e2:2379"}, Project: "shop", Line: 2}},
		{"claims:\n  backend: etcd\n  endpoints: http://127.0.0.1:2379\n", Claims{Backend: "etcd", Endpoints: []string{"http://127.0.0.1:2379"}, Line: 2}},
		{"claims: {backend: local}\n", Claims{Backend: "local", Line: 1}},
		// The names and what each backend needs are its own word, checked
		// where claims are opened (ui/cli's claimsopen_test.go).
		{"claims: {backend: svn}\n", Claims{Backend: "svn", Line: 1}},
		{"claims:\n  backend: etcd\n", Claims{Backend: "etcd", Line: 2}},
	} {
		s, err := Parse([]byte(c.text))
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if !reflect.DeepEqual(s.Claims, c.want) {
			t.Errorf("%q: %+v, want %+v", c.text, s.Claims, c.want)
		}
	}
}

func TestParseClaimsRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ text, err string }{
		{"claims: git\n", "1: claims: want a mapping"},
		{"claims:\n  backend: git\n  backend: etcd\n", "3: claims: backend is set twice (first at line 2)"},
		{"claims:\n  remote: -oops\n", `2: claims: remote: "-oops" is not a git remote name`},
		{"claims:\n  host: x\n", `2: claims: unknown key "host" (known: backend, remote, endpoints, project)`},
		{"claims:\n  backend: etcd\n  endpoints: [10.0.0.5:2379]\n", `3: claims: endpoints: "10.0.0.5:2379" is not an http(s)://HOST:PORT URL`},
		{"claims:\n  backend: etcd\n  endpoints: []\n", "3: claims: endpoints: the list is empty"},
		{"claims:\n  project: a/b\n", `2: claims: project: "a/b" may not hold a slash`},
		{"claims:\n  backend: [git]\n", "2: claims: backend: want one word"},
	} {
		_, err := Parse([]byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%q: error %v, want one starting %q", c.text, err, c.err)
		}
	}
}
