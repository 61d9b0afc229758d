package gitclaims

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/refname"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// WorkerRefs is the remote namespace of worker records: one ref per
// worker, refs/fleetwatch/workers/<host>/<agent>, whose commit holds
// worker.json. Each commit has no parent: a record replaces the last, and
// the remote keeps no history of heartbeats.
const WorkerRefs = "refs/fleetwatch/workers/"

var _ claims.Fleet = (*Backend)(nil)

// fleetState is what this process knows of the worker refs: the commit it
// last pushed per ref (its compare-and-swap value) and the records it has
// decoded, by ref name and commit: the same commit pushed under another
// worker's ref is read, and refused, there on its own.
type fleetState struct {
	mu      sync.Mutex
	pushed  map[string]string           // ref → the commit this process last pushed there
	records map[string]claims.Published // recordKey(name, commit) → its record as decoded
	pruned  bool                        // this process looked for records to prune
	// noticesPruned: this process looked for notice refs to prune
	// (noticeonce.go).
	noticesPruned bool
}

func recordKey(name, oid string) string { return name + " " + oid }

// WorkerRef is the ref of agent's record on host, each name made safe for
// a ref: every byte but letters, digits, - and _ is %XX, so two names
// never share a ref and git takes every one.
func WorkerRef(host, agent string) string {
	return WorkerRefs + WorkerName(host, agent)
}

// WorkerName is WorkerRef without its namespace: "<host>/<agent>", each
// escaped; etcd's worker keys end with it too.
func WorkerName(host, agent string) string { return refPart(host) + "/" + refPart(agent) }

