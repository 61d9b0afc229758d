package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Lease is one `.leases/<rel with / → __>.json` file: who holds a plan and until when.
// The JSON keys are anchor's; host, pid, pid_scope and token are ours and
// anchor ignores them.
type Lease struct {
	Plan      string  `json:"plan"`
	AgentID   string  `json:"agent_id"`
	ClaimedAt float64 `json:"claimed_at"`
	ExpiresAt float64 `json:"expires_at"`
	Origin    string  `json:"origin,omitempty"`
	Host      string  `json:"host,omitempty"`
	PID       int     `json:"pid,omitempty"`
	// PIDScope names where PID means something (boot and pid namespace), so
	// a reader only judges the claimer dead when it shares that scope.
	PIDScope string `json:"pid_scope,omitempty"`
	Token    string `json:"token,omitempty"`
	// Awaiting marks a plan-first plan whose lease the coordinator's inbox
	// holds: AwaitApproval while its proposal waits, AwaitResume once it is
	// decided and waits for its agent. Such a lease never expires into
	// recover; only its agent's resume (or, once that agent is gone, a fit
	// worker's) takes it up.
	Awaiting string `json:"awaiting,omitempty"`
	// TTL, Epoch and Nonce are written by the remote claims backends (git,
	// etcd): the lifetime its holder asked for (observers count it on
	// their own clocks, never trusting expires_at), how many times the
	// lease was renewed or taken over, and a random word that makes every
	// lease commit distinct.
	TTL   float64 `json:"ttl,omitempty"`
	Epoch int64   `json:"epoch,omitempty"`
	Nonce string  `json:"nonce,omitempty"`
	// RunsAs is what the holder runs as, which caps count it under
	// (fleetwatch.yaml's limits:); anchor's leases and older fleetwatch's
	// have none of it.
	RunsAs

	// File is the lease file's name in .leases/, Rel the plan rel it names.
	File string `json:"-"`
	Rel  string `json:"-"`
	// Corrupt holds why the file could not be read as a lease; such a lease
	// blocks picks until someone recovers it.
	Corrupt string `json:"-"`
	// ModTime is the file's mtime in Unix seconds, for judging corrupt files' age.
	ModTime float64 `json:"-"`
	// Backend names the remote claims backend the lease was read from
	// ("git", "etcd"); "" for a lease file. Faces say "held on <host>".
	Backend string `json:"-"`
}

// RunsAs is what a worker runs as, written into each lease it claims or
// takes over: the fit tier, the endpoint (endpoints.yaml) and the
// provider that endpoint declares. A lease without them counts only
// toward the fleet's and its host's caps.
type RunsAs struct {
	Tier     string `json:"tier,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Provider string `json:"provider,omitempty"`
}

// The states of an inbox-held lease (Lease.Awaiting).
const (
	AwaitApproval = "approval"
	AwaitResume   = "resume"
)

// Active reports whether the lease still holds at now (Unix seconds). An
// inbox-held lease always does.
func (l *Lease) Active(now float64) bool {
	return l.Corrupt == "" && (l.Awaiting != "" || now < l.ExpiresAt)
}

// Blocks reports whether the lease keeps others from claiming its plan at now.
func (l *Lease) Blocks(now float64) bool { return l.Corrupt != "" || l.Active(now) }

// LeaseFileName is the file in .leases/ for a plan rel.
func LeaseFileName(rel string) string { return strings.ReplaceAll(rel, "/", "__") + ".json" }

// RelOfLeaseFile undoes LeaseFileName; lanes never contain `__`, so only the
// first one separates lane from name.
func RelOfLeaseFile(name string) (string, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return "", false
	}
	lane, rest, ok := strings.Cut(base, "__")
	if !ok || lane == "" || rest == "" {
		return "", false
	}
	return lane + "/" + rest, true
}

// ErrEmptyLease is an empty lease file: what a claimer killed between
// creating the file and writing it leaves behind.
var ErrEmptyLease = errors.New("empty lease file")

// DecodeLease parses a lease file's content.
func DecodeLease(data []byte) (Lease, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		if len(strings.TrimSpace(string(data))) == 0 {
			return Lease{}, ErrEmptyLease
		}
		return Lease{}, fmt.Errorf("not a JSON object: %v", err)
	}
	var l Lease
	if err := json.Unmarshal(data, &l); err != nil {
		return Lease{}, fmt.Errorf("bad field: %v", err)
	}
	if raw == nil {
		return Lease{}, errors.New("not a JSON object")
	}
	for _, k := range []string{"agent_id", "expires_at"} {
		if v, ok := raw[k]; !ok {
			return Lease{}, fmt.Errorf("missing %q", k)
		} else if string(v) == "null" {
			// json.Unmarshal leaves a null field at its zero value; a lease
			// without an owner or an end is not a lease.
			return Lease{}, fmt.Errorf("%q is null", k)
		}
	}
	if l.AgentID == "" {
		return Lease{}, errors.New("empty agent_id")
	}
	return l, nil
}

// EncodeLease writes a lease the way anchor does: indent 2, trailing newline.
func EncodeLease(l Lease) []byte {
	b, _ := json.MarshalIndent(l, "", "  ")
	return append(b, '\n')
}

// MaxLeaseTTL is the longest a lease may run: a lease further ahead than
// this cannot have been written by a sane clock, and is not trusted.
const MaxLeaseTTL = 7 * 24 * 3600.0

// LeaseSpan is how long a lease asked for with ttl runs: at least a second,
// at most MaxLeaseTTL, so no lease of ours is ever implausible.
func LeaseSpan(ttl float64) float64 { return min(max(1, ttl), MaxLeaseTTL) }

// claimSkew is how far in the future a claim time may be, for clocks of
// hosts sharing one tree that disagree a little.
const claimSkew = 60.0

// Implausible says why the lease cannot be trusted to expire in time ("" when
// it can): it runs out more than MaxLeaseTTL after now, or was claimed more
// than a minute in the future (a wrong clock, or a hand-written file). Such
// a lease still blocks picks, but check reports it and recover may take it.
func (l *Lease) Implausible(now float64) string {
	switch {
	case l.Corrupt != "":
		return ""
	case l.Awaiting == "" && l.ExpiresAt-now > MaxLeaseTTL:
		return fmt.Sprintf("expires %.0f days from now, more than %.0f ahead", (l.ExpiresAt-now)/86400, MaxLeaseTTL/86400)
	case l.ClaimedAt-now > claimSkew:
		return fmt.Sprintf("claimed %.0f s in the future", l.ClaimedAt-now)
	}
	return ""
}

// AwaitingText is how every face names an inbox-held lease: "awaiting
// approval" while its proposal waits for the coordinator, "decided, resumes
// with <agent>" once approved or rejected; "" for any other lease.
func (l *Lease) AwaitingText() string {
	switch {
	case l == nil || l.Corrupt != "":
		return ""
	case l.Awaiting == AwaitApproval:
		return "awaiting approval"
	case l.Awaiting != "":
		return "decided, resumes with " + l.AgentID
	}
	return ""
}
