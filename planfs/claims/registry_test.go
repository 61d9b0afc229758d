package claims_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/etcdclaims" // describes the etcd backend in every build
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

// TestBackendsDescribeThemselves reads what the faces ask of a backend
// from the registry alone: its name among the choices, its settings'
// check, its header, its doctor lines and where its leases live.
func TestBackendsDescribeThemselves(t *testing.T) {
	if got := claims.Names(); !reflect.DeepEqual(got, []string{"local", "git", "etcd"}) {
		t.Errorf("names %v: local, then every build's, then the tagged ones", got)
	}
	for _, c := range []struct {
		cfg  claims.Config
		want string
	}{
		{claims.Config{}, ""},
		{claims.Config{Backend: "local"}, ""},
		{claims.Config{Backend: "git"}, ""},
		{claims.Config{Backend: "etcd", Endpoints: []string{"http://10.0.0.5:2379"}}, ""},
		{claims.Config{Backend: "svn"}, `backend: want local, git, etcd, not "svn"`},
		{claims.Config{Backend: "etcd"}, "backend etcd needs endpoints: [http://HOST:2379, …]"},
	} {
		err := claims.CheckConfig(c.cfg)
		if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := claims.Open(claims.Config{Backend: "etcd"}); err == nil || !strings.Contains(err.Error(), "needs endpoints") {
		t.Errorf("open etcd without endpoints: %v", err)
	}
	for cfg, want := range map[*claims.Config]string{
		{Backend: "git"}:               "git origin",
		{Backend: "git", Remote: "up"}: "git up",
		{Backend: "etcd", Endpoints: []string{"http://10.0.0.5:2379", "http://e2:2379"}}: "etcd http://10.0.0.5:2379",
	} {
		if got := claims.Where(*cfg); got != want {
			t.Errorf("where %+v: %q, want %q", *cfg, got, want)
		}
	}
	for _, c := range [][3]string{{"git", "a", "git ref refs/fleetwatch/leases/a"}, {"etcd", "a", "etcd"}, {"", "a", ""}} {
		if got := claims.KeptIn(c[0], c[1]); got != c[2] {
			t.Errorf("kept in %q: %q, want %q", c[0], got, c[2])
		}
	}
}

// TestGitDoctorFindsTheRemote runs the git description's doctor on a real
// checkout, before and after it has the remote claims need.
func TestGitDoctorFindsTheRemote(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "dev")
	cfg := claims.Config{Backend: "git", Project: dir, Remote: "upstream"}
	got := claims.Doctor(context.Background(), cfg)
	if len(got) != 1 || !got[0].Fail || got[0].Text != "backend git, but no remote upstream here (git remote add upstream URL)" {
		t.Errorf("no remote: %+v", got)
	}
	bare := filepath.Join(t.TempDir(), "r.git")
	git(t, dir, "remote", "add", "upstream", bare)
	got = claims.Doctor(context.Background(), cfg)
	if len(got) != 1 || got[0].Fail || got[0].Text != "the lease refs of upstream ("+bare+")" {
		t.Errorf("with the remote: %+v", got)
	}
	if got := claims.Doctor(context.Background(), claims.Config{Backend: "svn"}); len(got) != 1 || !got[0].Fail {
		t.Errorf("unknown backend: %+v", got)
	}
}

// TestANewBackendIsItsRegistration registers a backend no face knows
// and finds it everywhere a face asks: the choices, the settings' check,
// Open, the header and a lease's detail.
func TestANewBackendIsItsRegistration(t *testing.T) {
	errNoDir := errors.New("needs dir: /path")
	opened := 0
	t.Cleanup(func() { claims.Unregister("kvtest") })
	claims.Register(claims.Description{
		Name: "kvtest",
		Open: func(cfg claims.Config) (claims.Backend, error) {
			opened++
			return nil, errors.New("kvtest opened")
		},
		Check: func(cfg claims.Config) error {
			if cfg.ProjectID == "" {
				return errNoDir
			}
			return nil
		},
		Where:  func(cfg claims.Config) string { return "kvtest at " + cfg.ProjectID },
		KeptIn: func(slug string) string { return "kvtest key " + slug },
	})
	if got := claims.Names(); !reflect.DeepEqual(got, []string{"local", "git", "kvtest", "etcd"}) {
		t.Errorf("names %v", got)
	}
	if err := claims.CheckConfig(claims.Config{Backend: "kvtest"}); err == nil || err.Error() != "backend kvtest needs dir: /path" {
		t.Errorf("check: %v", err)
	}
	if _, err := claims.Open(claims.Config{Backend: "kvtest"}); err == nil || opened != 0 {
		t.Errorf("open with bad settings: %v, opened %d times", err, opened)
	}
	if _, err := claims.OpenNamed(claims.Config{Backend: "kvtest", ProjectID: "p"}); err == nil || err.Error() != "kvtest opened" || opened != 1 {
		t.Errorf("open: %v, opened %d times", err, opened)
	}
	if claims.Where(claims.Config{Backend: "kvtest", ProjectID: "p"}) != "kvtest at p" || claims.KeptIn("kvtest", "a") != "kvtest key a" {
		t.Error("where and kept-in are the description's")
	}
	if got := claims.Doctor(context.Background(), claims.Config{Backend: "kvtest", ProjectID: "p"}); len(got) != 1 || got[0].Text != "backend kvtest" {
		t.Errorf("doctor without a Doctor: %+v", got)
	}
}