func refPart(s string) string {
	if s == "" {
		return "%00"
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// NamesOf reads host and agent back from a worker's name (WorkerName); ok
// is false for a name this version did not write, so two spellings of one
// worker ("%41" and "A") are never both taken for it.
func NamesOf(name string) (host, agent string, ok bool) {
	h, a, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(a, "/") {
		return "", "", false
	}
	host, err1 := url.PathUnescape(h)
	agent, err2 := url.PathUnescape(a)
	if err1 != nil || err2 != nil || WorkerName(host, agent) != name {
		return "", "", false
	}
	return host, agent, true
}

// recordCommit writes a parentless commit holding rec as worker.json and,
// when box is not nil, the pending mail as mail.json: faces read only the
// record, so a full mailbox never slows or bloats what they read.
func (b *Backend) recordCommit(ctx context.Context, rec claims.WorkerRecord, box []byte) (string, error) {
	var tree []byte
	for _, f := range []struct {
		name string
		data []byte
	}{{"mail.json", box}, {"worker.json", claims.EncodeRecord(rec)}} { // a tree's entries in name order
		if f.data == nil {
			continue
		}
		blob, err := b.writeObject(ctx, "blob", f.data)
		if err != nil {
			return "", err
		}
		raw, err := hex.DecodeString(blob)
		if err != nil {
			return "", fmt.Errorf("git hash-object: bad id %q", blob)
		}
		tree = append(append(tree, "100644 "+f.name+"\x00"...), raw...)
	}
	treeID, err := b.writeObject(ctx, "tree", tree)
	if err != nil {
		return "", err
	}
	who := fmt.Sprintf("fleetwatch <fleetwatch@localhost> %d +0000", int64(rec.Heartbeat))
	text := "tree " + treeID + "\nauthor " + who + "\ncommitter " + who + "\n\nworker " + rec.Host + " " + rec.AgentID + " " + rec.State + "\n"
	return b.writeObject(ctx, "commit", []byte(text))
}

// Publish pushes rec as its worker's ref: create-only the first time, then
// compare-and-swap on the commit this process last pushed — one push per
// heartbeat. A push refused because the ref moved reads it (the only
// read a publish ever makes): a stop request and the mail for rec.Run come
// back to the driver; either way rec then replaces what is there (an
// earlier run's record, the request, the mail read), by compare-and-swap
// on what was read, so only mail that came back is ever taken away.
func (b *Backend) Publish(ctx context.Context, rec claims.WorkerRecord) (claims.Inbound, error) {
	var in claims.Inbound
	ref := WorkerRef(rec.Host, rec.AgentID)
	if p := refname.Problem(ref); p != "" {
		return in, fmt.Errorf("worker ref %s: %s", ref, p)
	}
	b.pruneOnce(ctx, ref)
	b.fleet.mu.Lock()
	old := b.fleet.pushed[ref]
	b.fleet.mu.Unlock()
	oid, err := b.recordCommit(ctx, rec, nil)
	if err != nil {
		return in, err
	}
	wait := 150 * time.Millisecond
	// Each message or stop sent costs a publish one try: a few senders at
	// once still leave it one that lands.
	for try := 0; try < 6; try++ {
		res, err := b.push(ctx, []update{{Ref: ref, Old: old, New: oid}})
		if err != nil {
			return in, err
		}
		o := res[ref]
		switch {
		case o.ok:
			b.setPushed(ref, oid)
			return in, nil
		case namespaceRefused(o.reason):
			return in, fmt.Errorf("remote %s refuses %s: %s: %w", b.remote, ref, o.reason, claims.ErrUnavailable)
		case lockHeld(o):
			time.Sleep(wait)
			wait *= 2
			continue
		}
		cur, p, err := b.readRecord(ctx, ref)
		if err != nil {
			return in, err
		}
		// Heard, and then replaced by this record all the same: a
		// driver's final record must land whatever was asked of it.
		if err := b.heard(ctx, &in, cur, p, rec); err != nil {
			return in, err
		}
		old = cur
	}
	return in, fmt.Errorf("%s: the ref kept moving under this worker's pushes: %w", ref, claims.ErrLost)
}

// heard adds to in what the ref's commit cur (its record p) holds for
// rec's run: its stop request, the first heard, and its mail not heard
// yet. Mail that git could not read now is an error: the publish must not
// replace it unheard (but a final record lands all the same, its run
// over); a list that is no list is said in in.Problem and replaced.
func (b *Backend) heard(ctx context.Context, in *claims.Inbound, cur string, p *claims.Published, rec claims.WorkerRecord) error {
	if cur == "" {
		return nil
	}
	if p != nil && p.Problem == "" && in.Stop == nil {
		in.Stop = p.StopFor(rec.Run)
	}
	box, err := b.readMail(ctx, cur)
	switch {
	case errors.Is(err, errBadMail):
		in.Problem = err.Error()
	case err != nil && rec.State != claims.WorkerExited:
		return fmt.Errorf("%s: the mail waiting there could not be read, so this record does not replace it yet: %w", WorkerRef(rec.Host, rec.AgentID), err)
	}
	for _, m := range claims.MailFor(box, rec.Run) {
		if !slices.ContainsFunc(in.Mail, func(h claims.Message) bool { return h.ID == m.ID }) {
			in.Mail = append(in.Mail, m)
		}
	}
	return nil
}

func (b *Backend) setPushed(ref, oid string) {
	b.fleet.mu.Lock()
	defer b.fleet.mu.Unlock()
	if b.fleet.pushed == nil {
		b.fleet.pushed = map[string]string{}
	}
	b.fleet.pushed[ref] = oid
}

// readRecord reads one worker ref as the remote holds it now: its commit
// ("" when there is none) and its record.
func (b *Backend) readRecord(ctx context.Context, ref string) (string, *claims.Published, error) {
	out, err := b.git.run(ctx, nil, nil, "ls-remote", b.remote, ref)
	if err != nil {
		return "", nil, b.unavailable(err)
	}
	oid, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if oid == "" {
		return "", nil, nil
	}
	name := strings.TrimPrefix(ref, WorkerRefs)
	if p, ok := b.cached(name, oid); ok {
		return oid, &p, nil
	}
	local := b.ns + "workers/" + name
	if _, err := b.git.run(ctx, nil, nil, "fetch", "--no-tags", "--no-write-fetch-head", "--quiet", b.remote, "+"+ref+":"+local); err != nil {
		return "", nil, b.unavailable(err)
	}
	// The ref may have moved since it was listed: what was fetched is
	// what is read, and what a compare-and-swap then expects.
	if oid, err = b.git.line(ctx, "rev-parse", "--verify", "--quiet", local+"^{commit}"); err != nil || oid == "" {
		return "", nil, fmt.Errorf("worker ref %s: not fetched (%v); ask again", ref, err)
	}
	if p, ok := b.cached(name, oid); ok {
		return oid, &p, nil
	}
	recs := b.decodeRecords(ctx, map[string]string{name: oid})
	p, ok := recs[name]
	if !ok {
		p = recordOf(name, oid, nil, 0)
		p.Problem = "worker record " + ref + ": not read; ask again"
	}
	return oid, &p, nil
}

func (b *Backend) cached(name, oid string) (claims.Published, bool) {
	b.fleet.mu.Lock()
	defer b.fleet.mu.Unlock()
	p, ok := b.fleet.records[recordKey(name, oid)]
	return p, ok
}

// decodeRecords reads the records of refs (name → commit) not yet decoded
// and returns every one of them by name: their sizes in one cat-file, then
// those within claims.MaxRecord, decodeBatch at a time (a larger one is
// never read into memory, nor a flood all at once).
func (b *Backend) decodeRecords(ctx context.Context, refs map[string]string) map[string]claims.Published {
	want := b.undecoded(refs)
	objs := slices.Sorted(maps.Keys(want))
	sizes, err := b.objectSizes(ctx, objs)
	decoded := map[string]claims.Published{}
	for start := 0; err == nil && start < len(objs); start += decodeBatch {
		batch := objs[start:min(start+decodeBatch, len(objs))]
		err = b.decodeSome(ctx, batch, sizes, want, refs, decoded) // on error, not cached: read again next time
	}
	out := make(map[string]claims.Published, len(refs))
	b.fleet.mu.Lock()
	defer b.fleet.mu.Unlock()
	maps.Copy(b.fleet.records, decoded)
	for name, oid := range refs {
		if p, ok := b.fleet.records[recordKey(name, oid)]; ok {
			out[name] = p
		}
	}
	return out
}

// undecoded are the record objects of refs not decoded yet, each
// ("<commit>:worker.json") with the names whose record it is.
func (b *Backend) undecoded(refs map[string]string) map[string][]string {
	want := map[string][]string{}
	b.fleet.mu.Lock()
	defer b.fleet.mu.Unlock()
	if b.fleet.records == nil {
		b.fleet.records = map[string]claims.Published{}
	}
	for name, oid := range refs {
		if _, ok := b.fleet.records[recordKey(name, oid)]; !ok {
			obj := oid + ":worker.json"
			want[obj] = append(want[obj], name)
		}
	}
	return want
}

// decodeSome reads batch's objects within claims.MaxRecord in one
// cat-file and decodes each name's record into decoded; a larger or
// missing one is decoded by its size alone.
func (b *Backend) decodeSome(ctx context.Context, batch []string, sizes map[string]int64, want map[string][]string, refs map[string]string, decoded map[string]claims.Published) error {
	read := map[string][]byte{}
	for _, obj := range batch {
		if n, ok := sizes[obj]; ok && n <= claims.MaxRecord {
			read[obj] = nil
		}
	}
	if err := b.catFile(ctx, read); err != nil {
		return err
	}
	for _, obj := range batch {
		size, found := sizes[obj]
		if !found {
			size = -1
		}
		for _, name := range want[obj] {
			decoded[recordKey(name, refs[name])] = recordOf(name, refs[name], read[obj], size)
		}
	}
	return nil
}

// decodeBatch is how many records one cat-file reads: at most 4 MiB.
const decodeBatch = 256

// objectSizes asks git the size of each object named (git cat-file
// --batch-check); one that is missing is not in the answer.
func (b *Backend) objectSizes(ctx context.Context, objs []string) (map[string]int64, error) {
	sizes := make(map[string]int64, len(objs))
	if len(objs) == 0 {
		return sizes, nil
	}
	out, err := b.git.run(ctx, []byte(strings.Join(objs, "\n")+"\n"), nil, "cat-file", "--batch-check")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(objs) {
		return nil, fmt.Errorf("git cat-file --batch-check: %d answers to %d objects", len(lines), len(objs))
	}
	for i, line := range lines {
		if f := strings.Fields(line); len(f) == 3 {
			if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				sizes[objs[i]] = n
			}
		}
	}
	return sizes, nil
}

// recordOf decodes the record of ref name at commit oid, size bytes (-1:
// the commit holds no worker.json); one that cannot be read, or names
// another worker than its ref, is a problem shown under the ref's own
// names.
func recordOf(name, oid string, data []byte, size int64) claims.Published {
	host, agent, ok := NamesOf(name)
	if !ok {
		host, agent = name, "?"
	}
	bad := func(why string) claims.Published {
		return claims.Published{WorkerRecord: claims.WorkerRecord{Host: claims.Clip(host, 256), AgentID: claims.Clip(agent, 256)}, Version: oid, Problem: why}
	}
	switch {
	case !ok:
		return bad("worker ref " + WorkerRefs + name + ": not a name fleetwatch writes")
	case size < 0:
		return bad("worker record " + WorkerRefs + name + ": commit has no worker.json")
	case size > claims.MaxRecord:
		return bad(fmt.Sprintf("worker record %s%s: %d bytes, more than %d; not read", WorkerRefs, name, size, claims.MaxRecord))
	}
	rec, err := claims.DecodeRecord(WorkerRefs+name, data)
	if err != nil {
		return bad(err.Error())
	}
	if rec.Host != claims.Clip(host, 256) || rec.AgentID != claims.Clip(agent, 256) {
		return bad(fmt.Sprintf("worker record %s%s names %s on %s", WorkerRefs, name, rec.AgentID, rec.Host))
	}
	return claims.Published{WorkerRecord: rec, Version: oid}
}

// Workers reads the worker refs (allWorkers) and keeps those claims.Pick
// chooses, with a row saying how many more the remote holds.
func (b *Backend) Workers(ctx context.Context) ([]claims.Published, error) {
	_, out, err := b.workers(ctx)
	return out, err
}

// workers is Workers with each record's ref name beside it ("" for the
// row saying how many were not shown).
func (b *Backend) workers(ctx context.Context) ([]string, []claims.Published, error) {
	names, all, err := b.allWorkers(ctx)
	if err != nil {
		return nil, nil, err
	}
	keep, more := claims.Pick(all)
	shown := make([]string, 0, len(all)-more+1)
	out := make([]claims.Published, 0, len(all)-more+1)
	for i, p := range all {
		if keep[i] {
			shown, out = append(shown, names[i]), append(out, p)
		}
	}
	if more > 0 {
		shown = append(shown, "")
		out = append(out, claims.Published{WorkerRecord: claims.WorkerRecord{Host: claims.Clip(b.remote, 256), AgentID: "…"},
			Problem: fmt.Sprintf("%d more worker records on %s, beyond the %d shown (at most %d a host, readable ones first)",
				more, b.remote, claims.MaxWorkers, claims.MaxWorkersPerHost)})
	}
	return shown, out, nil
}

// allWorkers reads every worker ref, in name order: one ls-remote, and a
// fetch of the refs only when one changed since the last read, then the
// records not yet decoded. Each is judged by how long this machine has
// seen its worker's heartbeat unchanged (claims.Judge), on its own clock:
// a stop request written into a record is no heartbeat, so it never makes
// a dead worker look alive.
func (b *Backend) allWorkers(ctx context.Context) ([]string, []claims.Published, error) {
	refs, err := b.remoteWorkerRefs(ctx)
	if err != nil {
		return nil, nil, err
	}
	b.fleet.mu.Lock()
	fetch := false
	for name, oid := range refs {
		if _, ok := b.fleet.records[recordKey(name, oid)]; !ok {
			fetch = true
		}
	}
	b.fleet.mu.Unlock()
	if fetch {
		if refs, err = b.fetchWorkerRefs(ctx); err != nil {
			return nil, nil, err
		}
	}
	names := slices.Sorted(maps.Keys(refs))
	recs := b.decodeRecords(ctx, refs)
	b.forgetRecords(refs)
	beats := make(map[string]string, len(refs))
	for name, oid := range refs {
		p, ok := recs[name]
		beats[name] = beat(p, ok, oid)
	}
	seen, err := b.observeIn(b.workersSeen(), beats)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot keep this machine's worker clock: %v", err)
	}
	out := make([]claims.Published, 0, len(names))
	for _, name := range names {
		p, ok := recs[name]
		if !ok {
			p = recordOf(name, refs[name], nil, 0)
			p.Problem = "worker record " + WorkerRefs + name + ": not fetched; read again"
		}
		p.SeenFor = seen[name]
		p.Health = claims.Judge(p.WorkerRecord, p.SeenFor)
		out = append(out, p)
	}
	return names, out, nil
}

