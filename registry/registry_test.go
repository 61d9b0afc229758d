package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sample = `# scripts/endpoints.yaml
endpoints:
  - name: laptop-swarm
    tier: swarm
    base_url: http://127.0.0.1:8001/v1
    model: Qwen/Qwen3-8B
  - name: h100-executor
    tier: executor-heavy
    base_url: http://10.0.1.10:8000/v1
    model: Qwen/Qwen3-32B-FP8
`

var sampleEndpoints = []Endpoint{
	{Name: "laptop-swarm", Tier: "swarm", BaseURL: "http://127.0.0.1:8001/v1", Model: "Qwen/Qwen3-8B", Line: 3, TierLine: 4},
	{Name: "h100-executor", Tier: "executor-heavy", BaseURL: "http://10.0.1.10:8000/v1", Model: "Qwen/Qwen3-32B-FP8", Line: 7, TierLine: 8},
}

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		executor []string
		want     []Endpoint
	}{
		{name: "sample", doc: sample, want: sampleEndpoints},
		{
			name: "extra keys tolerated",
			doc: `version: 3
endpoints:
  - name: a
    tier: small
    max_tokens: 4096
    headers: {x-api-key: k}
    tags: [fast, cheap]
notes: whatever
`,
			want: []Endpoint{{Name: "a", Tier: "small", Line: 3, TierLine: 4}},
		},
		{
			name: "quoted values",
			doc: `endpoints:
  - name: "a b"
    tier: 'swarm'
    base_url: "http://h:1/v1"
    model: 'org/m:tag'
`,
			want: []Endpoint{{Name: "a b", Tier: "swarm", BaseURL: "http://h:1/v1", Model: "org/m:tag", Line: 2, TierLine: 3}},
		},
		{
			name: "inline comments",
			doc: `endpoints:   # the fleet
  - name: a     # laptop
    tier: swarm   # cheap
    model: m#not-a-comment
`,
			want: []Endpoint{{Name: "a", Tier: "swarm", Model: "m#not-a-comment", Line: 2, TierLine: 3}},
		},
		{
			name: "non-string scalars taken as text",
			doc: `endpoints:
  - name: 42
    tier: 3
    model: 1.50
`,
			want: []Endpoint{{Name: "42", Tier: "3", Model: "1.50", Line: 2, TierLine: 3}},
		},
		{
			name: "null optional fields are absent",
			doc: `endpoints:
  - name: a
    tier: mid
    base_url:
    model: ~
    command: null
`,
			want: []Endpoint{{Name: "a", Tier: "mid", Line: 2, TierLine: 3}},
		},
		{
			name: "command list",
			doc: `endpoints:
  - name: a
    tier: mid
    command:
      - run-agent
      - --model
      - "{model}"
  - name: b
    tier: mid
    command: [run-agent, 7]
`,
			want: []Endpoint{
				{Name: "a", Tier: "mid", Command: []string{"run-agent", "--model", "{model}"}, Line: 2, TierLine: 3},
				{Name: "b", Tier: "mid", Command: []string{"run-agent", "7"}, Line: 8, TierLine: 9},
			},
		},
		{
			name: "top-level executor",
			doc: `executor: [codex, exec, --full-auto]
endpoints:
  - {name: a, tier: small}
`,
			executor: []string{"codex", "exec", "--full-auto"},
			want:     []Endpoint{{Name: "a", Tier: "small", Line: 3, TierLine: 3}},
		},
		{
			name: "tier absent line is entry line, tier before name",
			doc: `endpoints:
  - tier: small
    name: a
`,
			want: []Endpoint{{Name: "a", Tier: "small", Line: 2, TierLine: 2}},
		},
		{
			name: "merge keys and aliases",
			doc: `defaults: &d
  tier: mid
  base_url: http://h/v1
cmd: &c [run, it]
endpoints:
  - <<: *d
    name: a
    command: *c
  - <<: [{model: m}, *d]
    name: b
    tier: small
`,
			want: []Endpoint{
				{Name: "a", Tier: "mid", BaseURL: "http://h/v1", Command: []string{"run", "it"}, Line: 6, TierLine: 2},
				{Name: "b", Tier: "small", BaseURL: "http://h/v1", Model: "m", Line: 9, TierLine: 11},
			},
		},
		{
			name: "only the first document is read",
			doc: `endpoints:
  - {name: a, tier: small}
---
endpoints: nonsense
`,
			want: []Endpoint{{Name: "a", Tier: "small", Line: 2, TierLine: 2}},
		},
		{
			name: "windows line endings",
			doc:  "endpoints:\r\n  - name: a\r\n    tier: small\r\n",
			want: []Endpoint{{Name: "a", Tier: "small", Line: 2, TierLine: 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := Parse("endpoints.yaml", []byte(tt.doc))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if reg.Path != "endpoints.yaml" {
				t.Errorf("Path = %q", reg.Path)
			}
			if !reflect.DeepEqual(reg.Executor, tt.executor) {
				t.Errorf("Executor = %q, want %q", reg.Executor, tt.executor)
			}
			if !reflect.DeepEqual(reg.Endpoints, tt.want) {
				t.Errorf("Endpoints =\n%+v\nwant\n%+v", reg.Endpoints, tt.want)
			}
		})
	}
}

