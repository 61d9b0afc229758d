package converse

import "time"

// ShortenStreamJSON makes Start's handshake and a write to the agent wait
// at most d, until the returned func restores them.
func ShortenStreamJSON(d time.Duration) (restore func()) {
	h, w := streamJSONHandshake, streamJSONWrite
	streamJSONHandshake, streamJSONWrite = d, d
	return func() { streamJSONHandshake, streamJSONWrite = h, w }
}
