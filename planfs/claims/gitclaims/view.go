package gitclaims

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// fetch brings the integration branch, and the lease refs when leases is
// set, into the local namespace in one fetch; --prune drops the leases the
// remote no longer has.
func (l *Lanes) fetch(ctx context.Context, leases bool) error {
	// Lease refs are rewritten on every renewal: no forced-update check,
	// and no maintenance run after each of these small fetches.
	args := []string{"-c", "maintenance.auto=false", "fetch", "--no-tags", "--prune", "--no-write-fetch-head", "--no-show-forced-updates", "--quiet", l.remote,
		"+refs/heads/" + l.integration + ":" + l.ns + "heads/" + l.integration}
	if leases {
		args = append(args, "+"+LeaseRefs+"*:"+l.ns+"leases/*")
	}
	if err := l.fetchRetried(ctx, args); err != nil {
		return l.unavailable(err)
	}
	return nil
}

// fetchTries bounds the tries of one fetch that met another fleetwatch
// on this checkout half way: a race for its tracking refs (git's "cannot
// lock ref ... is at X but expected Y": that one fetched them, and the
// next try finds them moved), or a worktree being added, whose HEAD does
// not name its commit yet ("bad object worktrees/…/HEAD"). Several workers
// share a machine's checkout.
const fetchTries = 6

// transient reports whether a fetch failed on such a half-way state.
func transient(err error) bool {
	s := err.Error()
	return strings.Contains(s, "cannot lock ref") || strings.Contains(s, "bad object worktrees/")
}

// fetchRetried runs git fetch args, again after a lost race for a ref.
func (l *Lanes) fetchRetried(ctx context.Context, args []string) error {
	for try := 1; ; try++ {
		_, err := l.git.run(ctx, nil, nil, args...)
		if err == nil || try == fetchTries || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try*try*10) * time.Millisecond):
		}
	}
}

// refs lists the fetched tip and lease refs: the tip's oid, and slug → oid.
func (l *Lanes) refs(ctx context.Context) (string, map[string]string, error) {
	out, err := l.git.run(ctx, nil, nil, "for-each-ref", "--format=%(objectname) %(refname)", l.ns+"heads/"+l.integration, l.ns+"leases/")
	if err != nil {
		return "", nil, err
	}
	tip, leases := "", map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		oid, ref, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if slug, ok := strings.CutPrefix(ref, l.ns+"leases/"); ok {
			leases[slug] = oid
		} else {
			tip = oid
		}
	}
	if tip == "" {
		return "", nil, fmt.Errorf("remote %s has no branch %s: %w", l.remote, l.integration, claims.ErrUnavailable)
	}
	return tip, leases, nil
}

// Read fetches the integration branch and returns its lanes, and the commit
// they were read at.
func (l *Lanes) Read(ctx context.Context) (*model.Snapshot, string, error) {
	if err := l.fetch(ctx, false); err != nil {
		return nil, "", err
	}
	tip, _, err := l.refs(ctx)
	if err != nil {
		return nil, "", err
	}
	snap, err := l.lanesAt(ctx, tip, nil)
	if err != nil {
		return nil, "", err
	}
	return l.judged(ctx, tip, snap), tip, nil
}

// planEntry is one plan file in the tip's tree.
type planEntry struct {
	lane      model.Lane
	name, oid string
}

// planEntries are the plan files in ls-tree -r -z's output out, under
// prefix's .plans/; a symlink is skipped with a warning.
func planEntries(out []byte, prefix string) ([]planEntry, []model.Warning) {
	var entries []planEntry
	var warns []model.Warning
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, path, ok := strings.Cut(string(rec), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		rel := strings.TrimPrefix(path, prefix+".plans/")
		r, err := model.ParseRel(rel)
		if err != nil || len(f) != 3 {
			continue // not a plan: .leases/, reviews/, a README
		}
		if f[0] == "120000" {
			warns = append(warns, model.Warning{File: rel, Message: "symlink on the integration branch; skipped"})
			continue
		}
		entries = append(entries, planEntry{lane: r.Lane(), name: r.Name(), oid: f[2]})
	}
	return entries, warns
}

// missingBlobs are the objects to read: the entries' blobs not cached yet,
// and extra's.
func (l *Lanes) missingBlobs(entries []planEntry, extra map[string][]byte) map[string][]byte {
	want := map[string][]byte{}
	l.mu.Lock()
	for _, e := range entries {
		if _, ok := l.blobs[e.oid]; !ok {
			want[e.oid] = nil
		}
	}
	l.mu.Unlock()
	for k := range extra {
		want[k] = nil
	}
	return want
}

