package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// TestClaimsSettingsCheckedByTheirBackend reads fleetwatch.yaml's claims:
// and --claims as every verb does: the backend names and what each needs
// are the backends' word, said at the file's line as config says its own.
func TestClaimsSettingsCheckedByTheirBackend(t *testing.T) {
	for _, c := range []struct{ yaml, flag, name, err string }{
		{"claims: {backend: svn}\n", "", "", `:1: claims: backend: want local, git, etcd, not "svn"`},
		{"claims:\n  backend: etcd\n", "", "", ":2: claims: backend etcd needs endpoints"},
		{"claims:\n  backend: etcd\n", "local", "", ":2: claims: backend etcd needs endpoints"},
		{"", "svn", "", `--claims: want local, git or etcd, not "svn"`},
		{"", "etcd", "", "--claims etcd: backend etcd needs endpoints"},
		{"claims: {backend: git}\n", "", "git", ""},
		{"claims: {backend: git}\n", "local", "local", ""},
		{"claims:\n  backend: etcd\n  endpoints: [http://10.0.0.5:2379]\n", "", "etcd", ""},
		{"", "", "local", ""},
	} {
		dir := t.TempDir()
		if c.yaml != "" {
			if err := os.WriteFile(filepath.Join(dir, config.File), []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		name, _, err := claimsBackend(dir, c.flag)
		switch {
		case c.err == "" && (err != nil || name != c.name):
			t.Errorf("%q --claims %q: %q, %v; want %q", c.yaml, c.flag, name, err, c.name)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q --claims %q: error %v, want one with %q", c.yaml, c.flag, err, c.err)
		case c.err != "" && strings.HasPrefix(c.err, ":") && !strings.HasPrefix(err.Error(), filepath.Join(dir, config.File)+c.err):
			t.Errorf("%q: error %v does not start with the file and line", c.yaml, err)
		}
	}
}

// TestDoctorClaimsLines reads doctor's claims lines from the backends'
// descriptions.
func TestDoctorClaimsLines(t *testing.T) {
	for _, c := range []struct {
		claims config.Claims
		want   []finding
	}{
		{config.Claims{}, []finding{{fOK, "claims: local lease files (one machine)"}}},
		{config.Claims{Backend: "etcd", Endpoints: []string{"http://a:2379", "http://b:2379"}},
			[]finding{{fOK, "claims: etcd at http://a:2379, http://b:2379 (a build with -tags etcd)"}}},
		{config.Claims{Backend: "git", Remote: "upstream"},
			[]finding{{fFail, "claims: backend git, but no remote upstream here (git remote add upstream URL)"}}},
		{config.Claims{Backend: "svn", Line: 3}, []finding{{fFail, config.File + `:3: claims: backend: want local, git, etcd, not "svn"`}}},
	} {
		got := claimsFinding(t.TempDir(), config.Settings{Path: config.File, Claims: c.claims})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.claims, got, c.want)
		}
	}
}

// TestClaimsFlagHelpNamesEachBackend reads --claims's help from the
// backends' descriptions.
func TestClaimsFlagHelpNamesEachBackend(t *testing.T) {
	want := "where claims are kept: local (lease files), git (the remote's lease refs) or etcd (an etcd cluster's keys) (default:"
	if !strings.HasPrefix(claimsFlagHelp, want) {
		t.Errorf("help %q, want it to start %q", claimsFlagHelp, want)
	}
}
