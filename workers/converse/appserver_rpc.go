package converse

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Codex's app-server speaks JSON-RPC 2.0 without the "jsonrpc" member,
// one message a line. No Go SDK exists, so this is a small client: every
// read is bounded (asMaxLine), every request waits at most its timeout,
// and every write at most asWriteTimeout, so a hostile or hung agent
// fails the conversation instead of blocking the driver.

// asMaxLine bounds one message from the agent: a longer line fails the
// conversation (Codex's largest, a turn/completed with the turn's items,
// stays far below it).
const asMaxLine = 4 << 20

// Timeouts, variables so that tests can shorten them.
var (
	asHandshakeTimeout = HandshakeTimeout
	asRequestTimeout   = 30 * time.Second // a request's answer (turn/start, steer and interrupt answer at once)
	asWriteTimeout     = 10 * time.Second // a line onto the agent's stdin (the pipe is full: it does not read)
)

// asMsg is any JSON-RPC message: a request (ID and Method), a
// notification (Method alone) or a response (ID with Result or Error).
type asMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *asRPCError     `json:"error,omitempty"`
}

// asRPCError is a JSON-RPC error: the agent refused a request.
type asRPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *asRPCError) Error() string {
	return fmt.Sprintf("the agent refused it (%d): %s", e.Code, asClip(e.Message, 300))
}

// asRPC is the client side of the lines: requests out with their
// answers matched by id, replies to the agent's own requests.
type asRPC struct {
	in  io.WriteCloser
	wmu sync.Mutex // one line at a time on stdin

	mu      sync.Mutex
	next    int64
	pending map[string]chan asMsg // by id, as the agent echoes it
	dead    chan struct{}         // closed by end
	why     error                 // why it ended, set before dead closes
}

func newASRPC(in io.WriteCloser) *asRPC {
	return &asRPC{in: in, pending: map[string]chan asMsg{}, dead: make(chan struct{})}
}

// end ends the client once, with why: every waiting request returns it.
func (r *asRPC) end(why error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.dead:
		return
	default:
	}
	r.why = why
	close(r.dead)
}

// err is why the client ended, nil while it runs.
func (r *asRPC) err() error {
	select {
	case <-r.dead:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.why
	default:
		return nil
	}
}

// write puts v on the agent's stdin as one line, waiting at most
// asWriteTimeout: an agent that stops reading fails the conversation.
func (r *asRPC) write(v any) error {
	if err := r.err(); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		r.wmu.Lock()
		defer r.wmu.Unlock()
		_, err := r.in.Write(append(b, '\n'))
		done <- err
	}()
	t := time.NewTimer(asWriteTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			err = fmt.Errorf("writing to the agent: %v", err)
			r.end(err)
		}
		return err
	case <-t.C:
		err := fmt.Errorf("the agent has not read its stdin for %v", asWriteTimeout)
		r.end(err)
		return err
	case <-r.dead:
		select {
		case err := <-done: // written just before the end
			return err
		default:
			return r.err()
		}
	}
}

// call sends a request and waits for its answer, at most timeout.
func (r *asRPC) call(method string, params any, timeout time.Duration) (json.RawMessage, error) {
	r.mu.Lock()
	r.next++
	id := strconv.FormatInt(r.next, 10)
	ch := make(chan asMsg, 1)
	r.pending[id] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, id)
		r.mu.Unlock()
	}()
	req := struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params any             `json:"params,omitempty"`
	}{json.RawMessage(id), method, params}
	werr := r.write(req)
	if werr != nil && r.err() == nil {
		return nil, werr // not sent, and the lines go on
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var m asMsg
	select {
	case m = <-ch:
	case <-t.C:
		return nil, fmt.Errorf("%s: no answer from the agent in %v", method, timeout)
	case <-r.dead:
		select {
		case m = <-ch: // answered just before the end: the answer stands
		default:
			return nil, cmp.Or(werr, r.err())
		}
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, m.Error)
	}
	return m.Result, nil
}

// notify sends a notification.
func (r *asRPC) notify(method string) error {
	return r.write(struct {
		Method string `json:"method"`
	}{method})
}

// reply answers the agent's request id with result.
func (r *asRPC) reply(id json.RawMessage, result any) error {
	return r.write(struct {
		ID     json.RawMessage `json:"id"`
		Result any             `json:"result"`
	}{id, result})
}

// refuse answers the agent's request id with an error.
func (r *asRPC) refuse(id json.RawMessage, code int, msg string) error {
	return r.write(struct {
		ID    json.RawMessage `json:"id"`
		Error asRPCError      `json:"error"`
	}{id, asRPCError{code, msg}})
}

// answered hands a response to the request waiting for it; false when
// none waits (a late answer, or an id this client never sent).
func (r *asRPC) answered(m asMsg) bool {
	r.mu.Lock()
	ch, ok := r.pending[string(bytes.TrimSpace(m.ID))]
	r.mu.Unlock()
	if ok {
		ch <- m // buffered, and each id is answered once: pending is cleared on the first
		r.mu.Lock()
		delete(r.pending, string(bytes.TrimSpace(m.ID)))
		r.mu.Unlock()
	}
	return ok
}

// errASLong is a line over asMaxLine.
var errASLong = fmt.Errorf("the agent wrote a line of more than %d MiB", asMaxLine>>20)

// asReadLine reads one line of at most asMaxLine bytes (without its
// newline); io.EOF at the end of the output.
func asReadLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > asMaxLine+1 {
			return nil, errASLong
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(line) > 0 && errors.Is(err, io.EOF) {
			return bytes.TrimRight(line, "\r\n"), nil // a last line without its newline
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// asClip is s cut to at most n bytes, on a rune boundary, marked when cut.
func asClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
