package gocache

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the cache program a real go command
// starts (TestWithGo).
func TestMain(m *testing.M) {
	if args := os.Getenv("GOCACHEPROG_TEST_CHILD"); args != "" {
		os.Exit(Main(strings.Fields(args)))
	}
	os.Exit(m.Run())
}

func id(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

// converse runs a Prog over the requests (a put's body as its next line)
// and returns the responses after the first.
func converse(t *testing.T, p *Prog, lines ...string) []response {
	t.Helper()
	var out bytes.Buffer
	if err := p.Serve(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	dec := json.NewDecoder(&out)
	var first response
	if err := dec.Decode(&first); err != nil || strings.Join(first.KnownCommands, ",") != "get,put,close" || first.ID != 0 {
		t.Fatalf("first response %+v, %v", first, err)
	}
	var res []response
	for dec.More() {
		var r response
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	return res
}

func getReq(n int, action []byte) string {
	b, _ := json.Marshal(request{ID: int64(n), Command: "get", ActionID: action})
	return string(b)
}

func putReq(n int, action []byte, body string) []string {
	out := sha256.Sum256([]byte(body))
	b, _ := json.Marshal(request{ID: int64(n), Command: "put", ActionID: action, OutputID: out[:], BodySize: int64(len(body))})
	lines := []string{string(b)}
	if body != "" {
		lines = append(lines, `"`+base64.StdEncoding.EncodeToString([]byte(body))+`"`)
	}
	return lines
}

func TestGetMissPutGetClose(t *testing.T) {
	w := t.TempDir()
	p := &Prog{Write: w}
	a := id("action")
	lines := []string{getReq(1, a)}
	lines = append(lines, putReq(2, a, "compiled")...)
	lines = append(lines, getReq(3, a), `{"ID":4,"Command":"close"}`, getReq(5, a))
	res := converse(t, p, lines...)
	if len(res) != 4 {
		t.Fatalf("want 4 responses (none after close), got %+v", res)
	}
	if !res[0].Miss || res[0].ID != 1 {
		t.Errorf("get on an empty cache: %+v, want a miss", res[0])
	}
	if res[1].Err != "" || res[1].DiskPath == "" {
		t.Fatalf("put: %+v", res[1])
	}
	if data, _ := os.ReadFile(res[1].DiskPath); string(data) != "compiled" {
		t.Errorf("put's DiskPath holds %q", data)
	}
	sum := sha256.Sum256([]byte("compiled"))
	if g := res[2]; g.Miss || g.Size != 8 || !bytes.Equal(g.OutputID, sum[:]) || g.DiskPath != res[1].DiskPath || g.Time == nil {
		t.Errorf("get after put: %+v", g)
	}
	// cmd/go's own format: a plain GOCACHE reads it.
	idx, _ := os.ReadFile(fileName(w, a, "a"))
	if want := fmt.Sprintf("v1 %x %x %20d ", a, sum, 8); !strings.HasPrefix(string(idx), want) || len(idx) != entrySize {
		t.Errorf("index line %q", idx)
	}
}

func TestEmptyBodyAndBadPut(t *testing.T) {
	p := &Prog{Write: t.TempDir()}
	a := id("empty")
	lines := putReq(1, a, "")
	bad, _ := json.Marshal(request{ID: 2, Command: "put", ActionID: id("x"), OutputID: id("not the body"), BodySize: 3})
	lines = append(lines, string(bad), `"YWJj"`, getReq(3, id("x")), getReq(4, a), `{"ID":5,"Command":"frob"}`)
	res := converse(t, p, lines...)
	if res[0].Err != "" || res[0].DiskPath == "" {
		t.Errorf("empty put: %+v", res[0])
	}
	if !strings.Contains(res[1].Err, "not the body's SHA-256") {
		t.Errorf("a put whose OutputID is not its body's hash: %+v", res[1])
	}
	if !res[2].Miss {
		t.Errorf("the refused put is served: %+v", res[2])
	}
	if res[3].Miss || res[3].Size != 0 {
		t.Errorf("empty body get: %+v", res[3])
	}
	if res[4].Err == "" {
		t.Errorf("unknown command answered %+v", res[4])
	}
}

// TestLayers: gets look in the write layer first, then the read layers in
// order; a body whose size is not the index's is a miss; puts never touch
// a read layer; hits in read layers are noted in the used file.
func TestLayers(t *testing.T) {
	r0, r1, w := t.TempDir(), t.TempDir(), t.TempDir()
	used := filepath.Join(t.TempDir(), "used.txt")
	a, b, c := id("a"), id("b"), id("c")
	mustPut(t, r0, a, "trusted a")
	mustPut(t, r1, a, "operator a")
	mustPut(t, r1, b, "operator b")
	mustPut(t, r1, c, "operator c")
	// A body cut short after its index was written.
	sum := sha256.Sum256([]byte("operator c"))
	os.WriteFile(fileName(r1, sum[:], "d"), []byte("short"), 0o644)
	before := tree(t, r0) + tree(t, r1)

	p := &Prog{Read: []string{r0, r1}, Write: w, Used: used}
	lines := []string{getReq(1, a), getReq(2, b), getReq(3, c), getReq(4, a)}
	lines = append(lines, putReq(5, b, "private b")...)
	lines = append(lines, getReq(6, b))
	res := converse(t, p, lines...)
	if !strings.HasPrefix(res[0].DiskPath, r0) || !strings.HasPrefix(res[1].DiskPath, r1) {
		t.Errorf("read layers out of order: %s, %s", res[0].DiskPath, res[1].DiskPath)
	}
	if !res[2].Miss {
		t.Errorf("an entry whose body has the wrong size is served: %+v", res[2])
	}
	if !strings.HasPrefix(res[4].DiskPath, w) || !strings.HasPrefix(res[5].DiskPath, w) {
		t.Errorf("put or get after it not in the write layer: %s, %s", res[4].DiskPath, res[5].DiskPath)
	}
	if after := tree(t, r0) + tree(t, r1); after != before {
		t.Errorf("read layers changed:\n%s\nthen\n%s", before, after)
	}
	got, _ := os.ReadFile(used)
	if want := fmt.Sprintf("0 %x\n1 %x\n", a, b); string(got) != want {
		t.Errorf("used file %q, want %q", got, want)
	}
}

func mustPut(t *testing.T, dir string, action []byte, body string) {
	t.Helper()
	sum := sha256.Sum256([]byte(body))
	if _, err := put(dir, action, sum[:], []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// tree lists dir's files with their sizes and times.
func tree(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}

func TestBadInput(t *testing.T) {
	for _, args := range [][]string{
		{}, {"--read", "rel"}, {"--write"}, {"--frob", "/x", "--write", "/y"},
	} {
		if _, err := ParseArgs(args); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseArgs(%q) = %v, want a one-line error", args, err)
		}
	}
	p := &Prog{Write: t.TempDir()}
	for _, in := range []string{"{not json\n", putReq(1, id("a"), "body")[0] + "\n\"!!!\"\n", putReq(1, id("a"), "body")[0] + "\n\"YWJj\"\n"} {
		err := p.Serve(strings.NewReader(in), &bytes.Buffer{})
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Serve(%q) = %v, want a one-line error", in, err)
		}
	}
}

// TestWithGo has a real go command build through the program twice: the
// second build is served from the first's layer, now read-only.
func TestWithGo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	self, _ := os.Executable()
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "m.go"), []byte("package m\n\nfunc F() int { return 1 }\n"), 0o644)
	first, second := t.TempDir(), t.TempDir()
	used := filepath.Join(t.TempDir(), "used")
	build := func(args string) {
		cmd := exec.Command(goBin, "build", "./...")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOCACHE="+t.TempDir(), "GOFLAGS=", "GOCACHEPROG="+self,
			"GOCACHEPROG_TEST_CHILD="+args)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	start := time.Now()
	build("--write " + first)
	build("--read " + first + " --write " + second + " --used " + used)
	data, _ := os.ReadFile(used)
	if n := strings.Count(string(data), "\n"); n < 2 {
		t.Errorf("the second build took %d entries from the first's layer", n)
	}
	t.Logf("two builds in %v; second served %d entries from the read layer", time.Since(start), strings.Count(string(data), "\n"))
}
