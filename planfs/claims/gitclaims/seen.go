package gitclaims

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
)

// seenFile is where this machine keeps, per lease ref, the oid it last saw
// and since when on its own clock: a takeover waits for a lease to stay
// unchanged for its TTL plus grace as counted here, never by the holder's
// expires_at, so clocks that disagree cannot steal a live lease.
type seenFile struct {
	BootID string               `json:"boot_id"`
	Leases map[string]seenEntry `json:"leases"`
}

type seenEntry struct {
	Oid   string  `json:"oid"`
	Since float64 `json:"since"` // CLOCK_BOOTTIME seconds
}

// observe records that refs (slug → lease commit) were seen now and returns
// how long each has been seen unchanged. A new boot starts every count
// again: the old counts are on a clock that no longer runs.
func (b *Backend) observe(refs map[string]string) (map[string]time.Duration, error) {
	return b.observeIn("seen-"+safeName(b.remote)+".json", refs)
}

// observeIn is observe with its record in var/fleet/claims/name: the
// lease refs and the worker refs (fleet.go) each keep their own.
func (b *Backend) observeIn(name string, refs map[string]string) (map[string]time.Duration, error) {
	return Observe(b.project, name, refs)
}

// Observe records in project's var/fleet/claims/name that refs (name →
// version) were seen now, and returns how long this machine has seen each
// unchanged, on its boot clock: etcd's worker keys are judged by it too.
func Observe(project, name string, refs map[string]string) (map[string]time.Duration, error) {
	rel := filepath.Join("var", "fleet", "claims", name)
	unlock, err := safepath.Lock(project, rel+".lock", 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer unlock()
	now, boot := bootClock(), bootID()
	var old seenFile
	if f, err := safepath.OpenFile(project, rel, os.O_RDONLY, 0); err == nil {
		_ = json.NewDecoder(f).Decode(&old) // a torn or foreign file starts afresh
		f.Close()
	}
	if old.BootID != boot {
		old.Leases = nil
	}
	next := seenFile{BootID: boot, Leases: make(map[string]seenEntry, len(refs))}
	out := make(map[string]time.Duration, len(refs))
	changed := len(old.Leases) != len(refs)
	for slug, oid := range refs {
		e, ok := old.Leases[slug]
		if !ok || e.Oid != oid || e.Since > now {
			e, changed = seenEntry{Oid: oid, Since: now}, true
		}
		next.Leases[slug] = e
		out[slug] = time.Duration((now - e.Since) * float64(time.Second))
	}
	if changed {
		data, _ := json.Marshal(next)
		dir, err := safepath.OpenDir(project, filepath.Dir(rel), true)
		if err != nil {
			return nil, err
		}
		defer dir.Close()
		if err := atomicfile.WriteAt(dir, filepath.Base(rel), data, 0o644); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SeenFor is how long this machine has seen name at version unchanged, as
// project's var/fleet/claims/file says, recording nothing: a read of one
// record. 0 when the file has not seen that version on this boot.
func SeenFor(project, file, name, version string) time.Duration {
	f, err := safepath.OpenFile(project, filepath.Join("var", "fleet", "claims", file), os.O_RDONLY, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	var old seenFile
	if json.NewDecoder(f).Decode(&old) != nil || old.BootID != bootID() {
		return 0
	}
	e, ok := old.Leases[name]
	now := bootClock()
	if !ok || e.Oid != version || e.Since > now {
		return 0
	}
	return time.Duration((now - e.Since) * float64(time.Second))
}

// safeName keeps a remote's name usable in a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '.' && len(s) < 3 {
			return '_'
		}
		return r
	}, s)
}
