package gocache

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The GOCACHEPROG protocol (cmd/go/internal/cacheprog): the program says
// which commands it knows, then answers JSON requests read from stdin one
// per line; a put with a BodySize is followed by its body as a base64 JSON
// string.

type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// Usage is the program's command line.
const Usage = "gocacheprog --read DIR... --write DIR [--used FILE]"

// Prog serves one go command: gets from its write layer, then its read
// layers in order; puts only into the write layer.
type Prog struct {
	Read  []string
	Write string
	// Used, when set, gets a line "<n> <action>" for each action served
	// from read layer n (each once), for promotion to mark it used.
	Used     string
	used     map[string]bool
	usedFile *os.File
}

// Main is `fleetwatch gocacheprog`: it serves the go command on stdin and
// stdout and returns the exit code; errors are one line on stderr.
func Main(args []string) int {
	p, err := ParseArgs(args)
	if err == nil {
		err = p.Serve(os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleetwatch gocacheprog: %v\n", err)
		return 2
	}
	return 0
}

// ParseArgs reads the command line (without the verb).
func ParseArgs(args []string) (*Prog, error) {
	p := &Prog{}
	for i := 0; i < len(args); i++ {
		flag, val := args[i], ""
		if i+1 < len(args) {
			val = args[i+1]
		}
		if val == "" || !filepath.IsAbs(val) {
			return nil, fmt.Errorf("%s: want an absolute path after it (usage: %s)", flag, Usage)
		}
		switch flag {
		case "--read":
			p.Read = append(p.Read, val)
		case "--write":
			p.Write = val
		case "--used":
			p.Used = val
		default:
			return nil, fmt.Errorf("unknown argument %q (usage: %s)", flag, Usage)
		}
		i++
	}
	if p.Write == "" {
		return nil, fmt.Errorf("--write is required (usage: %s)", Usage)
	}
	return p, nil
}

// Serve answers requests from in on out until close or the end of in.
func (p *Prog) Serve(in io.Reader, out io.Writer) error {
	if err := os.MkdirAll(p.Write, 0o755); err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r response) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReaderSize(in, 1<<16))
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading a request: %v", err)
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("request %d: reading its body: %v", req.ID, err)
			}
			if int64(len(body)) != req.BodySize {
				return fmt.Errorf("request %d: body of %d bytes, BodySize says %d", req.ID, len(body), req.BodySize)
			}
		}
		res := p.answer(req, body)
		if err := send(res); err != nil {
			return err
		}
		if req.Command == "close" {
			return nil
		}
	}
}

// answer is the response to one request.
func (p *Prog) answer(req request, body []byte) response {
	res := response{ID: req.ID}
	switch req.Command {
	case "get":
		layers := append([]string{p.Write}, p.Read...)
		for i, dir := range layers {
			e, path, ok := lookup(dir, req.ActionID)
			if !ok {
				continue
			}
			if i > 0 {
				p.noteUsed(i-1, req.ActionID)
			}
			t := e.time
			res.OutputID, res.Size, res.Time, res.DiskPath = e.output, e.size, &t, path
			return res
		}
		res.Miss = true
	case "put":
		path, err := put(p.Write, req.ActionID, req.OutputID, body)
		if err != nil {
			res.Err = err.Error()
		}
		res.DiskPath = path
	case "close":
	default:
		res.Err = fmt.Sprintf("unknown command %q", req.Command)
	}
	return res
}

// noteUsed appends action, served from read layer n, to the used file.
func (p *Prog) noteUsed(n int, action []byte) {
	if p.Used == "" {
		return
	}
	line := fmt.Sprintf("%d %s\n", n, hex.EncodeToString(action))
	if p.used[line] {
		return
	}
	if p.used == nil {
		p.used = map[string]bool{}
		f, err := os.OpenFile(p.Used, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return // a lost note costs a trim too early, never a wrong build
		}
		p.usedFile = f
	}
	p.used[line] = true
	if p.usedFile != nil {
		_, _ = p.usedFile.WriteString(line)
	}
}
