package look

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// sessionsRel holds each plan's last agent session, by slug: the
// conversation a plan sent back for more work resumes.
const sessionsRel = "var/fleet/sessions"

// Session is the agent conversation a plan's last build or plan turn left.
type Session struct {
	Endpoint string    `json:"endpoint"`
	ID       string    `json:"session"`
	Agent    string    `json:"agent"`
	At       time.Time `json:"at"`
}

// sessionID is what a session id may be: the tool printed it, and it
// becomes an argument, so nothing that could read as a flag or a path.
var sessionID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`) })

// ValidSession reports whether id may stand for a session in an argv.
func ValidSession(id string) bool { return sessionID().MatchString(id) }

func sessionPath(project, slug string) string {
	return filepath.Join(project, filepath.FromSlash(sessionsRel), slug+".json")
}

// validSlug is a slug fit for a file name of its own.
func validSlug(slug string) bool {
	return slug != "" && slug != "." && slug != ".." && !strings.ContainsAny(slug, "/\\\x00")
}

// LastSession is the session the plan slug's last turn left, when there
// is one and it may be resumed.
func LastSession(project, slug string) (Session, bool) {
	if !validSlug(slug) {
		return Session{}, false
	}
	rel, err := tree.RelIn(project, sessionPath(project, slug))
	if err != nil {
		return Session{}, false
	}
	f, err := safepath.OpenFile(project, rel, os.O_RDONLY, 0)
	if err != nil {
		return Session{}, false
	}
	defer f.Close()
	var s Session
	if json.NewDecoder(io.LimitReader(f, 4<<10)).Decode(&s) != nil || !ValidSession(s.ID) {
		return Session{}, false
	}
	return s, true
}

// SaveSession records s as the plan slug's last session.
func SaveSession(project, slug string, s Session) error {
	if !validSlug(slug) || !ValidSession(s.ID) {
		return errors.New("no session to record")
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return tree.WriteAtomicIn(project, sessionPath(project, slug), append(b, '\n'))
}

// DropSession forgets the plan slug's session.
func DropSession(project, slug string) {
	if !validSlug(slug) {
		return
	}
	if d, err := safepath.OpenDir(project, sessionsRel, false); err == nil {
		_ = unix.Unlinkat(int(d.Fd()), slug+".json", 0)
		d.Close()
	}
}