// workersSeen is the file under var/fleet/claims/ of this machine's worker
// clock.
func (b *Backend) workersSeen() string { return "seen-workers-" + safeName(b.remote) + ".json" }

// beat is what the worker clock watches of a record at commit oid: its
// run, state and heartbeat stamp; the commit itself when it could not be
// read (ok false, or a problem).
func beat(p claims.Published, ok bool, oid string) string {
	if ok && p.Problem == "" {
		return fmt.Sprintf("%s %s %v", p.Run, p.State, p.Heartbeat)
	}
	return oid
}

// Worker reads host's agent's own ref (ls-remote of that ref, and a fetch
// of it when its commit is new here), judged by this machine's worker
// clock as Workers last recorded it, without recording anything.
func (b *Backend) Worker(ctx context.Context, host, agent string) (claims.Published, error) {
	ref := WorkerRef(host, agent)
	if p := refname.Problem(ref); p != "" {
		return claims.Published{}, fmt.Errorf("worker ref %s: %s", ref, p)
	}
	oid, p, err := b.readRecord(ctx, ref)
	switch {
	case err != nil:
		return claims.Published{}, err
	case oid == "":
		return claims.Published{}, fmt.Errorf("%s on %s: %w", agent, host, claims.ErrNoWorker)
	}
	p.SeenFor = SeenFor(b.project, b.workersSeen(), WorkerName(host, agent), beat(*p, true, oid))
	p.Health = claims.Judge(p.WorkerRecord, p.SeenFor)
	return *p, nil
}

