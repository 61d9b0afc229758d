package look

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// serveFile is where `fleetwatch serve` writes the address it listens on
// (host:port), relative to the project, and removes it when it stops.
const serveFile = "var/fleet/serve/address"

// ServeAddress is this host's serve address as its serve wrote it, ""
// when none runs (or the file is not a plain short file: never followed
// through a symlink).
func ServeAddress(project string) string {
	f, err := safepath.OpenFile(project, serveFile, os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	return strings.TrimSpace(string(buf[:n]))
}

// WriteServeAddress records addr as this host's serve address; the
// returned func removes it again.
func WriteServeAddress(project, addr string) (func(), error) {
	f, err := safepath.OpenFile(project, serveFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return func() {}, err
	}
	_, err = f.WriteString(addr + "\n")
	f.Close()
	return func() { os.Remove(filepath.Join(project, filepath.FromSlash(serveFile))) }, err
}

// Published is a worker another machine published, as a State the faces
// show beside the state files, with its health as this machine judged it.
type Published struct {
	State
	Health Health
	// SeenFor is how long this machine had seen its record unchanged
	// when it was read.
	SeenFor time.Duration
	// Problem says why its record could not be read.
	Problem string
	// LastLine is its log's last line; LogPath where its log is on its
	// host; Serve its host's serve address, if any.
	LastLine, LogPath, Serve string
}

// ReadPublished reads every record f holds that is not this host's (the
// state files are the source for those), judged on this machine's clock.
func ReadPublished(ctx context.Context, f claims.Fleet) ([]Published, error) {
	all, err := f.Workers(ctx)
	if err != nil {
		return nil, err
	}
	here := Hostname()
	out := make([]Published, 0, len(all))
	for _, p := range all {
		if p.Host == here {
			continue
		}
		out = append(out, publishedState(p))
	}
	return out, nil
}

// ReadWorker reads host's agent's own record through f (never through
// the capped listing ReadPublished reads), judged on this machine's clock.
func ReadWorker(ctx context.Context, f claims.Fleet, host, agent string) (Published, error) {
	p, err := f.Worker(ctx, host, agent)
	if errors.Is(err, claims.ErrNoWorker) {
		return Published{}, fmt.Errorf("%s on %s publishes no record", agent, host)
	}
	if err != nil {
		return Published{}, err
	}
	return publishedState(p), nil
}

func publishedState(p claims.Published) Published {
	st := State{
		PID: p.PID, AgentID: p.AgentID, Tier: p.Tier, Model: p.Model, Plan: p.Plan, State: p.State,
		ExitCode: p.ExitCode, Host: p.Host, HeartbeatEvery: p.HeartbeatEvery, Endpoint: p.Endpoint,
		Note: p.Note, Paused: p.Paused, Started: stampOf(p.Started), LastHeartbeat: stampOf(p.Heartbeat),
		Asking: p.Asking,
	}
	st.Spent.Tokens, st.Spent.USD = p.Tokens, p.Cost
	if st.State != StateExited {
		st.State = StateRunning
	}
	if p.Problem != "" {
		st.Note = p.Problem
	}
	return Published{State: st, Health: Health(p.Health), SeenFor: p.SeenFor, Problem: p.Problem, LastLine: p.LastLine, LogPath: p.LogPath, Serve: p.Serve}
}

func stampOf(sec float64) Stamp {
	if sec <= 0 {
		return Stamp{}
	}
	return Stamp{time.Unix(0, int64(sec*1e9))}
}

// maxServedLines bounds how many lines of a log ServedLog gives.
const maxServedLines = 500

// ServedLog is the last n lines (at most maxServedLines) of agent's log in
// project, each cut and made safe for a terminal, for another machine
// asking through `fleetwatch serve`: the file is opened without following
// a symlink anywhere under the project, and only a regular file is read.
func ServedLog(project, agent string, n int) ([]string, error) {
	n = min(max(n, 1), maxServedLines)
	rel := LogDir + "/" + tree.SafeID(agent) + ".log"
	f, err := safepath.OpenFile(project, rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", rel, tree.ErrText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	start := max(0, fi.Size()-int64(n+1)*(maxTailLine+1))
	buf := make([]byte, fi.Size()-start)
	m, err := f.ReadAt(buf, start)
	if err != nil && m < len(buf) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	raw := bytes.Split(bytes.TrimSuffix(buf[:m], []byte{'\n'}), []byte{'\n'})
	if start > 0 && len(raw) > 0 {
		raw = raw[1:] // cut mid-line
	}
	raw = raw[max(0, len(raw)-n):]
	out := make([]string, 0, len(raw))
	for _, l := range raw {
		if len(l) > 0 {
			out = append(out, cleanLogLine(l))
		}
	}
	return out, nil
}
