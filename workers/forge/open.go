package forge

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// Conn is what a kind's client is made from.
type Conn struct {
	URL   string // the forge's web address, no trailing slash
	Repo  string // owner/name
	Token string
	// HTTP is the client every call goes through (a timeout, no
	// redirects across hosts); Open sets it.
	HTTP *http.Client
}

// callTimeout bounds one API call when the caller's context does not.
const callTimeout = 30 * time.Second

// kinds are the clients by `kind:`; each kind's file adds its own.
var kinds = map[string]func(Conn) (Forge, error){}

// Open connects to the forge of s (which must be on), reading its token.
// It makes no call: a forge that is down fails the first one.
func Open(s config.Forge) (Forge, error) {
	mk, ok := kinds[s.Kind]
	if !ok {
		return nil, fmt.Errorf("forge: kind %q: want gitea, github or gitlab", s.Kind)
	}
	tok, err := Token(s)
	if err != nil {
		return nil, err
	}
	return mk(Conn{URL: strings.TrimSuffix(s.URL, "/"), Repo: s.Repo, Token: tok, HTTP: httpClient()})
}

func httpClient() *http.Client {
	return &http.Client{
		Timeout: callTimeout,
		// A redirect to another host would carry the token there.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 || req.URL.Host != via[0].URL.Host {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

// maxToken bounds a token file: a token is a line.
const maxToken = 4096

// Token reads the forge's token from token_env or token_file. A token
// file must be a regular file of this user's that nobody else can read.
func Token(s config.Forge) (string, error) {
	if s.TokenEnv != "" {
		tok := strings.TrimSpace(os.Getenv(s.TokenEnv))
		if tok == "" {
			return "", fmt.Errorf("forge: token_env: $%s is empty or unset", s.TokenEnv)
		}
		return tok, nil
	}
	path := s.TokenFile
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("forge: token_file: %v", err)
		}
		path = filepath.Join(home, rest)
	}
	return readToken(path)
}

func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("forge: token_file: %v", err)
	}
	defer f.Close()
	if err := tokenFileOK(f, path); err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxToken+1))
	if err != nil {
		return "", fmt.Errorf("forge: token_file: %v", err)
	}
	tok := strings.TrimSpace(string(data))
	if len(data) > maxToken || tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("forge: token_file: %s does not hold one token on one line", path)
	}
	return tok, nil
}

// tokenFileOK refuses a token file that is not a regular file of this
// user's that only this user can read.
func tokenFileOK(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("forge: token_file: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("forge: token_file: %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("forge: token_file: %s can be read by others (mode %#o): chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("forge: token_file: %s belongs to uid %d, not to this user (%d)", path, st.Uid, os.Getuid())
	}
	return nil
}

// basicAuthEnv is the git environment that sends user:token as basic
// authentication to prefix only (http.<url>.extraHeader), through
// GIT_CONFIG_COUNT so that nothing is written to any git config file.
func basicAuthEnv(prefix, user, token string) []string {
	cred := base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http." + prefix + ".extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + cred,
	}
}

// repoPath splits owner/name (the last part is the name; GitLab's owner
// may be a nested group).
func repoPath(repo string) (owner, name string) {
	i := strings.LastIndex(repo, "/")
	return repo[:i], repo[i+1:]
}

// clip keeps s to n bytes for the forge's length limits.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// FileURL is the web page of path on branch in f's repository.
func FileURL(f Forge, branch, path string) string {
	switch f.Kind() {
	case config.ForgeGitHub:
		return f.Web() + "/blob/" + branch + "/" + path
	case config.ForgeGitLab:
		return f.Web() + "/-/blob/" + branch + "/" + path
	}
	return f.Web() + "/src/branch/" + branch + "/" + path
}