// remoteWorkerRefs lists the worker refs as the remote holds them now:
// name (after WorkerRefs) → commit.
func (b *Backend) remoteWorkerRefs(ctx context.Context) (map[string]string, error) {
	out, err := b.git.run(ctx, nil, nil, "ls-remote", b.remote, WorkerRefs+"*")
	if err != nil {
		return nil, b.unavailable(err)
	}
	return refLines(string(out), "\t", WorkerRefs), nil
}

// fetchWorkerRefs fetches every worker ref (pruning those gone) and lists
// them as fetched.
func (b *Backend) fetchWorkerRefs(ctx context.Context) (map[string]string, error) {
	local := b.ns + "workers/"
	if _, err := b.git.run(ctx, nil, nil, "-c", "maintenance.auto=false", "fetch", "--no-tags", "--prune", "--no-write-fetch-head",
		"--no-show-forced-updates", "--quiet", b.remote, "+"+WorkerRefs+"*:"+local+"*"); err != nil {
		return nil, b.unavailable(err)
	}
	out, err := b.git.run(ctx, nil, nil, "for-each-ref", "--format=%(objectname) %(refname)", local)
	if err != nil {
		return nil, err
	}
	return refLines(string(out), " ", local), nil
}

// refLines reads "oid<sep>ref" lines under prefix: name → oid.
func refLines(out, sep, prefix string) map[string]string {
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		oid, ref, ok := strings.Cut(line, sep)
		if name, under := strings.CutPrefix(ref, prefix); ok && under && name != "" {
			refs[name] = oid
		}
	}
	return refs
}

