//go:build etcd

package etcdclaims

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

var (
	_ claims.Fleet        = (*Backend)(nil)
	_ claims.FleetWatcher = (*Backend)(nil)
)

// Worker records live at /fleetwatch/<project id>/workers/<host>/<agent>
// (names escaped as gitclaims.WorkerName), attached to the worker
// session's etcd lease: gone when the worker is. A stop request is
// /fleetwatch/<project id>/stop/<host>/<agent>, put on that same lease.

// fleetSeen is, per worker key, the mod revision this process last read,
// since when on its monotonic clock, and its record; and the records of
// workers whose keys vanished while they said running (their lease
// expired: dead), with when they vanished.
type fleetSeen struct {
	mu   sync.Mutex
	seen map[string]seenRev
	gone map[string]seenRev
	// project keeps this machine's record of the revisions seen and
	// since when (gitclaims.Observe), so a one-shot reader (watch status)
	// judges by it as a cockpit does.
	project string
}

type seenRev struct {
	rev   int64
	since time.Time
	last  claims.Published
}

func (b *Backend) root() string { return strings.TrimSuffix(b.prefix, "leases/") }

func (b *Backend) workerKey(host, agent string) string {
	return b.root() + "workers/" + gitclaims.WorkerName(host, agent)
}

func (b *Backend) stopKey(host, agent string) string {
	return b.root() + "stop/" + gitclaims.WorkerName(host, agent)
}

// Publish puts rec on the worker session's lease in one transaction that
// also reads the worker's stop and mail keys when there are any: a stop
// request and the mail for rec.Run come back at the cost of no extra
// round trip when none waits. Mail read is then taken away by a second
// transaction, only while its key is as read (takeMail).
func (b *Backend) Publish(ctx context.Context, rec claims.WorkerRecord) (claims.Inbound, error) {
	var in claims.Inbound
	s, err := b.current()
	if err != nil {
		return in, err
	}
	if s == nil {
		return in, fmt.Errorf("etcd %s: a worker record needs the worker's session (a --run worker): %w", b.endpoints, claims.ErrUnavailable)
	}
	key, stop, mail := b.workerKey(rec.Host, rec.AgentID), b.stopKey(rec.Host, rec.AgentID), b.mailKey(rec.Host, rec.AgentID)
	put := clientv3.OpPut(key, string(claims.EncodeRecord(rec)), clientv3.WithLease(s.id))
	tctx, cancel := b.op(ctx)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.Version(stop), "=", 0), clientv3.Compare(clientv3.Version(mail), "=", 0)).
		Then(put).Else(put, clientv3.OpGet(stop), clientv3.OpGet(mail)).Commit()
	cancel()
	if err != nil {
		return in, b.unavailable(err)
	}
	if resp.Succeeded || len(resp.Responses) < 3 {
		return in, nil
	}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		var req claims.StopRequest
		if len(kv.Value) <= claims.MaxRecord && json.Unmarshal(kv.Value, &req) == nil && req.Run == rec.Run && req.Run != "" {
			// Whoever could write the key wrote By and Host: the driver
			// logs them, so they are one bounded line like a record's.
			req.By, req.Host = claims.Clip(req.By, 256), claims.Clip(req.Host, 256)
			in.Stop = &req
		}
	}
	for _, kv := range resp.Responses[2].GetResponseRange().Kvs {
		box, err := claims.DecodeMail("etcd key "+mail, kv.Value)
		if err != nil {
			in.Problem = err.Error()
		}
		in.Mail = claims.MailFor(box, rec.Run)
		b.takeMail(ctx, mail, kv.ModRevision)
	}
	return in, nil
}

