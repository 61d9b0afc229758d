package serve

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"

	gossh "golang.org/x/crypto/ssh"
)

// Identity is who a key is, for one client address: the agent id the
// event log names, the key's fingerprint, and what the key's lines whose
// from= allows that address grant together (grants.go).
type Identity struct {
	Agent       string // ssh:<comment>, ssh:<comment>-<fp8> or ssh:<fp8>
	Fingerprint string // SHA256:...
	// Viewer is a key with a line in the viewers file, used or not.
	Viewer bool
	// Rules are the strictest of the lines used: no terminal if any says
	// no-pty, the command one forces. From and Projects are nil: from=
	// chose the lines, and uses and views hold the projects.
	Rules Rules
	// uses are the projects the lines used name, views those any viewers
	// line of the key names: its role on each of several projects (RoleOn).
	uses, views scope
	// Lines are the lines used, as FILE:LINE, for the log.
	Lines []string
}

// keyLine is one key of an authorized_keys file.
type keyLine struct {
	key     gossh.PublicKey
	comment string
	rules   Rules
	where   string // FILE:LINE
}

// parseKeys reads an OpenSSH authorized_keys file: blank lines and #
// comments are skipped; a line that is not a key, a certificate, or an
// option serve does not honour is an error naming FILE:LINE.
func parseKeys(path string, data []byte) ([]keyLine, error) {
	var out []keyLine
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		k, comment, opts, _, err := gossh.ParseAuthorizedKey(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not an authorized_keys line (%v)", path, i+1, strings.TrimPrefix(err.Error(), "ssh: "))
		}
		if _, cert := k.(*gossh.Certificate); cert {
			return nil, fmt.Errorf("%s:%d: a certificate: fleetwatch serve accepts no certificates; list the person's own key", path, i+1)
		}
		rules, err := parseRules(opts)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, keyLine{key: k, comment: strings.TrimSpace(comment), rules: rules, where: fmt.Sprintf("%s:%d", path, i+1)})
	}
	return out, nil
}

// readKeys reads and parses one file.
func readKeys(path string) ([]keyLine, fileStamp, error) {
	st, err := stampOf(path)
	if err != nil {
		return nil, st, err
	}
	data, err := readSmall(path)
	if err != nil {
		return nil, st, err
	}
	keys, err := parseKeys(path, data)
	return keys, st, err
}

// maxKeyFile bounds a key file: a thousand keys fit in 1 MB.
const maxKeyFile = 1 << 20

// readSmall reads a regular file of at most maxKeyFile bytes; opened
// without blocking, so a FIFO there is refused rather than waited on
// (with the keyring's lock held, that would stop every login).
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("%s: over %d MB, not a key file", path, maxKeyFile>>20)
	}
	return data, nil
}

// fileStamp is the cheap look that says a key file changed.
type fileStamp struct {
	ino, size, mtime int64
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, fmt.Errorf("%s: %v", path, unwrapPath(err))
	}
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = int64(sys.Ino)
	}
	return st, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Keyring holds the operators' and viewers' keys and re-reads both files
// when either changes; a file that turns bad keeps the last good keys.
type Keyring struct {
	operators, viewers string
	log                io.Writer

	mu     sync.Mutex
	stamps [2]fileStamp
	byKey  map[string]keyEntry // by the key's wire form
	gen    int                 // counts the loads, so a change is seen
}

// LoadKeys reads both files (viewers may be ""); any error names FILE:LINE.
func LoadKeys(operators, viewers string, log io.Writer) (*Keyring, error) {
	if log == nil {
		log = io.Discard
	}
	r := &Keyring{operators: operators, viewers: viewers, log: log}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Keyring) load() error {
	ops, st0, err := readKeys(r.operators)
	if err != nil {
		return err
	}
	var views []keyLine
	var st1 fileStamp
	if r.viewers != "" {
		if views, st1, err = readKeys(r.viewers); err != nil {
			return err
		}
	}
	byKey, err := entries(ops, views)
	if err != nil {
		return err
	}
	r.byKey = byKey
	r.stamps = [2]fileStamp{st0, st1}
	r.gen++
	return nil
}

// Check re-reads the files if either changed and returns the load's
// generation: open sessions are checked again when it moves.
func (r *Keyring) Check() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refresh()
	return r.gen
}

// known is the key's lines as last loaded, without looking at the files.
func (r *Keyring) known(k gossh.PublicKey) (keyEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byKey[string(k.Marshal())]
	return e, ok
}

// entry is the key's lines as the files say now; ok is false for a key in
// neither file.
func (r *Keyring) entry(k gossh.PublicKey) (keyEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refresh()
	e, ok := r.byKey[string(k.Marshal())]
	return e, ok
}

// Lookup is the key's identity for a client at addr; ok is false for a
// key in neither file or none of whose lines allows addr.
func (r *Keyring) Lookup(k gossh.PublicKey, addr net.Addr) (Identity, bool) {
	e, ok := r.entry(k)
	if !ok {
		return Identity{}, false
	}
	return e.at(addr)
}

// refresh re-reads the files when one changed; r.mu is held.
func (r *Keyring) refresh() {
	st0, err0 := stampOf(r.operators)
	st1, err1 := fileStamp{}, error(nil)
	if r.viewers != "" {
		st1, err1 = stampOf(r.viewers)
	}
	if err0 == nil && err1 == nil && st0 == r.stamps[0] && st1 == r.stamps[1] {
		return
	}
	if err := r.load(); err != nil {
		fmt.Fprintf(r.log, "fleetwatch serve: keeping the last good keys: %v\n", err)
		// Not again until the file changes once more.
		r.stamps = [2]fileStamp{st0, st1}
	}
}

// entries gathers each key's lines, operators' first, and names it by
// its comment (the last line's): the comment alone when no other key has
// it, else with the fingerprint's first 8. A key whose lines cannot be
// combined is an error naming them (keyEntry.add).
func entries(ops, views []keyLine) (map[string]keyEntry, error) {
	byComment := map[string]map[string]bool{}
	for _, l := range append(append([]keyLine{}, ops...), views...) {
		if byComment[l.comment] == nil {
			byComment[l.comment] = map[string]bool{}
		}
		byComment[l.comment][string(l.key.Marshal())] = true
	}
	out := map[string]keyEntry{}
	add := func(l keyLine, viewer bool) error {
		fp := gossh.FingerprintSHA256(l.key)
		fp8 := strings.TrimPrefix(fp, "SHA256:")[:8]
		agent := fp8
		switch {
		case l.comment != "" && len(byComment[l.comment]) == 1:
			agent = l.comment
		case l.comment != "":
			agent = l.comment + "-" + fp8
		}
		e, err := out[string(l.key.Marshal())].add(grant{viewer: viewer, rules: l.rules, where: l.where})
		if err != nil {
			return err
		}
		e.agent, e.fingerprint = "ssh:"+sanitize(agent), fp
		out[string(l.key.Marshal())] = e
		return nil
	}
	for _, l := range ops {
		if err := add(l, false); err != nil {
			return nil, err
		}
	}
	for _, l := range views {
		if err := add(l, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sanitize keeps [A-Za-z0-9._@-]; anything else becomes "-".
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._@-", r):
			return r
		}
		return '-'
	}, s)
}
