package workers

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/converse"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A build on an endpoint with `talk:` is a conversation the driver holds
// (workers/converse) rather than a one-shot run: the plan goes as the
// first turn; a person's note steers the running turn or waits for the
// next; an interrupt ends a turn, not the run; the agent's permission
// requests wait for a person's answer. When a turn ends with nothing more
// to say the driver ends the conversation and the run ends as a one-shot
// run would. Messages arrive from the agent's mail folder (this machine)
// or in the claims backend's record (another machine), each checked
// against the lease and logged in the event log.

// talking is a run's conversation as its driver holds it.
type talking struct {
	conv     converse.Conversation
	turn     bool             // a turn runs
	turns    int              // turns started
	queued   []claims.Message // notes for the next turn
	last     converse.Event   // the last turn's end
	idle     bool             // interrupted: the run waits for a note rather than ending
	idleAt   time.Time
	closed   bool            // Close was called: the agent is to exit
	closeAt  time.Time       // when it was
	said     strings.Builder // the agent's text not yet logged
	lastTool string          // the last tool line logged
}

// waiting is a question the run waits on: its conversation's (a
// permission request), or one the agent asked its driver (`fleetwatch
// ask`), whose answer goes back on reply.
type waiting struct {
	ask   converse.Ask
	since time.Time
	reply chan contain.AgentReply
}

// talks reports whether job is a conversation on this driver's endpoint.
func (d *Driver) talks(job Job) bool {
	return d.Talk != converse.OneShot && job.Argv == nil && (job.Mode == "" || job.Mode == proc.ModeBuild)
}

// startTalk begins the conversation on r's started agent and sends the
// plan as its first turn, with the notes kept for this plan's next run.
func (d *Driver) startTalk(r *running, pipes converse.Pipes, ph *proc.Placeholders) error {
	conv, err := converse.Start(d.Talk, pipes, converse.Config{Dir: ph.Worktree, Model: d.Worker.Model, Asks: d.Asks, Logf: d.Log.Printf})
	if err != nil {
		return fmt.Errorf("the %s conversation did not start: %w", d.Talk.Name(), err)
	}
	r.talk = &talking{conv: conv}
	prompt := ph.Expand([]string{d.Prompt})[0]
	if notes := d.keptNotes(r); notes != "" {
		prompt += "\n\nNotes from the operator for this run:\n" + notes
	}
	if err := d.prompt(r, prompt); err != nil {
		conv.Close()
		return fmt.Errorf("the plan could not be sent as the first turn: %w", err)
	}
	d.Log.Printf("talking %s: the plan went as the first turn", d.Talk.Name())
	return nil
}

func (d *Driver) prompt(r *running, text string) error {
	t := r.talk
	if err := t.conv.Prompt(text); err != nil {
		return err
	}
	t.turn, t.idle = true, false
	t.turns++
	d.state.Note = fmt.Sprintf("turn %d", t.turns)
	return nil
}

// session is the agent's session the run held: its conversation's, or
// the one its one-shot output named.
func (r *running) session() string {
	if r.talk != nil {
		return r.talk.conv.Session()
	}
	return r.result.Result().Session
}

// talkEvents are r's conversation's events; nil (never) for a one-shot run.
func (r *running) talkEvents() <-chan converse.Event {
	if r.talk == nil || r.talk.closed {
		return nil
	}
	return r.talk.conv.Events()
}

