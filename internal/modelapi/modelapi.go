// Package modelapi is a scripted model API on loopback: the vendors' APIs
// the agent presets call (Anthropic Messages, OpenAI Responses and Chat
// Completions, Gemini), answering from a script instead of a model. Each
// call that offers the agent's shell tool is answered with the script's
// next step: a command the agent runs with that tool, a final text, or a
// fault (a rate limit, a spent usage window, an overload, a refused key, a
// dropped or slow stream). Calls that offer no shell tool (titles, quota
// probes, token counts) get a short text. Every answer reports exact
// usage, and the server counts what it reported, so a test can compare
// what fleetwatch metered with what the API sent. The tests run the real
// agent CLIs against it; `fleetwatch doctor --live` does too.
package modelapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Step is one answer of the script, to the call whose conversation holds
// as many of the model's answers as steps before it: a tool call and its
// result move the script on by one, and so does a turn's final text, so a
// resumed conversation goes on where it stopped and a new one starts over.
type Step struct {
	// Shell is a command the agent is to run with its shell tool; empty
	// for a final answer.
	Shell string
	// Text is the answer's text: the final message when Shell is empty.
	Text string
	// ShellFrom, when set, makes the step's command the one a person's
	// message in the conversation gave: the rest of the last line that
	// starts with ShellFrom ("RUN: ") in any text of the call. Without
	// such a line the step answers with Text (or Shell, when set): so a
	// test sees whether a note sent mid-run reached the model.
	ShellFrom string
	// Fault, when set, answers the call with it instead, while it lasts.
	Fault *Fault
	// Input and Output are the tokens the answer reports; 0 takes 100
	// and 20.
	Input, Output int64
}

// Fault is an answer that is not a model's.
type Fault struct {
	Kind FaultKind
	// RetryAfter is the retry-after a rate limit or an overload gives.
	RetryAfter time.Duration
	// Reset is when a spent usage window opens again.
	Reset time.Time
	// Times is how many calls it answers before the step is served as if
	// it had none; 0 is every call until Reset (a window) or forever.
	Times int
	// Slow is the pause before each event of a streamed answer (Slow and
	// Dropped answer with the step's own content).
	Slow time.Duration
}

// FaultKind names a fault.
type FaultKind string

const (
	RateLimited FaultKind = "rate_limited" // 429 with retry-after
	UsageWindow FaultKind = "usage_window" // 429: the subscription's window is spent until Reset
	Overloaded  FaultKind = "overloaded"   // 529 (Anthropic) or 503
	AuthFailed  FaultKind = "auth"         // 401
	Dropped     FaultKind = "dropped"      // the stream stops half way, the connection closed
	SlowStream  FaultKind = "slow"         // each event waits Slow
)

// Script is what the server answers, in order.
type Script struct {
	Steps []Step
}

// Server is a scripted model API listening on 127.0.0.1.
type Server struct {
	URL    string // http://127.0.0.1:port, no trailing slash
	script Script
	srv    *http.Server
	ln     net.Listener

	mu     sync.Mutex
	used   map[int]int // calls each faulty step has answered with its fault
	total  Usage
	calls  []Call
	faults int
}

// Usage is what the server reported, in all.
type Usage struct {
	Input, Output int64
	Calls         int // calls answered with usage (faults report none)
}

// Tokens is every token reported, in and out.
func (u Usage) Tokens() int64 { return u.Input + u.Output }

// Call is what the server saw of one call, for tests to read.
type Call struct {
	API    string // "anthropic", "responses", "chat", "gemini"
	Path   string
	Model  string
	Stream bool
	Tool   string // the shell tool offered; "" for a side call
	Step   int    // the step answered; -1 for a side call
	Fault  FaultKind
	Auth   string // the credential the call carried (x-api-key, bearer or x-goog-api-key)
	Header http.Header
}

// Start serves script on a loopback port until Close.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln, used: map[int]int{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, cutting calls in flight.
func (s *Server) Close() error { return s.srv.Close() }

// Usage is what the server has reported so far.
func (s *Server) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Calls is every call so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Request is what a dialect reads of a call.
type Request struct {
	Model  string
	Stream bool
	// Tool is the shell tool the call offers (a name in shellTools), ""
	// when it offers none.
	Tool string
	// Results is how many of the model's answers the conversation holds
	// (assistant messages, tool calls): the index of the step to answer.
	Results int
	// Body is the call's JSON, for ShellFrom (set by serve).
	Body []byte
}

// Answer is what a dialect writes: a tool call or a text, with usage.
type Answer struct {
	Model         string
	Stream        bool   // answer with server-sent events
	Tool          string // the shell tool to call; "" for a text answer
	Args          any    // the tool call's arguments (shellTools)
	Text          string
	Input, Output int64
	Slow          time.Duration // pause before each streamed event
	Drop          bool          // stop half way and close the connection
	Seq           int           // the answer's number, for ids
}

// dialect is one vendor's wire format.
type dialect interface {
	name() string
	// match reports whether the dialect serves this call.
	match(r *http.Request) bool
	// read parses a call's body.
	read(r *http.Request, body []byte) (Request, error)
	// answer writes a scripted answer.
	answer(w http.ResponseWriter, a Answer)
	// fault writes a fault's status, headers and error body.
	fault(w http.ResponseWriter, f Fault)
}

// dialects are tried in order; the first that matches serves the call.
var dialects = []dialect{anthropicAPI{}, responsesAPI{}, chatAPI{}, geminiAPI{}}

