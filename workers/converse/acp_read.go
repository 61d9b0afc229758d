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
	"os"
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
// ends the conversation with that reason. After the last line it sends
// the sentinel notification, which the SDK handles after every update
// before it (finish waits for it).
//
// The SDK queues notifications (up to 1024, then it drops the
// connection) while its handler waits for the driver to take an event.
// So every acpMarkEvery lines the pump sends a mark, a notification the
// SDK handles in order with the updates, and it reads no further while
// more than acpMarksAhead marks are unhandled: a slow driver makes the
// agent wait on its writes instead of breaking the conversation.
func (c *acpConv) pump(out io.Reader, pw *io.PipeWriter) {
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := readLine(br, acpMaxLine)
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if !json.Valid(t) {
				c.fail("the agent wrote a line that is not JSON: " + oneLine(fmt.Sprintf("%q", clip(t, 120)), 200))
				break
			}
			if werr := c.forward(pw, t); werr != nil {
				break
			}
		}
		if err != nil {
			// The driver's Wait closes the pipe once the agent exits.
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				c.fail(oneLine(err.Error(), 200))
			}
			break
		}
	}
	_, _ = fmt.Fprintf(pw, `{"jsonrpc":"2.0","method":%q}`+"\n", c.eof)
	_ = pw.Close()
}

const (
	acpMarkEvery  = 64
	acpMarksAhead = 4
)

// forward writes line to the SDK, and a mark every acpMarkEvery lines,
// after waiting while the SDK is too far behind.
func (c *acpConv) forward(pw *io.PipeWriter, line []byte) error {
	if _, err := pw.Write(append(line, '\n')); err != nil {
		return err
	}
	if c.lines++; c.lines%acpMarkEvery != 0 {
		return nil
	}
	sent := c.lines / acpMarkEvery
	if _, err := fmt.Fprintf(pw, `{"jsonrpc":"2.0","method":%q,"params":{"n":%d}}`+"\n", c.mark, sent); err != nil {
		return err
	}
	for sent-c.marks.Load() > acpMarksAhead {
		select {
		case <-c.progress:
		case <-c.quit:
			return nil
		case <-c.conn.Done():
			return nil
		}
	}
	return nil
}

// markHandled notes the SDK has handled the mark in params.
func (c *acpConv) markHandled(params json.RawMessage) {
	var m struct{ N int64 }
	if json.Unmarshal(params, &m) == nil && m.N > c.marks.Load() {
		c.marks.Store(m.N)
		select {
		case c.progress <- struct{}{}:
		default:
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
	c.drain()
	// The pump may still be writing a line the SDK no longer reads.
	_ = pr.Close()
	c.mu.Lock()
	c.ended = true
	closed, why := c.closed, c.failure
	c.mu.Unlock()
	c.running.Wait()
	c.mu.Lock()
	msg := c.flushLocked()
	c.mu.Unlock()
	if msg != nil {
		c.emit(*msg)
	}
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

// drain waits, once the connection has ended, for the updates read
// before its end to be handled (the sentinel), for at most acpDrain.
func (c *acpConv) drain() {
	select {
	case <-c.conn.Done():
	default:
		return
	}
	select {
	case <-c.drained:
	case <-c.quit:
	case <-time.After(acpDrain):
	}
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
