package claims

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// LocalName is the claims the lease files keep (Local): every build has
// them, they need no settings, and they are opened from a tree, not here.
const LocalName = "local"

// Description is what a backend says of itself, so that no face and no
// settings parser names it: a new backend is its own package, whose init
// calls Register, and a blank import where the binary is put together.
type Description struct {
	// Name is what claims.backend in fleetwatch.yaml and --claims say,
	// and what its leases' Backend field shows.
	Name string
	// Says what it keeps claims in, for --claims's help ("the
	// remote's lease refs").
	Says string
	// Tag is the build tag the backend needs ("" = every build has it):
	// a build without it knows the name but cannot open it.
	Tag string
	// Open opens it; nil in a build without Tag.
	Open Opener
	// Check refuses settings it cannot open with, saying what is missing
	// ("needs endpoints: …"); nil takes any.
	Check func(cfg Config) error
	// Where names it for a header ("git origin"); nil: Name.
	Where func(cfg Config) string
	// Doctor is what doctor says of it on this machine: can it be
	// reached with cfg. nil: one line naming it.
	Doctor func(ctx context.Context, cfg Config) []Finding
	// KeptIn says where a lease on slug lives, for a lease's detail
	// ("git ref refs/fleetwatch/leases/<slug>"); nil: Name.
	KeptIn func(slug string) string
}

// Finding is one line of doctor's about a backend.
type Finding struct {
	// Fail is a setting this machine cannot work with.
	Fail bool
	Text string
}

// Opener opens one kind of backend.
type Opener func(cfg Config) (Backend, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Description{}
)

// Register makes a backend known by its description; each backend
// package calls it from init, in every build (Open nil when its Tag is
// not set), so the name is never an unknown one.
func Register(d Description) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[d.Name] = d
}

// Describe returns the description of the backend called name.
func Describe(name string) (Description, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	d, ok := registry[name]
	return d, ok
}

// Names are the backends claims.backend may name: local first, then those
// every build has, then those a build tag adds, each by name, so messages
// list them the same way every time.
func Names() []string {
	registryMu.Lock()
	ds := make([]Description, 0, len(registry))
	for _, d := range registry {
		ds = append(ds, d)
	}
	registryMu.Unlock()
	tagged := func(d Description) int {
		if d.Tag == "" {
			return 0
		}
		return 1
	}
	slices.SortFunc(ds, func(a, b Description) int {
		return cmp.Or(cmp.Compare(tagged(a), tagged(b)), strings.Compare(a.Name, b.Name))
	})
	names := []string{LocalName}
	for _, d := range ds {
		names = append(names, d.Name)
	}
	return names
}

// CheckConfig refuses cfg when its backend is unknown or its description
// refuses its settings; the words follow the claims: section's key
// ("backend: want …"), for the caller to put after the file and line.
// The local lease files ("" or local) take any.
func CheckConfig(cfg Config) error {
	if cfg.Backend == "" || cfg.Backend == LocalName {
		return nil
	}
	d, ok := Describe(cfg.Backend)
	if !ok {
		return fmt.Errorf("backend: want %s, not %q", strings.Join(Names(), ", "), cfg.Backend)
	}
	if d.Check != nil {
		if err := d.Check(cfg); err != nil {
			return fmt.Errorf("backend %s %v", d.Name, err)
		}
	}
	return nil
}

// Open opens cfg.Backend, once its description has checked cfg.
func Open(cfg Config) (Backend, error) {
	d, ok := Describe(cfg.Backend)
	switch {
	case !ok:
		return nil, fmt.Errorf("claims backend %q: %w", cfg.Backend, ErrNotBuilt)
	case d.Check != nil:
		if err := d.Check(cfg); err != nil {
			return nil, fmt.Errorf("claims backend %s %v: %w", d.Name, err, ErrUnavailable)
		}
	}
	if d.Open == nil {
		return nil, fmt.Errorf("claims backend %s: %w (build it with `go build -tags %s`)", d.Name, ErrNotBuilt, d.Tag)
	}
	return d.Open(cfg)
}

// OpenNamed opens cfg.Backend as a face holds it, named for its header.
func OpenNamed(cfg Config) (*Opened, error) {
	b, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	return &Opened{Backend: b, Where: Where(cfg)}, nil
}

// Where names cfg's backend for a header, as its description says.
func Where(cfg Config) string {
	if d, ok := Describe(cfg.Backend); ok && d.Where != nil {
		return d.Where(cfg)
	}
	return cfg.Backend
}

// Doctor is what doctor says of cfg's backend: its description's lines,
// or why cfg cannot be used.
func Doctor(ctx context.Context, cfg Config) []Finding {
	if err := CheckConfig(cfg); err != nil {
		return []Finding{{Fail: true, Text: err.Error()}}
	}
	d, _ := Describe(cfg.Backend)
	if d.Doctor == nil {
		return []Finding{{Text: "backend " + cfg.Backend}}
	}
	return d.Doctor(ctx, cfg)
}

// KeptIn says where a lease read from backend (a lease's Backend field)
// on slug lives, for a lease's detail: its description's words, else the
// backend's name.
func KeptIn(backend, slug string) string {
	if d, ok := Describe(backend); ok && d.KeptIn != nil {
		return d.KeptIn(slug)
	}
	return backend
}
