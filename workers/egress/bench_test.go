package egress

import "testing"

// What a run's start pays for its egress proxy: a listener and a server.
func BenchmarkStartClose(b *testing.B) {
	for b.Loop() {
		p, err := Start(nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}
