package look

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	endpoints "github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// SpawnEndpoint is an endpoint as a spawn form offers it.
type SpawnEndpoint struct{ Name, Tier, Model string }

// SpawnOffer is what a worker started by hand may run as in a project:
// its endpoints, why endpoints.yaml could not be read, and whether the
// project is a git repository (run workers then get worktrees). It lets a
// face offer the choices without reading the project's files itself.
type SpawnOffer struct {
	Endpoints []SpawnEndpoint
	Problem   string // paths in it are relative to the project
	Git       bool
}

// Offer reads what a spawn may choose from in project; a missing
// endpoints.yaml is no problem (tiers only).
func Offer(project string) SpawnOffer {
	var o SpawnOffer
	reg, err := endpoints.Load(endpoints.Path(project))
	switch {
	case err == nil:
		for _, ep := range reg.Endpoints {
			o.Endpoints = append(o.Endpoints, SpawnEndpoint{Name: ep.Name, Tier: ep.Tier, Model: ep.Model})
		}
	case !errors.Is(err, fs.ErrNotExist):
		// The project is known: the reason needs the room.
		o.Problem = strings.ReplaceAll(err.Error(), project+string(filepath.Separator), "")
	}
	_, err = tree.Project(project)
	o.Git = err == nil
	return o
}