// keepBlobs hands extra's objects back through it and caches the plans'
// blobs read into want. l.mu is held.
func (l *Lanes) keepBlobs(want, extra map[string][]byte) {
	for k, v := range want {
		if _, ok := extra[k]; ok {
			extra[k] = v
		} else if v != nil {
			l.blobs[k] = v
		}
	}
}

// sortPlans orders plans by lane, then name.
func sortPlans(plans []model.Plan) {
	sort.SliceStable(plans, func(i, j int) bool {
		a, b := plans[i], plans[j]
		if a.Lane != b.Lane {
			return laneIndex(a.Lane) < laneIndex(b.Lane)
		}
		return a.Name < b.Name
	})
}

// lanesAt reads the plans of commit tip; extra are more objects to read in
// the same cat-file run (lease commits), handed back through it.
func (l *Lanes) lanesAt(ctx context.Context, tip string, extra map[string][]byte) (*model.Snapshot, error) {
	l.mu.Lock()
	cached := l.lanes
	if l.lanesTip != tip {
		cached = nil
	}
	l.mu.Unlock()
	if cached != nil {
		return cached, l.catFile(ctx, extra)
	}
	out, err := l.git.run(ctx, nil, nil, "ls-tree", "-r", "-z", "--full-tree", tip, "--", l.prefix+".plans/")
	if err != nil {
		return nil, err
	}
	snap := &model.Snapshot{}
	entries, warns := planEntries(out, l.prefix)
	snap.Warnings = warns
	want := l.missingBlobs(entries, extra)
	if err := l.catFile(ctx, want); err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.keepBlobs(want, extra)
	for _, e := range entries {
		p, warns, ok := planfs.PlanFromText(e.lane, e.name, l.blobs[e.oid], 0)
		snap.Warnings = append(snap.Warnings, warns...)
		if ok {
			snap.Plans = append(snap.Plans, p)
		}
	}
	l.mu.Unlock()
	sortPlans(snap.Plans)
	l.mu.Lock()
	l.lanesTip, l.lanes = tip, snap
	l.mu.Unlock()
	return snap, nil
}

func laneIndex(lane model.Lane) int {
	for i, l := range model.Lanes {
		if l == lane {
			return i
		}
	}
	return len(model.Lanes)
}

// catFile fills want (object name → content) through one cat-file --batch;
// a missing object stays nil.
func (l *Lanes) catFile(ctx context.Context, want map[string][]byte) error {
	if len(want) == 0 {
		return nil
	}
	names := make([]string, 0, len(want))
	var in bytes.Buffer
	for k := range want {
		names = append(names, k)
		in.WriteString(k + "\n")
	}
	out, err := l.git.run(ctx, in.Bytes(), nil, "cat-file", "--batch")
	if err != nil {
		return err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, name := range names {
		head, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file: short output")
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			continue // "<name> missing"
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("git cat-file: bad header %q", head)
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			return fmt.Errorf("git cat-file: short output")
		}
		want[name] = data[:n]
	}
	return nil
}

// View reads the lanes and every lease in one fetch, skipped when the
// remote's refs are all as last fetched: an ls-remote costs a fraction of
// a fetch that finds nothing new, and a listing or a face mostly does.
func (b *Backend) View(ctx context.Context) (*claims.View, error) {
	now, nowRefs, err := b.remoteRefs(ctx)
	if err != nil {
		return nil, err
	}
	return b.viewAt(ctx, now, nowRefs)
}

// viewAt is View once the remote has said it holds tip now and nowRefs.
func (b *Backend) viewAt(ctx context.Context, now string, nowRefs map[string]string) (*claims.View, error) {
	read := time.Now()
	tip, refs, err := b.refs(ctx)
	if err != nil || tip != now || !maps.Equal(refs, nowRefs) {
		if err := b.fetch(ctx, true); err != nil {
			return nil, err
		}
		read = time.Now()
		if tip, refs, err = b.refs(ctx); err != nil {
			return nil, err
		}
	}
	extra := map[string][]byte{}
	b.mu.Lock()
	for _, oid := range refs {
		if _, ok := b.leases[oid]; !ok {
			extra[oid+":lease.json"] = nil
		}
	}
	b.mu.Unlock()
	lanes, err := b.lanesAt(ctx, tip, extra)
	if err != nil {
		return nil, err
	}
	lanes = b.judged(ctx, tip, lanes)
	seen, err := b.observe(refs)
	if err != nil {
		return nil, fmt.Errorf("cannot keep this machine's lease clock: %v", err)
	}
	v := &claims.View{Tip: tip, ReadAt: read}
	b.mu.Lock()
	for slug, oid := range refs {
		if data, ok := extra[oid+":lease.json"]; ok {
			b.leases[oid] = decodeLease(data)
		}
		v.Leases = append(v.Leases, remoteOf(slug, oid, b.leases[oid], seen[slug]))
	}
	b.mu.Unlock()
	return overlaid(v, lanes), nil
}