// onEvent takes one event of r's conversation.
func (d *Driver) onEvent(r *running, ev converse.Event, ok bool) {
	t := r.talk
	if !ok {
		// Its stdout ended: the agent is going; its exit ends the run.
		d.flushSaid(t)
		t.closed = true
		return
	}
	if ev.Kind != converse.Message {
		d.flushSaid(t)
	}
	switch ev.Kind {
	case converse.Message:
		t.said.WriteString(ev.Text)
		if t.said.Len() > maxSaid {
			d.flushSaid(t) // an agent that only talks is logged as it goes
		}
	case converse.Tool:
		// A tool's updates repeat its title: each is logged once.
		if said := clip(line(ev.Text), 400) + filesNote(ev.Files); said != t.lastTool {
			t.lastTool = said
			d.Log.Printf("agent: %s", said)
		}
		d.state.Note = fmt.Sprintf("turn %d: %s", t.turns, clip(line(ev.Text), 80))
	case converse.Usage:
		// The metering proxy counts what the run spends; the agent's own
		// figures are only logged.
		if u := ev.Tokens; u != nil && u.Input+u.Output > 0 {
			d.Log.Printf("agent reports %d tokens in, %d out", u.Input, u.Output)
		}
	case converse.TurnStarted:
		// Ours (Prompt counted it), or one the agent began itself (a
		// note that came as a turn ended): a turn runs either way.
		t.turn, t.idle = true, false
	case converse.Asked:
		d.asked(r, ev.Ask, nil)
	case converse.TurnEnded:
		d.turnEnded(r, ev)
	case converse.Failed:
		d.Log.Printf("the conversation failed: %s; ending it", line(ev.Text))
		t.last = converse.Event{Kind: converse.TurnEnded, Stop: converse.StopError, Text: ev.Text}
		d.endTalk(r)
	}
}

// maxSaid bounds the agent's text held before it is logged.
const maxSaid = 64 << 10

func (d *Driver) flushSaid(t *talking) {
	if t.said.Len() == 0 {
		return
	}
	for _, l := range strings.Split(strings.TrimSpace(t.said.String()), "\n") {
		d.Log.Printf("agent says: %s", termtext.Line(l))
	}
	t.said.Reset()
}

// turnEnded waits for a person after an interrupt (the notes that waited
// for the turn go with the next one's), goes on with those notes, waits
// while a question waits, and otherwise ends the conversation.
func (d *Driver) turnEnded(r *running, ev converse.Event) {
	t := r.talk
	t.turn, t.last = false, ev
	d.Log.Printf("turn %d ended: %s%s", t.turns, ev.Stop, textNote(ev.Text))
	// The turn's own requests ended with it (an interrupt answers them
	// "cancelled"); a question asked of the driver waits on.
	r.asks = slices.DeleteFunc(r.asks, func(w *waiting) bool { return w.reply == nil })
	d.showAsking(r)
	switch {
	case ev.Stop == converse.StopCancelled:
		t.idle, t.idleAt = true, time.Now()
		d.state.Note = fmt.Sprintf("turn %d interrupted: waiting for a note", t.turns)
		d.Log.Printf("the turn was interrupted; the run waits for a note (fleetwatch tell)")
	case len(t.queued) > 0:
		notes := t.queued
		t.queued = nil
		if err := d.prompt(r, joinNotes(notes)); err != nil {
			d.Log.Printf("the notes could not be sent: %v; ending the conversation", err)
			d.endTalk(r)
			return
		}
		d.Log.Printf("turn %d: %d note(s) sent", t.turns, len(notes))
	case len(r.asks) > 0:
	default:
		d.endTalk(r)
	}
}

// endTalk ends the conversation: the agent is to exit, and is stopped
// should it not within closeGrace.
func (d *Driver) endTalk(r *running) {
	t := r.talk
	if t.closed {
		return
	}
	d.flushSaid(t)
	t.closed, t.closeAt = true, time.Now()
	if err := t.conv.Close(); err != nil {
		d.Log.Printf("ending the conversation: %v", err)
	}
}

// closeGrace is how long an agent whose conversation ended has to exit
// before the driver stops it.
const closeGrace = 10 * time.Second

// talkTick is the heartbeat's look at the run's talk: an agent that did
// not exit after its conversation ended is stopped; a question, or an
// interrupted turn, waiting longer than wait_for_answer parks the plan
// (over, with its outcome).
func (d *Driver) talkTick(r *running, renewing bool) (o Outcome, over bool) {
	if t := r.talk; t != nil && t.closed && !t.closeAt.IsZero() && time.Since(t.closeAt) > closeGrace {
		d.Log.Printf("the agent did not exit %v after its conversation ended; stopping it", closeGrace)
		t.closeAt = time.Time{}
		stopGroup(r.pgid)
	}
	wait := d.settings.AnswerWait()
	if w := r.oldest(); w != nil && time.Since(w.since) > wait {
		why := fmt.Sprintf("no answer in %v to the agent's question: %s", wait, w.ask.Question)
		return d.parkAsking(r, why, renewing), true
	}
	if t := r.talk; t != nil && t.idle && time.Since(t.idleAt) > wait {
		return d.parkAsking(r, fmt.Sprintf("no note in %v after the turn was interrupted", wait), renewing), true
	}
	return o, false
}

