package meter

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkProxyRequest is what the proxy adds to one JSON request:
// the same request timed directly and through it (target ≤ 1 ms).
func BenchmarkProxyRequest(b *testing.B) {
	up := newModelServer(b)
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	direct := timeEach(b, up.URL+"/v1/chat/completions", false)
	proxied := timeEach(b, p.URL()+"/chat/completions", false)
	b.ReportMetric(float64(proxied-direct)/float64(b.N)/1e6, "extra-ms/req")
}

// BenchmarkProxyFirstByte is what the proxy adds before a stream's first
// byte reaches the agent (target ≤ 2 ms).
func BenchmarkProxyFirstByte(b *testing.B) {
	up := newModelServer(b)
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	direct := timeEach(b, up.URL+"/v1/messages", true)
	proxied := timeEach(b, p.URL()+"/messages", true)
	b.ReportMetric(float64(proxied-direct)/float64(b.N)/1e6, "extra-ms/first-byte")
}

// timeEach times b.N requests to url: to the whole body, or for a stream
// to its first line.
func timeEach(b *testing.B, url string, firstByte bool) time.Duration {
	body := `{}`
	if firstByte {
		body = `{"stream":true}`
	}
	var total time.Duration
	for range b.N {
		start := time.Now()
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if firstByte {
			bufio.NewReader(resp.Body).ReadString('\n')
			total += time.Since(start)
			io.Copy(io.Discard, resp.Body)
		} else {
			io.Copy(io.Discard, resp.Body)
			total += time.Since(start)
		}
		resp.Body.Close()
	}
	return total
}
