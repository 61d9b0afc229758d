package cli

import (
	"cmp"
	"fmt"
	"io"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	// The backends this fleetwatch knows: each registers its description.
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/etcdclaims"
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

// claimsBackend is the claims backend a verb works through: --claims when
// given, else fleetwatch.yaml's `claims: {backend: …}`; "local" (the lease
// files) when neither names another. The file's claims: section is checked
// by its backend's description, at its line, as config checks the rest.
func claimsBackend(project, flag string) (string, config.Settings, error) {
	name, s, err := claimsChoice(project, flag)
	if err != nil {
		return "", s, err
	}
	return name, s, checkChosen(project, s, name)
}

// claimsChoice is claimsBackend before the chosen backend's settings are
// checked: a choice the project refuses says so before what it lacks.
func claimsChoice(project, flag string) (string, config.Settings, error) {
	s, err := config.Load(project)
	if err != nil {
		return "", s, err
	}
	if err := checkClaimsSection(project, s); err != nil {
		return "", s, err
	}
	name := s.Claims.Backend
	if flag != "" {
		name = flag
	}
	if name == "" || name == claims.LocalName {
		return claims.LocalName, s, nil
	}
	if _, ok := claims.Describe(name); !ok {
		return "", s, fmt.Errorf("--claims: want %s, not %q", orList(claims.Names()), flag)
	}
	return name, s, nil
}

// checkChosen refuses a chosen backend whose settings its description
// refuses (etcd without endpoints).
func checkChosen(project string, s config.Settings, name string) error {
	if name == claims.LocalName {
		return nil
	}
	if err := claims.CheckConfig(claimsConfig(project, s, name)); err != nil {
		return fmt.Errorf("--claims %s: %v (set them in %s's claims:)", name, err, config.File)
	}
	return nil
}

// checkClaimsSection refuses a claims: section its backend's description
// refuses (or an unknown backend), naming the file and line.
func checkClaimsSection(project string, s config.Settings) error {
	if err := claims.CheckConfig(claimsConfig(project, s, s.Claims.Backend)); err != nil {
		return fmt.Errorf("%s:%d: claims: %v", s.Path, s.Claims.Line, err)
	}
	return nil
}

// claimsConfig is what opening backend name for project needs, from its
// settings.
func claimsConfig(project string, s config.Settings, name string) claims.Config {
	return claims.Config{
		Backend: name, Project: project, Integration: s.Integration,
		Remote: s.Claims.Remote, Endpoints: s.Claims.Endpoints, ProjectID: s.Claims.Project,
	}
}

// claimsChoices are the backends --claims takes, each with what it keeps
// claims in: "local (lease files), git (the remote's lease refs) or …".
func claimsChoices() string {
	var out []string
	for _, name := range claims.Names() {
		says := "lease files"
		if d, ok := claims.Describe(name); ok {
			says = d.Says
		}
		if says != "" {
			name += " (" + says + ")"
		}
		out = append(out, name)
	}
	return orList(out)
}

// openClaims opens the remote claims backend for project; nil (and no
// error) when claims are the local lease files.
func openClaims(project, flag string) (claims.Backend, error) {
	name, s, err := claimsBackend(project, flag)
	if err != nil || name == claims.LocalName {
		return nil, err
	}
	return claims.Open(claimsConfig(project, s, name))
}

// actingClaims is claimsBackend for a worker or an operator verb, which
// writes claims: a --claims that differs from the project's fleetwatch.yaml
// is refused (a worker on other leases than the fleet's claims plans the
// fleet holds), except --claims local, said on purpose, which is warned
// about. where names the choice for messages.
func actingClaims(project, flag string, stderr io.Writer) (name string, s config.Settings, where string, err error) {
	name, s, err = claimsChoice(project, flag)
	if err != nil {
		return "", s, "", err
	}
	kept := cmp.Or(s.Claims.Backend, claims.LocalName)
	where = "--claims " + name
	switch {
	case flag == "":
		where = config.File + " claims.backend " + name
	case name == kept:
	case name == claims.LocalName:
		say(stderr, "warning: --claims local: %s keeps this project's claims in %s; leases held there are not seen, and this run may take a plan another machine holds", config.File, kept)
	default:
		return "", s, "", fmt.Errorf("--claims %s: %s keeps this project's claims in %s; a worker or verb on other claims would take plans the fleet holds (drop --claims, or change %s)", name, config.File, kept, config.File)
	}
	if err := checkChosen(project, s, name); err != nil {
		return "", s, "", err
	}
	return name, s, where, nil
}

// backendNotices are a backend view's notices about no plan file
// (claims.Notices).
func backendNotices(s *model.Snapshot) []model.Warning { return claims.Notices(s) }
