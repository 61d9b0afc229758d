package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// What the GitHub and GitLab clients read from a forge is bounded here:
// their libraries decode whatever body they are given and follow whatever
// Link or X-Next-Page they are told, so the bounds sit under them.
const (
	// pageCap bounds a listing (100 a page: 5,000 items).
	pageCap = 50
	// quoteCap bounds the forge's own words quoted in an error.
	quoteCap = 200
)

// answerCap bounds one response body: a page of 100 GitHub pull
// requests, each with its repositories inline, is about 3 MiB. (A var:
// the tests of the bound use a smaller one.)
var answerCap int64 = 32 << 20

// errAnswerTooBig ends a response body read past answerCap.
var errAnswerTooBig = errors.New("forge: an answer over the size bound (32 MiB)")

// boundHTTP is a copy of hc (Open's client when nil) whose response
// bodies end in errAnswerTooBig past answerCap bytes.
func boundHTTP(hc *http.Client) *http.Client {
	if hc == nil {
		hc = httpClient()
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = capTransport{base}
	return &c
}

type capTransport struct{ base http.RoundTripper }

func (t capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &capBody{ReadCloser: resp.Body, left: answerCap}
	}
	return resp, err
}

type capBody struct {
	io.ReadCloser
	left int64
}

func (b *capBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errAnswerTooBig
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// forgeWords is the forge's message made fit to quote: one line, clipped.
func forgeWords(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "no message"
	}
	return clip(s, quoteCap)
}

// isSHA reports whether s is a full commit id as git prints it; a forge's
// answer that is not one is not taken as a commit.
func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// pageErr is the error of a listing that did not end within pageCap.
func pageErr(kind, what string) error {
	return fmt.Errorf("forge: %s: %s: more than %d pages: %w", kind, what, pageCap, ErrRefused)
}

// mergedPolls and mergedWait bound how long MarkMerged waits for a forge
// that notices a pushed merge on its own (tests shorten them).
var (
	mergedPolls = 6
	mergedWait  = time.Second
)

// waitMerged polls get until the PR reads merged, a bounded number of
// times; it is how MarkMerged follows GitHub and GitLab, which record a
// PR merged when its head reaches the base branch by a push.
func waitMerged(ctx context.Context, kind string, number int, get func(context.Context, int) (PR, error)) error {
	state := ""
	for i := range mergedPolls {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(mergedWait):
			}
		}
		pr, err := get(ctx, number)
		if err != nil {
			return err
		}
		switch state = pr.State; state {
		case StateMerged:
			return nil
		case StateClosed:
			return fmt.Errorf("forge: %s: PR %d was closed without a merge: %w", kind, number, ErrRefused)
		}
	}
	return fmt.Errorf("forge: %s: PR %d is still %s after its head was pushed to its base (%d looks): %w", kind, number, state, mergedPolls, ErrRefused)
}
