package forge

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The contract tests of the GitHub and GitLab clients run against a
// scripted forge: an httptest server that answers each request with a
// fixture written from the forge's API documentation (testdata/github,
// testdata/gitlab; each README names the pages) and asserts what the
// client sent: its method, path, query, token and the JSON body fields
// that matter.

// exchange is one request a test expects, in order, and its answer.
type exchange struct {
	method, path string
	// query holds the parameters the request must carry, with their values.
	query url.Values
	// body holds JSON body fields the request must carry, with values as
	// fmt prints them; absent are fields it must not carry.
	body   map[string]any
	absent []string
	status int // 200 when 0
	file   string
	raw    string      // the answer when there is no file
	header http.Header // answered; "{srv}" reads as the server's URL
}

// script is a scripted forge.
type script struct {
	t                *testing.T
	authKey, authVal string
	dir              string
	srv              *httptest.Server
	mu               sync.Mutex
	steps            []exchange
	next             int
}

// serve starts a forge that expects steps in order, each carrying the
// header authKey: authVal, and answers from testdata/dir.
func serve(t *testing.T, authKey, authVal, dir string, steps ...exchange) *script {
	t.Helper()
	s := &script{t: t, authKey: authKey, authVal: authVal, dir: dir, steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(s.answer))
	t.Cleanup(func() {
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next != len(s.steps) {
			t.Errorf("the forge got %d of the %d requests it expected; next: %s %s", s.next, len(s.steps), s.steps[s.next].method, s.steps[s.next].path)
		}
	})
	return s
}

func (s *script) answer(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := r.Method + " " + r.URL.EscapedPath() + "?" + r.URL.RawQuery
	if s.next >= len(s.steps) {
		s.t.Errorf("unexpected request %s", got)
		w.WriteHeader(http.StatusTeapot)
		return
	}
	e := s.steps[s.next]
	s.next++
	s.check(e, r, got)
	for k, vs := range e.header {
		for _, v := range vs {
			w.Header().Add(k, strings.ReplaceAll(v, "{srv}", s.srv.URL))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(max(e.status, http.StatusOK))
	w.Write(s.fixture(e))
}

func (s *script) fixture(e exchange) []byte {
	if e.file == "" {
		return []byte(e.raw)
	}
	data, err := os.ReadFile(filepath.Join("testdata", s.dir, e.file))
	if err != nil {
		s.t.Error(err)
	}
	return data
}

// check asserts that r is the request e describes.
func (s *script) check(e exchange, r *http.Request, got string) {
	t := s.t
	if r.Method != e.method || r.URL.EscapedPath() != e.path {
		t.Errorf("request %d: got %s, want %s %s", s.next, got, e.method, e.path)
	}
	if v := r.Header.Get(s.authKey); v != s.authVal {
		t.Errorf("%s: %s is %q, want %q", got, s.authKey, v, s.authVal)
	}
	// fleetwatch never approves, on any forge, in any test.
	if strings.HasSuffix(r.URL.Path, "/approve") {
		t.Errorf("%s: fleetwatch approved", got)
	}
	q := r.URL.Query()
	for k, want := range e.query {
		if strings.Join(q[k], ",") != strings.Join(want, ",") {
			t.Errorf("%s: query %s is %q, want %q", got, k, q[k], want)
		}
	}
	if len(e.body) == 0 && len(e.absent) == 0 {
		return
	}
	var body map[string]any
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &body); err != nil {
		t.Errorf("%s: body %q is not a JSON object: %v", got, data, err)
		return
	}
	if body["event"] == "APPROVE" {
		t.Errorf("%s: a review that approves: %s", got, data)
	}
	for k, want := range e.body {
		if v, ok := body[k]; !ok || fmt.Sprint(v) != fmt.Sprint(want) {
			t.Errorf("%s: body field %s is %v, want %v (body %s)", got, k, v, want, data)
		}
	}
	for _, k := range e.absent {
		if _, ok := body[k]; ok {
			t.Errorf("%s: body holds %s: %s", got, k, data)
		}
	}
}

// elsewhere is another host a forge may redirect to; it counts the
// requests that reach it and the tokens they carry.
type elsewhere struct {
	srv    *httptest.Server
	mu     sync.Mutex
	hits   int
	tokens []string
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.hits++
		for _, k := range []string{"Authorization", "Private-Token"} {
			if v := r.Header.Get(k); v != "" {
				e.tokens = append(e.tokens, k+": "+v)
			}
		}
		w.Write([]byte("{}"))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// endless is a body that goes on past any bound: a JSON array that never
// closes.
type endless struct{ off int }

func (e *endless) Read(p []byte) (int, error) {
	const item = `{"number":1,"title":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},`
	for i := range p {
		if e.off == 0 {
			p[i] = '['
		} else {
			p[i] = item[(e.off-1)%len(item)]
		}
		e.off++
	}
	return len(p), nil
}

// hostile serves one answer whatever is asked: the endless body, a
// redirect to another host, or a raw body.
func hostile(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(srv.Close)
	return srv
}

// smallAnswers bounds answers to n bytes until undone: reading 32 MiB
// takes seconds under -race, and the bound works the same at any size.
func smallAnswers(n int64) func() {
	old := answerCap
	answerCap = n
	return func() { answerCap = old }
}
