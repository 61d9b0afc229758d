package model

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeLease(t *testing.T) {
	tests := []struct {
		name string
		data string
		want Lease
	}{
		{
			"anchor's file, float times, with origin",
			"{\n  \"plan\": \"in-progress/foo.md\",\n  \"agent_id\": \"agent-a\",\n  \"claimed_at\": 1767225600.123456,\n  \"expires_at\": 1767312000.5,\n  \"origin\": \"features/foo.md\"\n}\n",
			Lease{Plan: "in-progress/foo.md", AgentID: "agent-a", ClaimedAt: 1767225600.123456, ExpiresAt: 1767312000.5, Origin: "features/foo.md"},
		},
		{
			"TESTS 68: int times, no origin",
			`{"plan":"features/foo.md","agent_id":"agent-a","claimed_at":1,"expires_at":2}`,
			Lease{Plan: "features/foo.md", AgentID: "agent-a", ClaimedAt: 1, ExpiresAt: 2},
		},
		{
			"exponent",
			`{"agent_id":"a","expires_at":1.8e9}`,
			Lease{AgentID: "a", ExpiresAt: 1.8e9},
		},
		{
			"extra keys, ours and unknown",
			`{"plan":"features/x.md","agent_id":"w","claimed_at":10,"expires_at":20,"host":"box","pid":4242,"token":"t0k","future":{"a":[1,2]},"note":null}`,
			Lease{Plan: "features/x.md", AgentID: "w", ClaimedAt: 10, ExpiresAt: 20, Host: "box", PID: 4242, Token: "t0k"},
		},
		{
			"no claimed_at",
			`{"agent_id":"w","expires_at":20}`,
			Lease{AgentID: "w", ExpiresAt: 20},
		},
		{
			"whitespace around",
			" \n\t{\"agent_id\":\"w\",\"expires_at\":20}\n\n",
			Lease{AgentID: "w", ExpiresAt: 20},
		},
	}
	for _, tt := range tests {
		got, err := DecodeLease([]byte(tt.data))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestDecodeLeaseRejects(t *testing.T) {
	tests := []struct {
		name, data, sub string
	}{
		{"empty", "", "empty"},
		{"blank", " \n\t", "empty"},
		{"null", "null", "object"},
		{"array", `[{"agent_id":"w","expires_at":1}]`, "object"},
		{"string", `"agent_id"`, "object"},
		{"number", `42`, "object"},
		{"truncated", `{"agent_id":"w","expires_at":`, "object"},
		{"two objects", `{"agent_id":"w","expires_at":1}{}`, "object"},
		{"missing agent_id", `{"plan":"features/x.md","expires_at":1}`, "agent_id"},
		{"missing expires_at", `{"plan":"features/x.md","agent_id":"w","claimed_at":1}`, "expires_at"},
		{"empty agent_id", `{"agent_id":"","expires_at":1}`, "agent_id"},
		{"null agent_id", `{"agent_id":null,"expires_at":1}`, "agent_id"},
		{"null expires_at", `{"agent_id":"w","expires_at":null}`, "expires_at"},
		{"null expires_at, spaced", `{"agent_id":"w","expires_at" :  null }`, "expires_at"},
		{"agent_id number", `{"agent_id":7,"expires_at":1}`, "agent_id"},
		{"expires_at string", `{"agent_id":"w","expires_at":"1767312000"}`, "expires_at"},
		{"claimed_at string", `{"agent_id":"w","claimed_at":"now","expires_at":1}`, "claimed_at"},
		{"plan number", `{"plan":1,"agent_id":"w","expires_at":1}`, "plan"},
		{"origin object", `{"agent_id":"w","expires_at":1,"origin":{}}`, "origin"},
		{"huge number", `{"agent_id":"w","expires_at":1e999}`, "expires_at"},
	}
	for _, tt := range tests {
		l, err := DecodeLease([]byte(tt.data))
		if err == nil {
			t.Errorf("%s: accepted as %+v", tt.name, l)
			continue
		}
		if !strings.Contains(err.Error(), tt.sub) {
			t.Errorf("%s: error %q lacks %q", tt.name, err, tt.sub)
		}
		if l != (Lease{}) {
			t.Errorf("%s: non-zero lease with error: %+v", tt.name, l)
		}
	}
}

func TestEncodeLease(t *testing.T) {
	l := Lease{Plan: "in-progress/foo.md", AgentID: "agent-a", ClaimedAt: 1767225600.25, ExpiresAt: 1767229200.25, Origin: "features/foo.md",
		File: "in-progress__foo.md.json", Rel: "in-progress/foo.md", Corrupt: "", ModTime: 5}
	got := string(EncodeLease(l))
	want := "{\n" +
		"  \"plan\": \"in-progress/foo.md\",\n" +
		"  \"agent_id\": \"agent-a\",\n" +
		"  \"claimed_at\": 1767225600.25,\n" +
		"  \"expires_at\": 1767229200.25,\n" +
		"  \"origin\": \"features/foo.md\"\n" +
		"}\n"
	if got != want {
		t.Errorf("EncodeLease:\n%s\nwant:\n%s", got, want)
	}
	// Our extra keys follow anchor's; empty ones are left out.
	got = string(EncodeLease(Lease{Plan: "features/a.md", AgentID: "w", ExpiresAt: 2, Host: "h", PID: 3, Token: "t"}))
	want = "{\n  \"plan\": \"features/a.md\",\n  \"agent_id\": \"w\",\n  \"claimed_at\": 0,\n  \"expires_at\": 2,\n  \"host\": \"h\",\n  \"pid\": 3,\n  \"token\": \"t\"\n}\n"
	if got != want {
		t.Errorf("EncodeLease with ours:\n%s\nwant:\n%s", got, want)
	}
}

func TestEncodeLeaseRoundTrip(t *testing.T) {
	for _, l := range []Lease{
		{Plan: "features/foo.md", AgentID: "agent-a", ClaimedAt: 1, ExpiresAt: 2},
		{Plan: "in-progress/a__b.local.md", AgentID: "wörker <&>", ClaimedAt: 1767225600.123456, ExpiresAt: 1767229200.654321, Origin: "bugs/a__b.local.md", Host: "h", PID: 99, Token: "x"},
		{AgentID: "w", ExpiresAt: -1.5},
		{AgentID: "w", ExpiresAt: 1e21, ClaimedAt: 1e-7},
	} {
		b := EncodeLease(l)
		if !bytes.HasSuffix(b, []byte("}\n")) || !bytes.HasPrefix(b, []byte("{\n  \"plan\": ")) {
			t.Errorf("%+v: layout %q", l, b)
		}
		if !json.Valid(b) {
			t.Errorf("%+v: invalid JSON %q", l, b)
		}
		back, err := DecodeLease(b)
		if err != nil || back != l {
			t.Errorf("round trip %+v: got %+v, %v", l, back, err)
		}
	}
}

func TestLeaseFileName(t *testing.T) {
	tests := []struct{ rel, file string }{
		{"features/foo.md", "features__foo.md.json"},                   // TESTS 68
		{"in-progress/foo.local.md", "in-progress__foo.local.md.json"}, // BEHAVIOUR §6
		{"bugs/a__b.md", "bugs__a__b.md.json"},
		{"features/__x__.md", "features____x__.md.json"},
		{"review-needed/_a.md", "review-needed___a.md.json"},
	}
	for _, tt := range tests {
		if got := LeaseFileName(tt.rel); got != tt.file {
			t.Errorf("LeaseFileName(%q) = %q, want %q", tt.rel, got, tt.file)
		}
		if got, ok := RelOfLeaseFile(tt.file); !ok || got != tt.rel {
			t.Errorf("RelOfLeaseFile(%q) = %q, %v; want %q", tt.file, got, ok, tt.rel)
		}
	}
	for _, bad := range []string{"", ".json", "foo.md.json", "__foo.md.json", "features__.json", "features__foo.md", "features__foo.md.json.tmp"} {
		if got, ok := RelOfLeaseFile(bad); ok {
			t.Errorf("RelOfLeaseFile(%q) = %q, ok", bad, got)
		}
	}
}

func TestLeaseActiveBlocks(t *testing.T) {
	tests := []struct {
		name           string
		l              Lease
		now            float64
		active, blocks bool
	}{
		{"before expiry", Lease{AgentID: "a", ExpiresAt: 100}, 99.9, true, true},
		{"at expiry", Lease{AgentID: "a", ExpiresAt: 100}, 100, false, false},
		{"after expiry", Lease{AgentID: "a", ExpiresAt: 100}, 101, false, false},
		{"corrupt, not expired", Lease{AgentID: "a", ExpiresAt: 100, Corrupt: "bad"}, 50, false, true},
		{"corrupt, zero", Lease{Corrupt: "not a JSON object"}, 1e9, false, true},
	}
	for _, tt := range tests {
		if got := tt.l.Active(tt.now); got != tt.active {
			t.Errorf("%s: Active = %v", tt.name, got)
		}
		if got := tt.l.Blocks(tt.now); got != tt.blocks {
			t.Errorf("%s: Blocks = %v", tt.name, got)
		}
	}
}