// The file the "no executor" hint suggests, `executor:` alone, is accepted.
func TestExecutorAloneIsAWholeRegistry(t *testing.T) {
	for _, doc := range []string{"executor: [my-agent, \"{plan}\"]\n", "executor: [a]\nendpoints:\n", "executor: [a]\nendpoints: []\n"} {
		reg, err := Parse("endpoints.yaml", []byte(doc))
		if err != nil || len(reg.Executor) == 0 || len(reg.Endpoints) != 0 {
			t.Errorf("%q: %+v %v", doc, reg, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"empty file", "", "endpoints.yaml: no endpoints listed yet (uncomment one; 'fleetwatch agents' shows them)"},
		{"comments only", "# nothing yet\n", "endpoints.yaml: no endpoints listed yet (uncomment one; 'fleetwatch agents' shows them)"},
		{"null document", "~\n", "endpoints.yaml: no endpoints listed yet (uncomment one; 'fleetwatch agents' shows them)"},
		{"no endpoints key", "a: 1\n", "endpoints.yaml: no endpoints listed"},
		{"endpoints null", "a: 1\nendpoints:\n", "endpoints.yaml:2: no endpoints listed"},
		{"endpoints empty list", "endpoints: []\n", "endpoints.yaml:1: no endpoints listed"},
		{"endpoints a mapping", "endpoints:\n  name: a\n", "endpoints.yaml:1: endpoints must be a list, found a mapping"},
		{"document is a list", "- name: a\n  tier: small\n", "endpoints.yaml:1: expected a mapping with an endpoints: list, found a list"},
		{"document is a string", "hello\n", "endpoints.yaml:1: expected a mapping with an endpoints: list, found a string"},
		{"entry not a mapping", "endpoints:\n  - {name: a, tier: s}\n  - just-a-name\n", "endpoints.yaml:3: endpoint 2 must be a mapping, found a string"},
		{"entry is empty", "endpoints:\n  -\n", "endpoints.yaml:2: endpoint 1 must be a mapping, found null"},
		{"entry is a list", "endpoints:\n  - [a, b]\n", "endpoints.yaml:2: endpoint 1 must be a mapping, found a list"},
		{
			"missing name",
			"endpoints:\n  - name: a\n    tier: s\n\n\n\n  - tier: small\n    model: m\n",
			"endpoints.yaml:7: endpoint 2 has no name",
		},
		{"empty name", "endpoints:\n  - name: \"\"\n    tier: s\n", "endpoints.yaml:2: endpoint 1 has no name"},
		{"blank name", "endpoints:\n  - name: \"  \"\n    tier: s\n", "endpoints.yaml:2: endpoint 1 has no name"},
		{"null name", "endpoints:\n  - name: null\n    tier: s\n", "endpoints.yaml:2: endpoint 1 has no name"},
		{"name a list", "endpoints:\n  - tier: s\n    name: [a]\n", "endpoints.yaml:3: endpoint 1 name must be a string, found a list"},
		{"name with newline", "endpoints:\n  - tier: s\n    name: \"a\\nb\"\n", `endpoints.yaml:3: endpoint 1 name "a\nb" contains control characters`},
		{"missing tier", "endpoints:\n  - name: a\n    model: m\n", `endpoints.yaml:2: endpoint "a" has no tier`},
		{"empty tier", "endpoints:\n  - name: a\n    tier:\n", `endpoints.yaml:2: endpoint "a" has no tier`},
		{"tier a mapping", "endpoints:\n  - name: a\n    tier: {x: 1}\n", `endpoints.yaml:3: endpoint "a" tier must be a string, found a mapping`},
		{"base_url a list", "endpoints:\n  - name: a\n    tier: s\n    base_url: [x]\n", `endpoints.yaml:4: endpoint "a" base_url must be a string, found a list`},
		{"model a mapping", "endpoints:\n  - name: a\n    tier: s\n    model:\n      id: m\n", `endpoints.yaml:4: endpoint "a" model must be a string, found a mapping`},
		{
			"duplicate name",
			"endpoints:\n  - name: a\n    tier: s\n  - name: b\n    tier: s\n  - name: a\n    tier: m\n",
			`endpoints.yaml:6: duplicate endpoint "a" (first at line 2)`,
		},
		{"duplicate key", "endpoints:\n  - name: a\n    tier: s\n    tier: m\n", `endpoints.yaml:4: duplicate key "tier" (first at line 3)`},
		{"command a string", "endpoints:\n  - name: a\n    tier: s\n    command: run-agent --fast\n", `endpoints.yaml:4: endpoint "a" command must be a list of strings, found a string`},
		{"command empty", "endpoints:\n  - name: a\n    tier: s\n    command: []\n", `endpoints.yaml:4: endpoint "a" command must not be empty`},
		{
			"command item a mapping",
			"endpoints:\n  - name: a\n    tier: s\n    command:\n      - run\n      - {x: 1}\n",
			`endpoints.yaml:6: endpoint "a" command must be a list of strings, item 2 is a mapping`,
		},
		{"command item null", "endpoints:\n  - name: a\n    tier: s\n    command: [run, ~]\n", `endpoints.yaml:4: endpoint "a" command must be a list of strings, item 2 is null`},
		{"executor a string", "endpoints:\n  - {name: a, tier: s}\nexecutor: codex\n", "endpoints.yaml:3: executor must be a list of strings, found a string"},
		{"executor empty", "executor: []\nendpoints:\n  - {name: a, tier: s}\n", "endpoints.yaml:1: executor must not be empty"},
		{"executor nested list", "executor:\n  - [a]\nendpoints:\n  - {name: a, tier: s}\n", "endpoints.yaml:2: executor must be a list of strings, item 1 is a list"},
		{"merge of a string", "endpoints:\n  - name: a\n    <<: oops\n", "endpoints.yaml:3: merge (<<) value must be a mapping or a list of mappings"},
		{"tab indentation", "endpoints:\n\t- name: a\n", "endpoints.yaml:2: found character that cannot start any token"},
		{"reserved character", "endpoints:\n  - name: a\n    tier: @s\n", "endpoints.yaml:3: found character that cannot start any token"},
		// For some errors yaml.v3 gives the line where the enclosing
		// construct starts rather than the offending line; it is passed on.
		{"tab in mapping", "endpoints:\n  - name: a\n\ttier: s\n", "endpoints.yaml:2: found a tab character that violates indentation"},
		{"unclosed flow list", "endpoints:\n  - name: a\n    command: [run\n", "endpoints.yaml:2: did not find expected ',' or ']'"},
		{"unterminated quote", "endpoints:\n  - name: \"a\n", "endpoints.yaml:2: found unexpected end of stream"},
		// yaml.v3 omits the line number for some errors on the first line.
		{"garbage first line", "a: b: c\n", "endpoints.yaml: mapping values are not allowed in this context"},
		{"binary garbage", "\x00\x01\x02", "endpoints.yaml: control characters are not allowed"},
		{"unknown alias", "endpoints: *nope\n", "endpoints.yaml: unknown anchor 'nope' referenced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := Parse("endpoints.yaml", []byte(tt.doc))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", reg)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	reg, err := Load(filepath.Join("testdata", "endpoints.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(reg.Endpoints, sampleEndpoints) {
		t.Errorf("Endpoints = %+v", reg.Endpoints)
	}

	_, err = Load("/x/endpoints.yaml")
	if want := "registry /x/endpoints.yaml: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("missing file: got %v, want %s", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error %v is not fs.ErrNotExist", err)
	}

	_, err = Load(filepath.Join("testdata", "bad.yaml"))
	if want := "testdata/bad.yaml:3: endpoint 1 has no name"; err == nil || err.Error() != want {
		t.Errorf("bad file: got %v, want %s", err, want)
	}
}

func TestLookup(t *testing.T) {
	reg, err := Parse("/etc/endpoints.yaml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := reg.Lookup("h100-executor")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ep, sampleEndpoints[1]) {
		t.Errorf("Lookup = %+v", ep)
	}
	for _, name := range []string{"H100-executor", "laptop", "", "laptop-swarm "} {
		_, err := reg.Lookup(name)
		want := `unknown endpoint "` + name + `" in /etc/endpoints.yaml (known: laptop-swarm, h100-executor)`
		if err == nil || err.Error() != want {
			t.Errorf("Lookup(%q) = %v, want %s", name, err, want)
		}
	}
}

// TestMergeFanOut guards against exponential work on merge chains where
// each level merges the previous one twice.
func TestMergeFanOut(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 {tier: mid}\n")
	for i := 1; i < 64; i++ {
		fmt.Fprintf(&b, "l%d: &l%d {<<: [*l%d, *l%d]}\n", i, i, i-1, i-1)
	}
	b.WriteString("endpoints:\n  - {name: a, <<: *l63}\n")
	reg, err := Parse("endpoints.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.Endpoints[0].Tier; got != "mid" {
		t.Errorf("Tier = %q, want mid", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		sample,
		"executor: [codex, exec]\nendpoints:\n  - {name: a, tier: s, command: [x, y]}\n",
		"d: &d {tier: mid}\nendpoints:\n  - <<: *d\n    name: a\n",
		"endpoints:\n  - name: a\n\ttier: s\n",
		"- name: a\n  tier: small\n",
		"endpoints:\n  - name: a\n    tier: s\n  - name: a\n    tier: s\n",
		"endpoints: [1, [2], {3: 4}, ~]\n",
		"endpoints:\n  - name: \"a\\nb\"\n",
		"a: b: c\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := Parse("endpoints.yaml", data)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("multi-line error: %q", msg)
			}
			return
		}
		if len(reg.Endpoints) == 0 {
			t.Fatal("no error and no endpoints")
		}
		for _, ep := range reg.Endpoints {
			if strings.TrimSpace(ep.Name) == "" || strings.TrimSpace(ep.Tier) == "" {
				t.Fatalf("endpoint without name or tier: %+v", ep)
			}
			if _, err := reg.Lookup(ep.Name); err != nil {
				t.Fatal(err)
			}
		}
		_, err = reg.Lookup("no such endpoint\x00")
		if err == nil {
			t.Fatal("Lookup of an impossible name succeeded")
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("multi-line error: %q", msg)
		}
	})
}

