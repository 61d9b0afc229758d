package registry

import (
	"strings"
	"testing"
)

// An endpoint's provider: is the name fleetwatch.yaml's limits: caps
// across endpoints; a bad one is one line naming its line.
func TestProvider(t *testing.T) {
	r, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: claude\n    tier: reasoner\n    provider: anthropic\n  - name: local\n    tier: mid\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Endpoints[0].Provider != "anthropic" || r.Endpoints[1].Provider != "" {
		t.Errorf("providers %q, %q", r.Endpoints[0].Provider, r.Endpoints[1].Provider)
	}
	for _, c := range []struct{ text, want string }{
		{"endpoints:\n  - name: a\n    tier: mid\n    provider: two words\n", `endpoints.yaml:4: endpoint "a" provider must be one word of at most 64 characters, like anthropic, not "two words"`},
		{"endpoints:\n  - name: a\n    tier: mid\n    provider: [x]\n", `endpoints.yaml:4: endpoint "a" provider must be a string`},
		{"endpoints:\n  - name: a\n    tier: mid\n    provider: " + strings.Repeat("p", 65) + "\n", `endpoints.yaml:4: endpoint "a" provider must be one word`},
	} {
		_, err := Parse("endpoints.yaml", []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