// Workers reads every worker key (listWorkers), each judged by how long
// this machine has seen its revision unchanged (kept under var/ as git's
// worker refs are, else this process's own count); a key that vanished
// while its record said running is kept as dead, by this process, for
// claims.Prune. It shows those claims.Pick chooses, and a row saying how
// many more there are.
func (b *Backend) Workers(ctx context.Context) ([]claims.Published, error) {
	prefix := b.root() + "workers/"
	f := &b.fleet
	var listed []seenName
	err := b.listWorkers(ctx, prefix, func(name string, rev int64, value []byte) {
		f.mu.Lock()
		s, ok := f.seen[name]
		f.mu.Unlock()
		if !ok || s.rev != rev {
			s = seenRev{rev: rev, last: recordAt(name, value)}
			s.last.Version = fmt.Sprint(rev)
		}
		listed = append(listed, seenName{name, s})
	})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	versions := make(map[string]string, len(listed))
	for _, l := range listed {
		versions[l.name] = fmt.Sprint(l.rev)
	}
	kept, err := gitclaims.Observe(f.project, seenWorkersFile, versions)
	if err != nil {
		kept = nil // this process's own count, then
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen, f.gone = map[string]seenRev{}, map[string]seenRev{}
	}
	out := make([]claims.Published, 0, len(listed))
	here := make(map[string]bool, len(listed))
	for _, l := range listed {
		here[l.name] = true
		out = append(out, f.judge(l, now, kept))
	}
	out = append(out, f.goneSince(here, now)...)
	sortByHost(out)
	keep, more := claims.Pick(out)
	shown := out[:0]
	for i, p := range out {
		if keep[i] {
			shown = append(shown, p)
		}
	}
	if more > 0 {
		shown = append(shown, claims.Published{WorkerRecord: claims.WorkerRecord{Host: backendName, AgentID: "…"},
			Problem: fmt.Sprintf("%d more worker records under %s, beyond the %d shown (at most %d a host, readable ones first)",
				more, prefix, claims.MaxWorkers, claims.MaxWorkersPerHost)})
	}
	return shown, nil
}

// judge is the listed key l as published, judged by how long its revision
// has been seen unchanged: by this machine's clock (kept) when it has
// one, else this process's. f.mu is held.
func (f *fleetSeen) judge(l seenName, now time.Time, kept map[string]time.Duration) claims.Published {
	s, ok := f.seen[l.name]
	if !ok || s.rev != l.rev {
		s = l.seenRev
		s.since = now
	}
	f.seen[l.name] = s
	delete(f.gone, l.name)
	p := s.last
	p.SeenFor = now.Sub(s.since)
	if d, ok := kept[l.name]; ok {
		p.SeenFor = d
	}
	p.Health = claims.Judge(p.WorkerRecord, p.SeenFor)
	return p
}

// sortByHost orders records by host, then agent id.
func sortByHost(out []claims.Published) {
	sort.Slice(out, func(i, j int) bool {
		return out[i].Host < out[j].Host || out[i].Host == out[j].Host && out[i].AgentID < out[j].AgentID
	})
}

// goneSince moves the keys seen before but not here now to the gone, and
// returns the gone as dead, each for claims.Prune; f.mu is held.
func (f *fleetSeen) goneSince(here map[string]bool, now time.Time) []claims.Published {
	for name, s := range f.seen {
		if !here[name] {
			delete(f.seen, name)
			if s.last.State != claims.WorkerExited {
				f.gone[name] = seenRev{since: now, last: s.last}
			}
		}
	}
	var out []claims.Published
	for name, s := range f.gone {
		if now.Sub(s.since) >= claims.Prune {
			delete(f.gone, name)
			continue
		}
		p := s.last
		p.SeenFor, p.Health = now.Sub(s.since), claims.HealthDead
		out = append(out, p)
	}
	return out
}

// seenName is one worker key as listed: its name, revision and record.
type seenName struct {
	name string
	seenRev
}

// seenWorkersFile is this machine's worker clock, under var/fleet/claims/.
const seenWorkersFile = "seen-workers-etcd.json"

// fleetPage is how many worker keys one Get reads: a flood is listed in
// pages, each record decoded as it comes, never held whole in one answer.
const fleetPage = 256

// listWorkers calls each with every key under prefix, in key order, a page
// at a time.
func (b *Backend) listWorkers(ctx context.Context, prefix string, each func(name string, rev int64, value []byte)) error {
	from, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	for {
		gctx, cancel := b.op(ctx)
		g, err := b.cli.Get(gctx, from, clientv3.WithRange(end), clientv3.WithLimit(fleetPage))
		cancel()
		if err != nil {
			return b.unavailable(err)
		}
		for _, kv := range g.Kvs {
			each(strings.TrimPrefix(string(kv.Key), prefix), kv.ModRevision, kv.Value)
		}
		if !g.More || len(g.Kvs) == 0 {
			return nil
		}
		from = string(g.Kvs[len(g.Kvs)-1].Key) + "\x00"
	}
}

