package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"
)

// maxAnswer bounds one answer's body: a page of 50 PRs is about 0.5 MiB.
const maxAnswer = 8 << 20

// boundedClient is hc whose answers are cut off at maxAnswer: the SDK
// reads whole bodies into memory.
func boundedClient(hc *http.Client) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if t, ok := base.(*http.Transport); ok {
		// List has statusCalls calls in flight; the default keeps 2
		// idle connections per host and would redial the rest.
		t = t.Clone()
		t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, 2*statusCalls)
		base = t
	}
	c.Transport = limitTransport{base}
	return &c
}

type limitTransport struct{ base http.RoundTripper }

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	resp.Body = &limitBody{ReadCloser: resp.Body, left: maxAnswer}
	if w, ok := r.Context().Value(wordsKey{}).(*words); ok && resp.StatusCode >= 400 {
		w.keep(resp)
	}
	return resp, nil
}

// words keeps the body of a refusal for the calls whose SDK method drops
// it (MergePullRequest answers with the status only): the forge's reason
// is what a person needs to read.
type words struct{ msg string }

type wordsKey struct{}

// withWords is ctx carrying a place for the next refusal's words.
func withWords(ctx context.Context) (context.Context, *words) {
	w := &words{}
	return context.WithValue(ctx, wordsKey{}, w), w
}

// maxWords bounds the refusal body read.
const maxWords = 4 << 10

func (w *words) keep(resp *http.Response) {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxWords))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var m struct{ Message string }
	if json.Unmarshal(data, &m) == nil && m.Message != "" {
		w.msg = oneLine(m.Message)
	} else {
		w.msg = oneLine(string(data))
	}
}

// refusal is the error of a call that answered status without an error
// from the SDK, with the forge's words.
func (w *words) refusal(what string, resp *gitea.Response) error {
	msg := w.msg
	if msg == "" {
		msg = "no reason given"
	}
	return giteaErr(what, resp, errors.New(msg))
}

type limitBody struct {
	io.ReadCloser
	left int64
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("forge: an answer over %d MiB", maxAnswer>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// apiError is a refusal by the forge's API with its status and its
// words (one line, clipped).
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string {
	if e.status == 0 {
		return e.msg
	}
	return fmt.Sprintf("%s (HTTP %d)", e.msg, e.status)
}

// Unwrap is the sentinel a caller acts on: 404 is not found; 403, 405,
// 409 and 422 are refusals (permission, protection, conflict, bad state).
func (e *apiError) Unwrap() error {
	switch e.status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusUnprocessableEntity:
		return ErrRefused
	}
	return nil
}

// maxMessage bounds the forge's words kept in an error.
const maxMessage = 200

// oneLine is s on one line, at most maxMessage bytes.
func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(s), " "), maxMessage)
}

// giteaErr turns an SDK error into the package's: "forge: gitea: what:
// the forge's words", wrapping ErrNotFound or ErrRefused by status.
func giteaErr(what string, resp *gitea.Response, err error) error {
	if err == nil {
		return nil
	}
	e := &apiError{msg: oneLine(err.Error())}
	if resp != nil && resp.Response != nil {
		e.status = resp.StatusCode
	}
	return fmt.Errorf("forge: gitea: %s: %w", what, e)
}

// status is the HTTP status of a forge error, 0 if none.
func status(err error) int {
	var e *apiError
	if errors.As(err, &e) {
		return e.status
	}
	return 0
}

// retry runs f until it succeeds, fails for good (again says whether an
// error is worth another try) or limit has passed, backing off from
// 100 ms to 1 s. Gitea takes a moment after a push before it will open
// or merge a PR from the pushed branch.
func retry(ctx context.Context, limit time.Duration, again func(error) bool, f func() error) error {
	deadline := time.Now().Add(limit)
	wait := 100 * time.Millisecond
	for {
		err := f()
		if err == nil || !again(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}