// oldest is the question waiting longest.
func (r *running) oldest() *waiting {
	if len(r.asks) > 0 {
		return r.asks[0]
	}
	return nil
}

// parkAsking stops the agent and parks its plan in blocked/ with why.
func (d *Driver) parkAsking(r *running, why string, renewing bool) Outcome {
	d.Log.Printf("%s; stopping the agent", why)
	d.stop(r, r.done)
	d.bringEnd(r)
	if !renewing {
		return Outcome{Code: -1, Plan: d.whereIs(r.job.Rel), Note: why}
	}
	return d.parkBlocked(r, why)
}

// asked records the agent's question: the state file says the run waits
// for input (every face shows it; the notices tell the operator's targets).
// reply is where the answer goes for a question asked of the driver; nil
// for the conversation's own.
func (d *Driver) asked(r *running, a *converse.Ask, reply chan contain.AgentReply) {
	if a == nil {
		return
	}
	a.Question = clip(line(a.Question), 400)
	r.asks = append(r.asks, &waiting{ask: *a, since: time.Now(), reply: reply})
	d.Log.Printf("the agent asks (%s): %s", a.ID, a.Question)
	d.showAsking(r)
	d.save()
	d.publish()
}

// showAsking puts the oldest question in the state file.
func (d *Driver) showAsking(r *running) {
	w := r.oldest()
	if w == nil {
		d.state.Asking = nil
		return
	}
	rec := &claims.AskRecord{ID: w.ask.ID, Question: w.ask.Question, Since: look.UnixSeconds(w.since)}
	for _, o := range w.ask.Options {
		rec.Options = append(rec.Options, claims.AskOption{ID: o.ID, Label: o.Label, Allow: o.Allow})
	}
	d.state.Asking = rec
	d.state.Note = "waiting for input: " + clip(w.ask.Question, 120)
}

// stopGroup sends SIGTERM to the process group pgid.
func stopGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }

// talkExit is the exit a conversation's agent is judged by: a run whose
// last turn ended well is a good run however the agent then went (it was
// told to, and stopped when it did not); one whose last turn failed is
// not, even when it exited 0.
func (r *running) talkExit(code int) (int, string) {
	t := r.talk
	if t == nil {
		return code, ""
	}
	switch {
	case t.last.Stop == converse.StopDone && t.closed:
		return 0, ""
	case t.last.Stop == "" || t.last.Stop == converse.StopDone:
		return code, ""
	case code == 0:
		return 1, fmt.Sprintf("its last turn ended: %s%s", t.last.Stop, textNote(t.last.Text))
	}
	return code, ""
}

// keptNotes are the notes kept for r's plan's next run, which r takes,
// "" when none.
func (d *Driver) keptNotes(r *running) string {
	p, err := notesChecked(d.Tree.Project, r.job.Rel)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) > maxNotes {
		return ""
	}
	r.notes = len(b)
	return strings.TrimSpace(string(b))
}

// talkEnv is how a run talks back: $FLEET_BIN, this fleetwatch, whose
// `ask` the build prompt offers; and for a one-shot build the notes kept
// for its plan ($FLEET_NOTES, which the prompt names too).
func (d *Driver) talkEnv(r *running) []string {
	var env []string
	if exe, err := os.Executable(); err == nil {
		env = append(env, "FLEET_BIN="+exe)
	}
	if d.talks(r.job) || cmp.Or(r.job.Mode, proc.ModeBuild) != proc.ModeBuild || d.keptNotes(r) == "" {
		return env
	}
	return append(env, "FLEET_NOTES="+notesFile(d.Tree.Project, r.job.Rel))
}

// NotesDir holds the notes kept for each plan's next run.
const NotesDir = "var/fleet/notes"

// maxNotes bounds the notes one plan keeps for its next run.
const maxNotes = 64 << 10