// Worker reads host's agent's own key, judged by this machine's worker
// clock as Workers last recorded it (else this process's), recording
// nothing.
func (b *Backend) Worker(ctx context.Context, host, agent string) (claims.Published, error) {
	name := gitclaims.WorkerName(host, agent)
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Get(gctx, b.workerKey(host, agent))
	cancel()
	switch {
	case err != nil:
		return claims.Published{}, b.unavailable(err)
	case len(g.Kvs) == 0:
		return claims.Published{}, fmt.Errorf("%s on %s: %w", agent, host, claims.ErrNoWorker)
	}
	kv := g.Kvs[0]
	p := recordAt(name, kv.Value)
	p.Version = fmt.Sprint(kv.ModRevision)
	p.SeenFor = gitclaims.SeenFor(b.fleet.project, seenWorkersFile, name, p.Version)
	b.fleet.mu.Lock()
	if s, ok := b.fleet.seen[name]; ok && s.rev == kv.ModRevision && p.SeenFor == 0 {
		p.SeenFor = time.Since(s.since)
	}
	b.fleet.mu.Unlock()
	p.Health = claims.Judge(p.WorkerRecord, p.SeenFor)
	return p, nil
}

// recordAt decodes the record of worker key name; one that cannot be read,
// or names another worker than its key, is a problem under the key's names.
func recordAt(name string, value []byte) claims.Published {
	host, agent, _ := gitclaims.NamesOf(name)
	host, agent = claims.Clip(host, 256), claims.Clip(agent, 256)
	rec, err := claims.DecodeRecord("etcd key workers/"+name, value)
	switch {
	case err != nil:
		return claims.Published{WorkerRecord: claims.WorkerRecord{Host: host, AgentID: agent}, Problem: err.Error()}
	case rec.Host != host || rec.AgentID != agent:
		why := fmt.Sprintf("worker record workers/%s names %s on %s", name, rec.AgentID, rec.Host)
		return claims.Published{WorkerRecord: claims.WorkerRecord{Host: host, AgentID: agent}, Problem: why}
	}
	return claims.Published{WorkerRecord: rec}
}

// FleetChanges receives after each change under the worker keys.
func (b *Backend) FleetChanges(ctx context.Context) <-chan struct{} {
	return b.watch(ctx, b.root()+"workers/")
}

// RequestStop puts a stop request for host's agent's current run on that
// worker's own etcd lease (so it goes when the worker does), while its key
// is the one read; the driver's next publish reads it.
func (b *Backend) RequestStop(ctx context.Context, host, agent string, req claims.StopRequest) error {
	key := b.workerKey(host, agent)
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Get(gctx, key)
	cancel()
	if err != nil {
		return b.unavailable(err)
	}
	if len(g.Kvs) == 0 {
		return fmt.Errorf("%s on %s: %w", agent, host, claims.ErrNoWorker)
	}
	kv := g.Kvs[0]
	p := recordAt(gitclaims.WorkerName(host, agent), kv.Value)
	switch {
	case p.Problem != "":
		return fmt.Errorf("%s on %s: %s", agent, host, p.Problem)
	case p.State == claims.WorkerExited:
		return fmt.Errorf("%s on %s: %w", agent, host, claims.ErrWorkerDone)
	}
	req.Run = p.Run
	val, _ := json.Marshal(req)
	tctx, cancel := b.op(ctx)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", kv.CreateRevision)).
		Then(clientv3.OpPut(b.stopKey(host, agent), string(val), clientv3.WithLease(clientv3.LeaseID(kv.Lease)))).Commit()
	cancel()
	switch {
	case err != nil:
		return b.unavailable(err)
	case !resp.Succeeded:
		return fmt.Errorf("%s on %s: its record went while asked: %w", agent, host, claims.ErrNoWorker)
	}
	return nil
}
