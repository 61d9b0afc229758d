package planfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/model"
)

// leaseLimit bounds how much of a lease file is read; real ones are ~200 bytes.
const leaseLimit = 64 << 10

func (t *Tree) leasePath(rel string) string {
	return filepath.Join(t.Plans, ".leases", model.LeaseFileName(rel))
}

// ReadLease reads the lease naming rel: nil when there is none, a lease with
// Corrupt set when the file cannot be read as one.
func (t *Tree) ReadLease(rel string) *model.Lease {
	p := t.leasePath(rel)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l := t.readLeaseFile(p)
	l.File, l.Rel = filepath.Base(p), rel
	return &l
}

func (t *Tree) readLeaseFile(path string) model.Lease {
	// O_NONBLOCK: a FIFO planted as a lease must not hang every worker
	// that scans the tree; it is reported as not a regular file below.
	// O_NOFOLLOW: a symlinked lease is nobody's claim, and its mtime says
	// nothing, so it counts as old at once.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return model.Lease{Corrupt: "a symlink; fleetwatch never follows one"}
	}
	if err != nil {
		return model.Lease{Corrupt: "unreadable: " + errText(err)}
	}
	defer f.Close()
	var mod float64
	if fi, err := f.Stat(); err == nil {
		mod = unixSeconds(fi.ModTime())
		if !fi.Mode().IsRegular() {
			return model.Lease{Corrupt: "not a regular file", ModTime: mod}
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, leaseLimit))
	if err != nil {
		return model.Lease{Corrupt: "unreadable: " + errText(err), ModTime: mod}
	}
	l, err := model.DecodeLease(data)
	if err != nil {
		return model.Lease{Corrupt: err.Error(), ModTime: mod}
	}
	l.ModTime = mod
	return l
}

func (t *Tree) newLease(plan, agent, origin, token string, ttl float64) model.Lease {
	now := t.now()
	return model.Lease{
		Plan: plan, AgentID: agent, ClaimedAt: now, ExpiresAt: now + model.LeaseSpan(ttl), Origin: origin,
		Host: t.host, PID: t.pid, PIDScope: t.pidScope, Token: token, RunsAs: t.RunsAs,
	}
}

// leasesDir makes .leases/ when missing; one that is a symlink or not a
// folder is refused, never followed.
func (t *Tree) leasesDir() (string, error) {
	// A tree that is gone (an agent deleted .plans/) stays gone: creating
	// the lock in it would bring back an empty .plans/ that looks alive.
	if _, err := os.Lstat(t.Plans); errors.Is(err, fs.ErrNotExist) {
		return filepath.Join(t.Plans, ".leases"), noTreeError(fmt.Sprintf("%s is gone", t.Plans))
	}
	return t.mkdirPlans(".leases")
}

// createLeaseExcl creates rel's lease where none exists, whole or not at
// all: a complete temp file link(2)ed into place, which is as exclusive as
// the O_CREAT|O_EXCL create anchor uses, so the two tools exclude each
// other, and leaves no empty lease when its writer is killed. It reports
// os.ErrExist when someone else holds the file.
func (t *Tree) createLeaseExcl(rel string, l model.Lease) error {
	return t.linkLeaseExcl(rel, l)
}

// writeLease replaces rel's lease atomically: readers see the old or the new
// file, never half of one.
func (t *Tree) writeLease(rel string, l model.Lease) error {
	tmp, err := t.tempLease(l)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, t.leasePath(rel)); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(tmp))
	return nil
}

// linkLeaseExcl installs a complete lease where none exists, failing with
// os.ErrExist if another took the place first.
func (t *Tree) linkLeaseExcl(rel string, l model.Lease) error {
	tmp, err := t.tempLease(l)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, t.leasePath(rel)); err != nil {
		return err
	}
	syncDir(filepath.Dir(tmp))
	return nil
}

// leaseFault, set only by tests, fails the write of a lease for a plan
// rel, as a full disk would.
var leaseFault func(plan string) error

