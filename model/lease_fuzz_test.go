package model

import "testing"

func FuzzDecodeLease(f *testing.F) {
	f.Add([]byte(`{"plan":"features/foo.md","agent_id":"agent-a","claimed_at":1,"expires_at":2}`))
	f.Add(EncodeLease(Lease{Plan: "in-progress/x.md", AgentID: "w", ClaimedAt: 1.5, ExpiresAt: 2.5, Origin: "bugs/x.md", Host: "h", PID: 7, Token: "t"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeLease(data)
		if err != nil {
			if l != (Lease{}) {
				t.Errorf("error %v with non-zero lease %+v", err, l)
			}
			return
		}
		if l.AgentID == "" {
			t.Errorf("decoded lease without agent_id: %+v", l)
		}
		enc := EncodeLease(l)
		back, err := DecodeLease(enc)
		if err != nil {
			t.Fatalf("re-encoded lease does not decode: %v\n%s", err, enc)
		}
		if back != l {
			t.Errorf("round trip changed the lease:\n got %+v\nwant %+v", back, l)
		}
		if again := EncodeLease(back); string(again) != string(enc) {
			t.Errorf("encoding is not stable:\n%s\n%s", enc, again)
		}
	})
}