// overlaid sorts v's leases and lays them over lanes as v's snapshot,
// which names each lease ref after its plan's slug (RefNamed).
func overlaid(v *claims.View, lanes *model.Snapshot) *claims.View {
	sort.Slice(v.Leases, func(i, j int) bool { return v.Leases[i].Slug < v.Leases[j].Slug })
	named := *lanes
	named.RefNamed = true
	v.Snapshot = claims.Overlay(&named, v.Leases, float64(v.ReadAt.UnixNano())/1e9)
	return v
}

// decodeLease reads a lease commit's lease.json; one that cannot be read
// is a corrupt lease, which blocks its plan until recovered.
func decodeLease(data []byte) model.Lease {
	if data == nil {
		return model.Lease{Corrupt: "lease commit has no lease.json"}
	}
	l, err := model.DecodeLease(data)
	if err != nil {
		return model.Lease{Corrupt: err.Error()}
	}
	return l
}

// remoteOf judges one lease by this machine's clock: live until seen
// unchanged for its TTL plus grace.
func remoteOf(slug, oid string, l model.Lease, seen time.Duration) claims.Remote {
	l.Backend = backendName
	ttl := time.Duration(l.TTL * float64(time.Second))
	if ttl <= 0 {
		ttl = claims.DefaultTTL
	}
	need := ttl + claims.Grace(ttl)
	return claims.Remote{Lease: l, Slug: slug, Version: oid, SeenFor: seen, Need: need, Live: l.Corrupt == "" && seen < need}
}

// Glance is a view for picking at the cost of one ls-remote: the lease refs
// as the remote holds them now, each with the lease this backend read
// before or an unknown holder; the lanes are fetched again only when the
// integration branch moved. A claim needs no more: its create-only push
// decides, and a plan under any lease is not picked.
func (b *Backend) Glance(ctx context.Context) (*claims.View, error) {
	tip, refs, err := b.remoteRefs(ctx)
	if err != nil {
		return nil, err
	}
	read := time.Now()
	b.mu.Lock()
	lanes := b.lanes
	if b.lanesTip != tip {
		lanes = nil
	}
	b.mu.Unlock()
	if lanes == nil {
		// A new process: the branch as last fetched is as good when the
		// remote's is the same commit.
		if local, _, err := b.refs(ctx); err == nil && local == tip {
			if lanes, err = b.lanesAt(ctx, tip, nil); err != nil {
				return nil, err
			}
		}
	}
	if lanes == nil {
		// The branch moved: the full view reads it, and the leases with it.
		return b.viewAt(ctx, tip, refs)
	}
	lanes = b.judged(ctx, tip, lanes)
	// The lease clock is left alone: a lease seen for less time than it
	// has been is only ever judged live for longer, and a pick needs no
	// more than that a plan is leased.
	v := &claims.View{Tip: tip, ReadAt: read, Leases: make([]claims.Remote, 0, len(refs))}
	b.mu.Lock()
	for slug, oid := range refs {
		l, ok := b.leases[oid]
		if !ok {
			l = model.Lease{AgentID: "(not read)"}
		}
		v.Leases = append(v.Leases, remoteOf(slug, oid, l, 0))
	}
	b.mu.Unlock()
	return overlaid(v, lanes), nil
}

// remoteRefs asks the remote, in one ls-remote, for the integration
// branch's tip and every lease ref: slug → oid.
func (l *Lanes) remoteRefs(ctx context.Context) (string, map[string]string, error) {
	head := "refs/heads/" + l.integration
	out, err := l.git.run(ctx, nil, nil, "ls-remote", l.remote, head, LeaseRefs+"*")
	if err != nil {
		return "", nil, l.unavailable(err)
	}
	tip, refs := "", map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		oid, ref, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if slug, ok := strings.CutPrefix(ref, LeaseRefs); ok {
			refs[slug] = oid
		} else if ref == head {
			tip = oid
		}
	}
	if tip == "" {
		return "", nil, fmt.Errorf("remote %s has no branch %s: %w", l.remote, l.integration, claims.ErrUnavailable)
	}
	return tip, refs, nil
}
