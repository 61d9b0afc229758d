package forge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGiteaHostileAnswers: answers a real Gitea would not give (missing
// fields, nulls, huge or multi-line bodies) are errors or zero values,
// never a panic, an unbounded read or a multi-line message.
func TestGiteaHostileAnswers(t *testing.T) {
	huge := strings.Repeat("x", maxAnswer+1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/repos/o/r/pulls/1", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"number":1,"head":null,"base":null,"merge_commit_sha":null,"updated_at":null}`))
	})
	mux.HandleFunc("GET /api/v1/repos/o/r/pulls/2", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"number":2,"title":"` + huge + `"}`))
	})
	mux.HandleFunc("GET /api/v1/repos/o/r/pulls/3/reviews", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[null,{"id":7,"state":"APPROVED","user":null},{"id":8,"state":"REQUEST_REVIEW"}]`))
	})
	mux.HandleFunc("POST /api/v1/repos/o/r/issues/4/comments", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		w.Write([]byte(`{"message":"first line\nsecond line ` + strings.Repeat("y", 500) + `"}`))
	})
	mux.HandleFunc("POST /api/v1/repos/o/r/pulls/5/merge", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"message":"head out of date"}`))
	})
	mux.HandleFunc("GET /api/v1/repos/o/r/pulls/5", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"number":5,"state":"open","base":{"ref":"main"}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	f, err := newGitea(Conn{URL: srv.URL, Repo: "o/r", Token: "t", HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if pr, err := f.Get(ctx, 1); err != nil || pr.Number != 1 || pr.Head != "" || pr.Checks != "" || pr.State != StateOpen {
		t.Errorf("Get of a PR without head or base = %+v, %v", pr, err)
	}
	if _, err := f.Get(ctx, 2); err == nil || !strings.Contains(err.Error(), "over 8 MiB") {
		t.Errorf("Get of a 8 MiB answer: %v, want the bound's error", err)
	}
	if rs, err := f.Reviews(ctx, 3); err != nil || len(rs) != 1 || rs[0].ID != 7 || rs[0].Author != "" || rs[0].State != ReviewApproved {
		t.Errorf("Reviews with nulls = %+v, %v", rs, err)
	}
	err = f.Comment(ctx, 4, "x")
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "\n") || len(err.Error()) > 300 || !strings.Contains(err.Error(), "first line second line") {
		t.Errorf("Comment refused with a long two-line message: %q, want one clipped line wrapping ErrRefused", err)
	}
	if _, err := f.Merge(ctx, 5, "abc", "m"); !errors.Is(err, ErrHeadMoved) {
		t.Errorf("Merge answered 409 head out of date: %v, want ErrHeadMoved", err)
	}
}
