package cli

import (
	"fmt"
	"io"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims" // registers the git backend
)

// claimsBackend is the claims backend a verb works through: --claims when
// given, else fleetwatch.yaml's `claims: {backend: …}`; "local" (the lease
// files) when neither names another.
func claimsBackend(project, flag string) (string, config.Settings, error) {
	s, err := config.Load(project)
	if err != nil {
		return "", s, err
	}
	name := s.Claims.Backend
	if flag != "" {
		name = flag
	}
	switch name {
	case "", "local":
		return "local", s, nil
	case "git", "etcd":
		return name, s, nil
	}
	return "", s, fmt.Errorf("--claims: want local, git or etcd, not %q", flag)
}

// openClaims opens the remote claims backend for project; nil (and no
// error) when claims are the local lease files.
func openClaims(project, flag string) (claims.Backend, error) {
	name, s, err := claimsBackend(project, flag)
	if err != nil || name == "local" {
		return nil, err
	}
	if name == "etcd" && len(s.Claims.Endpoints) == 0 {
		return nil, fmt.Errorf("--claims etcd: no etcd endpoints; set claims: {backend: etcd, endpoints: [http://HOST:2379]} in %s", config.File)
	}
	return claims.Open(claims.Config{
		Backend: name, Project: project, Integration: s.Integration,
		Remote: s.Claims.Remote, Endpoints: s.Claims.Endpoints, ProjectID: s.Claims.Project,
	})
}

// actingClaims is claimsBackend for a worker or an operator verb, which
// writes claims: a --claims that differs from the project's fleetwatch.yaml
// is refused (a worker on other leases than the fleet's claims plans the
// fleet holds), except --claims local, said on purpose, which is warned
// about. where names the choice for messages.
func actingClaims(project, flag string, stderr io.Writer) (name string, s config.Settings, where string, err error) {
	name, s, err = claimsBackend(project, flag)
	if err != nil {
		return "", s, "", err
	}
	kept := s.Claims.Backend
	if kept == "" {
		kept = "local"
	}
	switch {
	case flag == "":
		return name, s, config.File + " claims.backend " + name, nil
	case name == kept:
	case name == "local":
		say(stderr, "warning: --claims local: %s keeps this project's claims in %s; leases held there are not seen, and this run may take a plan another machine holds", config.File, kept)
	default:
		return "", s, "", fmt.Errorf("--claims %s: %s keeps this project's claims in %s; a worker or verb on other claims would take plans the fleet holds (drop --claims, or change %s)", name, config.File, kept, config.File)
	}
	return name, s, "--claims " + name, nil
}

// backendNotices are a backend view's notices about no plan file
// (claims.Notices).
func backendNotices(s *model.Snapshot) []model.Warning { return claims.Notices(s) }
