package config

import (
	"strings"
	"testing"
)

func TestParseForge(t *testing.T) {
	for _, c := range []struct {
		text string
		want Forge
	}{
		{"forge:\n  kind: gitea\n  url: https://git.example.com/\n  repo: team/api\n  base: main\n  token_env: FORGE_TOKEN\n",
			Forge{Kind: "gitea", URL: "https://git.example.com", Repo: "team/api", Base: "main", TokenEnv: "FORGE_TOKEN", Line: 2}},
		{"forge: {kind: github, repo: team/api.git, token_file: ~/.config/fw/token, land: forge}\n",
			Forge{Kind: "github", URL: "https://github.com", Repo: "team/api", TokenFile: "~/.config/fw/token", Land: "forge", Line: 1}},
		{"forge: {kind: gitlab, url: http://127.0.0.1:8080, repo: group/sub/api, token_file: /etc/fw/token}\n",
			Forge{Kind: "gitlab", URL: "http://127.0.0.1:8080", Repo: "group/sub/api", TokenFile: "/etc/fw/token", Line: 1}},
		{"forge:\n", Forge{Line: 1}},
	} {
		s, err := Parse([]byte(c.text))
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if s.Forge != c.want {
			t.Errorf("%q: %+v, want %+v", c.text, s.Forge, c.want)
		}
	}
}

func TestParseForgeRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ text, err string }{
		{"forge: gitea\n", "1: forge: want a mapping"},
		{"forge: {kind: bitbucket, repo: a/b, url: https://x, token_env: T}\n", `1: forge: kind: want gitea (Forgejo too), github or gitlab, not "bitbucket"`},
		{"forge: {kind: gitea, repo: a/b, token_env: T}\n", "1: forge: url is required for gitea"},
		{"forge: {kind: gitea, url: https://x, token_env: T}\n", "1: forge: repo is required"},
		{"forge: {kind: gitea, url: https://x, repo: a/b}\n", "1: forge: token_env or token_file is required"},
		{"forge: {kind: gitea, url: https://x, repo: a/b, token_env: T, token_file: /t}\n", "1: forge: set token_env or token_file, not both"},
		{"forge:\n  kind: gitea\n  url: ftp://x\n", "3: forge: url: want the forge's web address"},
		{"forge:\n  url: https://user:pw@x\n", "2: forge: url: want the forge's web address"},
		{"forge:\n  repo: api\n", `2: forge: repo: want owner/name, like team/api, not "api"`},
		{"forge:\n  repo: a/../b\n", `2: forge: repo: want owner/name`},
		{"forge:\n  base: ma..in\n", `2: forge: base: git refuses branch name "ma..in"`},
		{"forge:\n  token_env: 1X\n", "2: forge: token_env: want a variable name"},
		{"forge:\n  token_file: token.txt\n", "2: forge: token_file: want an absolute path"},
		{"forge:\n  land: later\n", "2: forge: land: want auto, queue"},
		{"forge:\n  kind: gitea\n  kind: github\n", "3: forge: kind is set twice (first at line 2)"},
		{"forge:\n  token: abc\n", `2: forge: unknown key "token"`},
		{"forge:\n  kind: [gitea]\n", "2: forge: kind: want one word"},
	} {
		_, err := Parse([]byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q…", c.text, err, c.err)
		}
	}
}

func TestForgeBaseIsTheIntegrationBranch(t *testing.T) {
	_, err := Parse([]byte("integration: dev\nforge:\n  kind: gitea\n  url: https://x\n  repo: a/b\n  base: main\n  token_env: T\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "3: forge: base main is not integration dev") {
		t.Fatalf("got %v", err)
	}
	if _, err := Parse([]byte("integration: main\nforge: {kind: gitea, url: https://x, repo: a/b, base: main, token_env: T}\n")); err != nil {
		t.Fatal(err)
	}
}