// shellTools are the shell tools of the agent CLIs, by name, each with
// how its arguments carry a command.
var shellTools = map[string]func(cmd string) any{
	// Claude Code; opencode.
	"Bash": func(cmd string) any { return map[string]any{"command": cmd, "description": "run the script's command"} },
	"bash": func(cmd string) any { return map[string]any{"command": cmd, "description": "run the script's command"} },
	// Codex: its unified exec tool (0.169), its older shell tools.
	"exec_command":  func(cmd string) any { return map[string]any{"cmd": cmd} },
	"shell_command": func(cmd string) any { return map[string]any{"command": cmd} },
	"shell":         func(cmd string) any { return map[string]any{"command": []string{"bash", "-lc", cmd}} },
	// Gemini CLI; qwen-code (its fork of it).
	"run_shell_command": func(cmd string) any { return map[string]any{"command": cmd, "description": "run the script's command"} },
}

// ShellTool is the first of names that is a shell tool this package
// knows, "" when none is.
func ShellTool(names []string) string {
	for _, n := range names {
		if _, ok := shellTools[n]; ok {
			return n
		}
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var d dialect
	for _, c := range dialects {
		if c.match(r) {
			d = c
			break
		}
	}
	if d == nil {
		http.Error(w, "modelapi: no scripted API at "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	req, err := d.read(r, body)
	if err != nil {
		http.Error(w, "modelapi: "+err.Error(), http.StatusBadRequest)
		return
	}
	req.Body = body
	call := Call{API: d.name(), Path: r.URL.Path, Model: req.Model, Stream: req.Stream, Tool: req.Tool, Step: -1, Auth: credential(r), Header: r.Header.Clone()}
	a, f := s.next(req, &call)
	s.mu.Lock()
	s.calls = append(s.calls, call)
	if f == nil {
		s.total.Input += a.Input
		s.total.Output += a.Output
		s.total.Calls++
	}
	s.mu.Unlock()
	if f != nil {
		d.fault(w, *f)
		return
	}
	d.answer(w, a)
}

// next is the answer to req: its step's, or a short text for a side call,
// or the step's fault while it lasts.
func (s *Server) next(req Request, call *Call) (Answer, *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := Answer{Model: req.Model, Stream: req.Stream, Input: 10, Output: 2, Text: "ok", Seq: len(s.calls) + 1}
	if req.Tool == "" {
		return a, nil
	}
	i := min(req.Results, len(s.script.Steps))
	call.Step = i
	if i == len(s.script.Steps) {
		a.Input, a.Output, a.Text = 100, 20, "## Result\nThe script is done."
		return a, nil
	}
	st := s.script.Steps[i]
	a.Input, a.Output, a.Text = cmp.Or(st.Input, 100), cmp.Or(st.Output, 20), st.Text
	shell := st.Shell
	if st.ShellFrom != "" {
		if cmd := MarkedLine(req.Body, st.ShellFrom); cmd != "" {
			shell = cmd
		}
	}
	if shell != "" {
		a.Tool, a.Args = req.Tool, shellTools[req.Tool](shell)
	}
	if f := st.Fault; f != nil {
		switch f.Kind {
		case Dropped:
			a.Drop = s.used[i] < max(f.Times, 1)
			s.used[i]++
			if a.Drop {
				call.Fault = f.Kind
			}
			return a, nil
		case SlowStream:
			a.Slow = cmp.Or(f.Slow, time.Second)
			return a, nil
		}
		lasts := (f.Times == 0 && (f.Reset.IsZero() || time.Now().Before(f.Reset))) || s.used[i] < f.Times
		if lasts {
			s.used[i]++
			call.Fault = f.Kind
			return Answer{}, f
		}
	}
	return a, nil
}

// credential is the key a call carried, whichever header the vendor uses.
func credential(r *http.Request) string {
	if k := r.Header.Get("x-api-key"); k != "" {
		return k
	}
	if k := r.Header.Get("x-goog-api-key"); k != "" {
		return k
	}
	if k := r.URL.Query().Get("key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// events writes server-sent events as a stream, flushing each, waiting
// slow before each and stopping half way when drop is set (the
// connection is then closed under the client).
type events struct {
	w    http.ResponseWriter
	slow time.Duration
	drop bool
	n    int // events written
	half int // the event at which a dropped stream stops
}

func newEvents(w http.ResponseWriter, a Answer, total int) *events {
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &events{w: w, slow: a.Slow, drop: a.Drop, half: max(total/2, 1)}
}

// send writes one event named name (no "event:" line when name is "")
// with data as JSON.
func (e *events) send(name string, data any) {
	if e.drop && e.n == e.half {
		// net/http's way to cut a response: the connection is closed
		// with the stream half sent.
		panic(http.ErrAbortHandler)
	}
	if e.slow > 0 {
		time.Sleep(e.slow)
	}
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	j, _ := json.Marshal(data)
	fmt.Fprintf(&b, "data: %s\n\n", j)
	_, _ = e.w.Write(b.Bytes())
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
	e.n++
}

// raw writes a data line that is not JSON (OpenAI's "[DONE]").
func (e *events) raw(data string) {
	fmt.Fprintf(e.w, "data: %s\n\n", data)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeJSON writes v as a JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// retryAfter sets the retry-after header, in whole seconds.
func retryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		w.Header().Set("retry-after", fmt.Sprint(int((d+time.Second-1)/time.Second)))
	}
}

// MarkedLine is the rest of the last line starting with mark in any
// string of the JSON document body (in document order), "" when none does.
func MarkedLine(body []byte, mark string) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	found := ""
	for {
		tok, err := dec.Token()
		if err != nil {
			return found
		}
		s, ok := tok.(string)
		if !ok {
			continue
		}
		for _, line := range strings.Split(s, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), mark); ok && strings.TrimSpace(rest) != "" {
				found = strings.TrimSpace(rest)
			}
		}
	}
}
