package converse

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// acpMaxLine bounds one line of the agent's stdout: a longer one ends the
// conversation (the SDK would hold up to 10 MiB of it).
const acpMaxLine = 4 << 20

// acpDrain bounds the wait, once the agent's stdout has ended, for the
// updates read before its end to reach Events.
const acpDrain = 5 * time.Second

var errLineTooLong = fmt.Errorf("the agent wrote a line over %d MiB", acpMaxLine>>20)

// pump reads the agent's stdout line by line, bounded, and hands each
// JSON line to the SDK through pw: a line that is too long or not JSON
// ends the conversation with that reason. While the driver lags (Events
// half full) it stops reading, so the agent waits on its own writes.
// After the last line it sends the sentinel notification, which the SDK
// handles after every update before it (finish waits for it).
func (c *acpConv) pump(out io.Reader, pw *io.PipeWriter) {
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := readLine(br, acpMaxLine)
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if !json.Valid(t) {
				c.fail("the agent wrote a line that is not JSON: " + oneLine(fmt.Sprintf("%q", clip(t, 120)), 200))
				break
			}
			c.wait()
			if _, werr := pw.Write(append(t, '\n')); werr != nil {
				break
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.fail(oneLine(err.Error(), 200))
			}
			break
		}
	}
	_, _ = fmt.Fprintf(pw, `{"jsonrpc":"2.0","method":%q}`+"\n", c.eof)
	_ = pw.Close()
}

// wait holds the pump while Events is half full, until Close.
func (c *acpConv) wait() {
	for len(c.events) >= cap(c.events)/2 {
		select {
		case <-c.quit:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// readLine reads up to '\n', refusing a line over max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// fail records why the conversation broke (the first reason stands).
func (c *acpConv) fail(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failure == "" {
		c.failure = why
	}
}

// why is the recorded failure, "" when none.
func (c *acpConv) why() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failure
}

// finish waits for the connection to end (the agent's stdout ended, or
// the pump gave up on it), lets the updates read before the end reach
// Events, ends what was waiting on the agent, says why the conversation
// broke when it was not closed by Close, and closes Events.
func (c *acpConv) finish(pr *io.PipeReader) {
	<-c.conn.Done()
	select {
	case <-c.drained:
	case <-c.quit:
	case <-time.After(acpDrain):
	}
	// The pump may still be writing a line the SDK no longer reads.
	_ = pr.Close()
	c.mu.Lock()
	c.ended = true
	closed, why := c.closed, c.failure
	c.mu.Unlock()
	c.running.Wait()
	if why == "" && !closed {
		why = "the agent's output ended"
	}
	if why != "" && !closed {
		c.emit(Event{Kind: Failed, Text: why})
	}
	if why != "" {
		c.logf("acp: %s", why)
	}
	c.emitMu.Lock()
	c.evClosed = true
	close(c.events)
	c.emitMu.Unlock()
}

// nonce is 16 random hex digits.
func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clip is at most n bytes of b.
func clip(b []byte, n int) []byte { return b[:min(len(b), n)] }

// oneLine is s on one line, at most n bytes, cut on a rune boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// logfWriter turns the SDK's log lines into Logf calls.
type logfWriter struct{ logf func(string, ...any) }

func (w logfWriter) Write(b []byte) (int, error) {
	if w.logf != nil {
		w.logf("acp: %s", oneLine(string(b), 500))
	}
	return len(b), nil
}