func notesFile(project, rel string) string {
	return filepath.Join(project, filepath.FromSlash(NotesDir), model.SlugOf(path.Base(rel))+".md")
}

// notesChecked is rel's notes file, refused when it or a folder on the
// way is a symlink.
func notesChecked(project, rel string) (string, error) {
	if err := safepath.Check(project, NotesDir+"/"+model.SlugOf(path.Base(rel))+".md"); err != nil {
		return "", err
	}
	return notesFile(project, rel), nil
}

// keepNote keeps m for rel's plan's next run (a one-shot run cannot take
// it now).
func (d *Driver) keepNote(rel string, m claims.Message) error {
	p, err := notesChecked(d.Tree.Project, rel)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if fi, err := os.Stat(p); err == nil && fi.Size() > maxNotes-claims.MaxMailText {
		return fmt.Errorf("%s already keeps %d KiB of notes for the plan's next run", NotesDir, fi.Size()>>10)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "- from %s: %s\n", m.By, strings.ReplaceAll(strings.TrimSpace(m.Text), "\n", "\n  "))
	return err
}

// dropNotes forgets the notes r took once it ended well; those kept
// while it ran stay for the next run.
func (d *Driver) dropNotes(r *running) {
	if r.notes == 0 {
		return
	}
	p, err := notesChecked(d.Tree.Project, r.job.Rel)
	var b []byte
	if err == nil {
		b, err = os.ReadFile(p)
	}
	if err == nil && len(b) > r.notes {
		err = atomicfile.Write(p, b[r.notes:], 0o644)
	} else if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		d.Log.Printf("could not forget the notes given to %s: %v", r.job.Rel, err)
	}
}

func joinNotes(ms []claims.Message) string {
	var b strings.Builder
	b.WriteString("Notes from the operator, sent while you worked:\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "\nFrom %s:\n%s\n", m.By, strings.TrimSpace(m.Text))
	}
	return b.String()
}

func line(s string) string { return termtext.Line(s) }

func clip(s string, n int) string { return claims.Clip(s, n) }

func textNote(s string) string {
	if s = strings.TrimSpace(s); s != "" {
		return ": " + clip(line(s), 200)
	}
	return ""
}

func filesNote(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return " (" + clip(strings.Join(files, ", "), 200) + ")"
}

// logMessage records m in the event log: who sent what to which run, and
// how it was taken.
func (d *Driver) logMessage(rel string, m claims.Message, rep look.MailReply) {
	reason := rep.Outcome
	if m.Text != "" {
		reason += ": " + clip(line(m.Text), 400)
	}
	if rep.Reason != "" {
		reason += " (" + rep.Reason + ")"
	}
	d.Tree.LogEvent(planfs.Event{Event: m.Kind, Slug: model.SlugOf(path.Base(rel)), From: rel, To: rel,
		AgentID: m.By, Worker: d.Worker.AgentID, Reason: reason, Via: m.Host})
}

// startStreams gives r's agent its pipes: a conversation's stdin and
// stdout are the driver's (pipes); a one-shot run's stdout goes to the log.
func (d *Driver) startStreams(r *running) (*proc.AgentStreams, *converse.Pipes, error) {
	if !d.talks(r.job) {
		s, err := proc.StartStreams(r.cmd, r.out, r.errw)
		return s, nil, err
	}
	s, in, out, err := proc.StartTalkStreams(r.cmd, r.errw)
	if err != nil {
		return nil, nil, err
	}
	return s, &converse.Pipes{In: in, Out: out}, nil
}

// talkFailed ends a run whose conversation could not begin: the agent is
// stopped and the plan goes back to its lane.
func (d *Driver) talkFailed(r *running, err error) Outcome {
	reason := tree.ErrText(err)
	d.Log.Printf("%s; stopping the agent", reason)
	d.stop(r, r.done)
	d.bringEnd(r)
	d.closeBox(r)
	r.meter.Close()
	return d.giveBack(r.job.Rel, r.me, reason, Outcome{Code: -1, Note: reason})
}

// freeLoopbackPort is a loopback port free now, 0 when none could be had
// (the conversation then goes without: {talk_port} is empty).
func freeLoopbackPort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
