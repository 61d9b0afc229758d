// Package gocache is the Go build cache a check reads and writes through
// GOCACHEPROG: read-only layers (the trusted layer, which only the
// lander's own builds of landed trees fill, then optionally the operator's
// GOCACHE) and one private write layer per check or trusted build. Every
// layer is a folder in cmd/go's own on-disk format (<aa>/<action>-a index
// lines, <oo>/<output>-d bodies), so a trusted build can use one as a
// plain GOCACHE and tools can look inside. It also promotes a trusted
// build's layer into the trusted one and trims what no build used lately.
package gocache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// hashSize is cmd/go's action and output id size (SHA-256).
const hashSize = 32

// entrySize is one index line: "v1 <action> <output> <size> <time>\n".
const entrySize = 2 + 1 + 2*hashSize + 1 + 2*hashSize + 1 + 20 + 1 + 20 + 1

// entry is one index line of a layer.
type entry struct {
	output []byte
	size   int64
	time   time.Time
}

// fileName is where id's file of kind ("a" index, "d" body) lives in dir.
func fileName(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// lookup reads action's entry in dir and checks its body: a regular file
// of the size the index says. ok false is a miss, whatever the reason.
func lookup(dir string, action []byte) (e entry, body string, ok bool) {
	f, err := os.Open(fileName(dir, action, "a"))
	if err != nil {
		return entry{}, "", false
	}
	buf := make([]byte, entrySize+1)
	n, _ := io.ReadFull(f, buf)
	f.Close()
	e, ok = parseEntry(buf[:n], action)
	if !ok {
		return entry{}, "", false
	}
	body = fileName(dir, e.output, "d")
	// A cached executable is a folder in cmd/go's format: not served.
	fi, err := os.Lstat(body)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != e.size {
		return entry{}, "", false
	}
	return e, body, true
}

// parseEntry reads an index line for action.
func parseEntry(b []byte, action []byte) (entry, bool) {
	if len(b) != entrySize || string(b[:3]) != "v1 " || b[entrySize-1] != '\n' {
		return entry{}, false
	}
	f := bytes.Fields(b)
	if len(f) != 5 {
		return entry{}, false
	}
	id, err1 := hex.DecodeString(string(f[1]))
	out, err2 := hex.DecodeString(string(f[2]))
	size, err3 := strconv.ParseInt(string(f[3]), 10, 64)
	ns, err4 := strconv.ParseInt(string(f[4]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || !bytes.Equal(id, action) || len(out) != hashSize || size < 0 || ns < 0 {
		return entry{}, false
	}
	return entry{output: out, size: size, time: time.Unix(0, ns)}, true
}

// formatEntry is cmd/go's index line.
func formatEntry(action, output []byte, size int64, t time.Time) []byte {
	return fmt.Appendf(nil, "v1 %x %x %20d %20d\n", action, output, size, t.UnixNano())
}

// put stores body under action in dir: the body first, then its index
// line, each through a temp file and a rename, so a reader never sees half
// of either. It returns the body's path.
func put(dir string, action, output, body []byte) (string, error) {
	if len(action) != hashSize || len(output) != hashSize {
		return "", errors.New("put: ActionID and OutputID must be 32 bytes")
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], output) {
		return "", fmt.Errorf("put: OutputID %x is not the body's SHA-256", output)
	}
	path := fileName(dir, output, "d")
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(body)) {
		if err := writeAtomic(path, body); err != nil {
			return "", err
		}
	}
	if err := writeAtomic(fileName(dir, action, "a"), formatEntry(action, output, int64(len(body)), time.Now())); err != nil {
		return "", err
	}
	return path, nil
}

// writeAtomic writes data to path through a temp file beside it.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
