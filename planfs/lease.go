package planfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"fleetwatch/model"
)

// leaseLimit bounds how much of a lease file is read; real ones are ~200 bytes.
const leaseLimit = 64 << 10

func (t *Tree) leasePath(rel string) string {
	return filepath.Join(t.Plans, ".leases", model.LeaseFileName(rel))
}

// LeaseFor reads the lease naming rel: nil when there is none, a lease with
// Corrupt set when the file cannot be read as one.
func (t *Tree) LeaseFor(rel string) *model.Lease {
	p := t.leasePath(rel)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l := t.readLeaseFile(p)
	l.File, l.Rel = filepath.Base(p), rel
	return &l
}

func (t *Tree) readLeaseFile(path string) model.Lease {
	f, err := os.Open(path)
	if err != nil {
		return model.Lease{Corrupt: "unreadable: " + errText(err)}
	}
	defer f.Close()
	var mod float64
	if fi, err := f.Stat(); err == nil {
		mod = float64(fi.ModTime().UnixNano()) / 1e9
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
		Plan: plan, AgentID: agent, ClaimedAt: now, ExpiresAt: now + max(1, ttl), Origin: origin,
		Host: t.host, PID: t.pid, Token: token,
	}
}

func (t *Tree) leasesDir() (string, error) {
	dir := filepath.Join(t.Plans, ".leases")
	return dir, os.MkdirAll(dir, 0o755)
}

// createLeaseExcl creates rel's lease with O_CREAT|O_EXCL, the step anchor
// uses too, so the two tools exclude each other. It reports os.ErrExist when
// someone else holds the file.
func (t *Tree) createLeaseExcl(rel string, l model.Lease) error {
	if _, err := t.leasesDir(); err != nil {
		return err
	}
	f, err := os.OpenFile(t.leasePath(rel), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(model.EncodeLease(l))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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

// tempLease writes l to a dot-file in .leases/ that no lease reader matches.
func (t *Tree) tempLease(l model.Lease) (string, error) {
	dir, err := t.leasesDir()
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(model.EncodeLease(l))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
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
	if cur := t.LeaseFor(rel); cur != nil && sameHolder(cur, want) {
		_ = os.Remove(t.leasePath(rel))
	}
}

// clearLease removes rel's lease file if it still holds cur. It renames the
// file to a name only this caller knows first, so of several racers exactly
// one clears it, and a lease written since cur was read survives.
func (t *Tree) clearLease(rel string, cur *model.Lease) bool {
	aside := filepath.Join(t.Plans, ".leases", ".stale-"+newToken())
	if err := os.Rename(t.leasePath(rel), aside); err != nil {
		return false
	}
	defer os.Remove(aside)
	if !t.sameLease(aside, cur) {
		_ = os.Link(aside, t.leasePath(rel)) // not what we judged stale: put it back
		return false
	}
	return true
}

// sameLease reports whether the file at path still holds lease l.
func (t *Tree) sameLease(path string, l *model.Lease) bool {
	got := t.readLeaseFile(path)
	return sameLeaseAs(&got, l)
}

// sameLeaseAs reports whether a and b are the same lease, expiry included.
func sameLeaseAs(a, b *model.Lease) bool {
	return sameHolder(a, b) && a.ExpiresAt == b.ExpiresAt
}

// sameHolder reports whether a and b record the same claim; two unreadable
// files count as the same.
func sameHolder(a, b *model.Lease) bool {
	if a.Corrupt != "" || b.Corrupt != "" {
		return a.Corrupt != "" && b.Corrupt != ""
	}
	return a.AgentID == b.AgentID && a.Token == b.Token && a.ClaimedAt == b.ClaimedAt
}

// lockLease serialises takeovers of rel's lease with an O_EXCL lock file, so
// the lease can be replaced in one rename (never absent) while exactly one of
// several recoverers wins. A lock left by a dead process is broken.
func (t *Tree) lockLease(rel string) (unlock func(), err error) {
	dir, err := t.leasesDir()
	if err != nil {
		return nil, planErr(rel, err, "cannot create .leases/: %v", errText(err))
	}
	path := filepath.Join(dir, "."+model.LeaseFileName(rel)+".lock")
	owner := model.EncodeLease(model.Lease{Plan: rel, AgentID: "lock", ClaimedAt: t.now(), Host: t.host, PID: t.pid})
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = f.Write(owner)
			_ = f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, planErr(rel, err, "cannot lock lease: %v", errText(err))
		}
		held := t.readLeaseFile(path)
		if held.Corrupt == "" && !t.abandoned(&held) {
			break
		}
		if held.Corrupt != "" && t.now()-held.ModTime < claimGrace {
			break
		}
		os.Remove(path)
	}
	return nil, planErr(rel, ErrClaimed, "another worker is recovering it")
}

// abandoned reports whether a ready-path lease was left by a claimer that is
// gone: the same host with its pid dead, or older than the claim grace.
func (t *Tree) abandoned(l *model.Lease) bool {
	if l.Corrupt != "" {
		return t.now()-l.ModTime > claimGrace
	}
	if l.Host != "" && l.Host == t.host && l.PID > 0 && !pidAlive(l.PID) {
		return true
	}
	return t.now()-l.ClaimedAt > claimGrace
}

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