// tempLease writes l to a dot-file in .leases/ that no lease reader matches;
// its name is short (.tmp-<digits>) whatever the plan's, and Repair sweeps
// one a crash left.
func (t *Tree) tempLease(l model.Lease) (string, error) {
	dir, err := t.leasesDir()
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	err = f.Chmod(0o644) // on the descriptor: a path could be swapped
	if err == nil {
		_, err = f.Write(model.EncodeLease(l))
	}
	if err == nil && leaseFault != nil {
		err = leaseFault(l.Plan)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// removeLeaseIf deletes rel's lease when it is still held as in want (same
// holder and claim), so a verb never drops a lease someone wrote since it
// looked. A heartbeat in between does not count as a new lease.
func (t *Tree) removeLeaseIf(rel string, want *model.Lease) {
	t.takeLease(rel, func(got *model.Lease) bool { return sameHolder(got, want) })
}

// ownLeaseWaits are the pauses before each look for a claimer's own lease
// that is missing: another process may hold it aside for a moment.
var ownLeaseWaits = []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 25 * time.Millisecond}

// dropOwnLease removes the lease this claimer created at rel. A missing file
// is looked for again briefly before it counts as removed by another: a
// takeLease that moved it aside between its look and its rename puts it
// back, and then nobody else would remove it (the 201-lease-files race).
func (t *Tree) dropOwnLease(rel string, own *model.Lease) {
	mine := func(got *model.Lease) bool { return sameHolder(got, own) }
	for _, wait := range ownLeaseWaits {
		time.Sleep(wait)
		cur := t.ReadLease(rel)
		if cur != nil && (!mine(cur) || t.takeLease(rel, mine)) {
			return
		}
	}
}

// clearLease removes rel's lease file if it is still exactly cur.
func (t *Tree) clearLease(rel string, cur *model.Lease) bool {
	return t.takeLease(rel, func(got *model.Lease) bool { return sameLeaseAs(got, cur) })
}

// takeLease removes rel's lease file if it satisfies ok. It first renames the
// file to a name only this caller knows, so of several racers exactly one
// takes it, and a lease written since the caller looked is put back. (A
// ready-path lease put back after its claimer finished is harmless: its
// token matches the in-progress lease, which marks the claim as done.)
func (t *Tree) takeLease(rel string, ok func(*model.Lease) bool) bool {
	// Renames follow a symlinked .leases/ out of the tree: check it first.
	if _, err := t.leasesDir(); err != nil {
		return false
	}
	// Look before taking: a lease that is not the one meant is never moved
	// aside, so its owner's own removal cannot miss it while it is away.
	if cur := t.ReadLease(rel); cur == nil || !ok(cur) {
		return false
	}
	aside := filepath.Join(t.Plans, ".leases", ".stale-"+newToken())
	if err := os.Rename(t.leasePath(rel), aside); err != nil {
		return false
	}
	defer os.Remove(aside)
	got := t.readLeaseFile(aside)
	got.Rel = rel
	if !ok(&got) {
		if os.Link(aside, t.leasePath(rel)) == nil {
			t.dropIfFinished(rel, &got)
		}
		return false
	}
	return true
}

// dropIfFinished removes the ready-path lease just put back at rel when its
// claim finished meanwhile: that claimer's own removal found the file
// aside, and nobody else would remove it.
func (t *Tree) dropIfFinished(rel string, put *model.Lease) {
	if !model.Rel(rel).Lane().Ready() || !t.finishedClaim(put) {
		return
	}
	aside := filepath.Join(t.Plans, ".leases", ".stale-"+newToken())
	if os.Rename(t.leasePath(rel), aside) != nil {
		return
	}
	defer os.Remove(aside)
	got := t.readLeaseFile(aside)
	got.Rel = rel
	if !sameHolder(&got, put) || !t.finishedClaim(&got) {
		_ = os.Link(aside, t.leasePath(rel))
	}
}

// sameLeaseAs reports whether a and b are the same lease, expiry included.
func sameLeaseAs(a, b *model.Lease) bool {
	return sameHolder(a, b) && a.ExpiresAt == b.ExpiresAt
}

// sameHolder reports whether a and b record the same claim; unreadable files
// count as the same when their mtime is.
func sameHolder(a, b *model.Lease) bool {
	if a.Corrupt != "" || b.Corrupt != "" {
		return a.Corrupt != "" && b.Corrupt != "" && a.ModTime == b.ModTime
	}
	return a.AgentID == b.AgentID && a.Token == b.Token && a.ClaimedAt == b.ClaimedAt
}

// lockWait bounds how long a verb waits for the lease lock: a holder that
// is stopped (Ctrl-Z) must not freeze the fleet.
const lockWait = 30 * time.Second

// errLockBusy is returned when the lease lock stayed held for the whole wait.
var errLockBusy = errors.New("the lease lock is held by another process; try again")

// lockLeases serialises every change to a held lease (renew, recover, moving
// a claimed plan out, a claim writing its lease, repair) across processes,
// with flock(2) on one file: the kernel drops the lock when its holder dies,
// so a crash never leaves it held. Claims take it only for their lease write;
// their ready-path lease excludes other claimers before that. It waits up to
// wait for the lock.
func (t *Tree) lockLeases(wait time.Duration) (unlock func(), err error) {
	if err := t.Writable(); err != nil {
		return nil, err
	}
	// A tree that is gone stays gone (see leasesDir).
	if _, err := os.Lstat(t.Plans); errors.Is(err, fs.ErrNotExist) {
		return nil, noTreeError(fmt.Sprintf("%s is gone", t.Plans))
	}
	// Every verb that changes a lease takes this lock before changing
	// anything, so it is where a symlinked write path stops them.
	if err := t.writable(); err != nil {
		return nil, err
	}
	f, err := t.openPlansFile(".leases/"+lockFile, os.O_CREATE|os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("cannot open the lease lock: %v", err)
	}
	return flockWait(f, wait)
}

// lockExisting is lockLeases for read-only faces: it locks .leases/.lock
// only when it is already there, and creates nothing.
func (t *Tree) lockExisting(wait time.Duration) (unlock func(), err error) {
	f, err := t.openPlansFile(".leases/"+lockFile, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return flockWait(f, wait)
}

// flockWait takes an exclusive flock on f, waiting up to wait; the unlock
// closes f, and so does a failure.
func flockWait(f *os.File, wait time.Duration) (unlock func(), err error) {
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("cannot lock leases: %v", errText(err))
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, errLockBusy
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockFile is the flock target in .leases/; it is never removed, so every
// process locks the same inode.
const lockFile = ".lock"

// claimInFlight reports whether one of our claimers is between moving the
// plan named name into in-progress/ and writing its lease: it still holds
// the ready-path lease of a plan no longer there. A lease left by a claimer
// that is gone or by a finished claim, or the twin lease of a plan still in
// place, does not count.
func (t *Tree) claimInFlight(name string) bool {
	claimed, _ := os.Lstat(t.Abs(string(model.RelOf(model.InProgress, name))))
	for _, l := range []model.Lane{model.Bugs, model.Features} {
		rel := string(model.RelOf(l, name))
		// A twin still in its lane is not moving; the same file in both
		// lanes is a link+unlink move half way.
		if fi, err := os.Lstat(t.Abs(rel)); err == nil && (claimed == nil || !os.SameFile(fi, claimed)) {
			continue
		}
		if cur := t.ReadLease(rel); cur != nil && !t.abandoned(cur) && !t.finishedClaim(cur) {
			return true
		}
	}
	return false
}

// finishedClaim reports whether ready-path lease l belongs to a claim that
// already wrote its in-progress lease (the same token).
func (t *Tree) finishedClaim(l *model.Lease) bool {
	_, name, err := SplitRel(l.Rel)
	if err != nil || l.Corrupt != "" || l.Token == "" {
		return false
	}
	held := t.ReadLease(string(model.RelOf(model.InProgress, name)))
	return held != nil && held.Corrupt == "" && held.Token == l.Token
}

// writeGrace is how long an unreadable lease may be one still being
// written (anchor writes leases in place) before recover may replace it.
const writeGrace = 5.0

// unreadableGrace is how long the unreadable lease l is left alone: an empty
// one may be anchor's claim in flight (it creates the file, then writes it),
// so it gets the 60 s leftover rule; garbage gets writeGrace.
func unreadableGrace(l *model.Lease) float64 {
	if l.Corrupt == model.ErrEmptyLease.Error() {
		return claimGrace
	}
	return writeGrace
}

// claimerGone reports whether l's writer is provably dead: it ran in this
// boot and pid namespace, and its pid is gone.
func (t *Tree) claimerGone(l *model.Lease) bool {
	return t.pidScope != "" && l.PIDScope == t.pidScope && l.PID > 0 && !pidAlive(l.PID)
}

// abandoned reports whether a ready-path lease was left by a claimer that is
// gone: provably dead, or older than the claim grace.
func (t *Tree) abandoned(l *model.Lease) bool {
	if l.Corrupt != "" {
		return t.now()-l.ModTime > claimGrace
	}
	if t.claimerGone(l) {
		return true
	}
	return t.now()-l.ClaimedAt > claimGrace
}

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