// forgetRecords drops the decoded records no ref holds any more: every
// heartbeat is a new commit.
func (b *Backend) forgetRecords(refs map[string]string) {
	b.fleet.mu.Lock()
	defer b.fleet.mu.Unlock()
	if len(b.fleet.records) <= 2*len(refs)+16 {
		return
	}
	keep := make(map[string]bool, len(refs))
	for _, oid := range refs {
		keep[oid] = true
	}
	maps.DeleteFunc(b.fleet.records, func(oid string, _ claims.Published) bool { return !keep[oid] })
}

// RequestStop writes a stop request for host's agent into its record, by
// compare-and-swap on the commit read (its mail kept): the driver's next
// publish is then refused, it reads its ref, sees the request and stops.
func (b *Backend) RequestStop(ctx context.Context, host, agent string, req claims.StopRequest) error {
	return b.rewrite(ctx, host, agent, func(rec *claims.WorkerRecord, box []claims.Message) ([]claims.Message, bool, error) {
		req.Run = rec.Run
		rec.Stop = &req
		return box, true, nil
	})
}

// pruneOnce deletes, once per process, the records of other workers this
// machine has seen unchanged for claims.Prune (exited or dead a day ago,
// or unreadable that long: nothing will ever mend them), each by
// compare-and-swap on the commit seen. Writers prune, so a read-only face
// never writes; a failure is left for the next driver.
func (b *Backend) pruneOnce(ctx context.Context, own string) {
	b.fleet.mu.Lock()
	done := b.fleet.pruned
	b.fleet.pruned = true
	b.fleet.mu.Unlock()
	if done {
		return
	}
	names, all, err := b.allWorkers(ctx)
	if err != nil {
		return
	}
	var ups []update
	for i, p := range all {
		// By the name read, never one made again from the record's
		// fields: a record that cannot be read has none to make it from.
		if ref := WorkerRefs + names[i]; p.SeenFor >= claims.Prune && ref != own {
			ups = append(ups, update{Ref: ref, Old: p.Version})
		}
	}
	if len(ups) > 0 {
		_, _ = b.push(ctx, ups)
	}
}

// FleetPoll is how often FleetChanges asks the remote for its worker refs:
// one ls-remote, so a face's view of every machine's workers follows a
// change within FleetPoll and one read (docs/claims.md: ≤ 500 ms).
const FleetPoll = 300 * time.Millisecond

// FleetChanges says when any worker ref on the remote moved, was made or
// went, by listing them every FleetPoll while ctx lasts. A failed listing
// says nothing: the face's own timer reads again and shows the error.
func (b *Backend) FleetChanges(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		t := time.NewTicker(FleetPoll)
		defer t.Stop()
		var last map[string]string
		listed := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			lctx, cancel := context.WithTimeout(ctx, defaultTimeout)
			refs, err := b.remoteWorkerRefs(lctx)
			cancel()
			if err != nil || (listed && maps.Equal(refs, last)) {
				continue
			}
			if listed {
				select {
				case ch <- struct{}{}:
				default: // one pending word covers any number of changes
				}
			}
			last, listed = refs, true
		}
	}()
	return ch
}
