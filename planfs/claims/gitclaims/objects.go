package gitclaims

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// objectStore writes loose objects the way git does (zlib of "type size\0"
// and the content, named by its SHA-1, linked into place so a racing
// writer of the same object never sees half of it). A claim writes three
// small objects; three git processes for them were most of its CPU.
type objectStore struct {
	dir  string   // the repository's objects folder
	made sync.Map // fan-out folders known to exist
}

// deflaters are zlib writers to reuse: a new one allocates and clears
// its tables, which was much of a claim's own CPU.
var deflaters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// openObjects finds the checkout's object store; a repository that is not
// SHA-1 gets the git program instead.
func (r runner) openObjects(ctx context.Context) (*objectStore, error) {
	format, _ := r.line(ctx, "rev-parse", "--show-object-format")
	if format != "" && format != "sha1" {
		return nil, nil
	}
	dir, err := r.line(ctx, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	if err != nil {
		return nil, err
	}
	return &objectStore{dir: dir}, nil
}

func (s *objectStore) write(typ string, data []byte) (string, error) {
	head := typ + " " + strconv.Itoa(len(data)) + "\x00"
	h := sha1.New()
	h.Write([]byte(head))
	h.Write(data)
	oid := hex.EncodeToString(h.Sum(nil))
	dst := filepath.Join(s.dir, oid[:2], oid[2:])
	if _, err := os.Stat(dst); err == nil {
		return oid, nil
	}
	var z bytes.Buffer
	w := deflaters.Get().(*zlib.Writer)
	w.Reset(&z)
	w.Write([]byte(head))
	w.Write(data)
	w.Close()
	deflaters.Put(w)
	if _, ok := s.made.Load(oid[:2]); !ok {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		s.made.Store(oid[:2], true)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "tmp_obj_")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(z.Bytes()); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	os.Chmod(tmp.Name(), 0o444)
	if err := os.Link(tmp.Name(), dst); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cannot store object %s: %v", oid, err)
	}
	return oid, nil
}

// writeObject stores data as an object of typ: in Go where the store is
// known, else through git hash-object.
func (l *Lanes) writeObject(ctx context.Context, typ string, data []byte) (string, error) {
	if l.objects != nil {
		return l.objects.write(typ, data)
	}
	out, err := l.git.run(ctx, data, nil, "hash-object", "-w", "--stdin", "-t", typ)
	return strings.TrimSpace(string(out)), err
}