func TestParseReviewCommand(t *testing.T) {
	reg, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: mid\n    tier: executor-mid\n    command: [agent]\n    review_command: [agent, --review, '{commit}']\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.Endpoints[0].ReviewCommand; !reflect.DeepEqual(got, []string{"agent", "--review", "{commit}"}) {
		t.Fatalf("review_command = %q", got)
	}
	_, err = Parse("endpoints.yaml", []byte("endpoints:\n  - name: mid\n    tier: executor-mid\n    review_command: []\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "endpoints.yaml:4:") || !strings.Contains(err.Error(), "review_command") {
		t.Fatalf("empty review_command: %v", err)
	}
}

func TestParsePlanFirst(t *testing.T) {
	reg, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: mid\n    tier: executor-mid\n    plan_first: true\n    plan_command: [agent, --plan]\n    on_scope_violation: stop\n"))
	if err != nil {
		t.Fatal(err)
	}
	ep := reg.Endpoints[0]
	if !ep.PlanFirst || len(ep.PlanCommand) != 2 || ep.OnScopeViolation != "stop" {
		t.Fatalf("endpoint %+v", ep)
	}
	for _, bad := range []string{"plan_first: maybe", "on_scope_violation: halt"} {
		_, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: mid\n    tier: executor-mid\n    "+bad+"\n"))
		if err == nil || !strings.HasPrefix(err.Error(), "endpoints.yaml:4:") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestParseCommit(t *testing.T) {
	for text, auto := range map[string]bool{"": false, "    commit: agent\n": false, "    commit: auto\n": true} {
		reg, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: mid\n    tier: executor-mid\n"+text))
		if err != nil || reg.Endpoints[0].AutoCommit != auto {
			t.Errorf("%q: auto %v (%v), want %v", text, reg != nil && reg.Endpoints[0].AutoCommit, err, auto)
		}
	}
	_, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: mid\n    tier: executor-mid\n    commit: always\n"))
	if err == nil || err.Error() != `endpoints.yaml:4: endpoint "mid" commit must be auto or agent, not "always"` {
		t.Errorf("commit: always: %v", err)
	}
}

func TestMaxContext(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "endpoints.yaml")
	os.WriteFile(p, []byte("endpoints:\n  - name: small\n    tier: small\n    max_context: 32k\n  - name: big\n    tier: frontier\n"), 0o644)
	reg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Endpoints[0].MaxContext != 32_000 || reg.Endpoints[1].MaxContext != 0 {
		t.Errorf("%+v", reg.Endpoints)
	}
	os.WriteFile(p, []byte("endpoints:\n  - name: small\n    tier: small\n    max_context: huge\n"), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), `endpoints.yaml:4: endpoint "small" max_context: want a token count`) {
		t.Errorf("%v", err)
	}
}
