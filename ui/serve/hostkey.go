package serve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
)

// defaultHostKey is where the host key is made once, below the project.
const defaultHostKey = "var/fleet/serve/host_ed25519"

// newHostKeyPEM is a fresh ed25519 key in OpenSSH's private-key format.
func newHostKeyPEM() ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := gossh.MarshalPrivateKey(priv, "fleetwatch serve host key")
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(block), nil
}

// hostKey returns the host key's PEM, making it first when it does not
// exist: at path when given, else at var/fleet/serve/host_ed25519 below
// project, written 0600 and read without following a symlink. The key
// must be a regular file of the server's user that group and others can
// neither read nor write.
func hostKey(project, path string) ([]byte, error) {
	if path == "" {
		return defaultKey(project)
	}
	shown := "--host-key " + path
	// O_NONBLOCK: a FIFO put there must not hang the start.
	const flags = os.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_CLOEXEC
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, os.ErrNotExist) {
		var pemData []byte
		if pemData, err = newHostKeyPEM(); err != nil {
			return nil, fmt.Errorf("%s: %v", shown, err)
		}
		// O_EXCL: a key another server wrote meanwhile is kept.
		var w *os.File
		if w, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600); err == nil {
			_, err = w.Write(pemData)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s: %v", shown, unwrapPath(err))
		}
		f, err = os.OpenFile(path, flags, 0)
	}
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s: a symbolic link; give the key file's own path", shown)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", shown, unwrapPath(err))
	}
	defer f.Close()
	return readKey(f, shown, path)
}

func defaultKey(project string) ([]byte, error) {
	shown := filepath.Join(project, defaultHostKey)
	pemData, err := newHostKeyPEM()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", shown, err)
	}
	if _, err := safepath.WriteNew(project, defaultHostKey, pemData, 0o600); err != nil {
		return nil, err
	}
	f, err := safepath.OpenFile(project, defaultHostKey, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readKey(f, shown, shown)
}

// maxHostKey bounds what is read of a host key file; an ed25519 key in
// OpenSSH's format is about 400 bytes, a 16384-bit RSA key under 13 KB.
const maxHostKey = 64 << 10

// readKey checks the open file (a regular file, the server's user's, mode
// at most 0600) and reads it as a private key ssh can serve with.
func readKey(f *os.File, shown, path string) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", shown, unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v)", shown, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s: owned by uid %d, not by the server's user (uid %d)", shown, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %04o lets group or others at the private key; run chmod 600 %s", shown, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHostKey+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", shown, err)
	}
	if len(data) > maxHostKey {
		return nil, fmt.Errorf("%s: over %d KB, not a host key", shown, maxHostKey>>10)
	}
	if _, err := gossh.ParsePrivateKey(data); err != nil {
		return nil, fmt.Errorf("%s: not an OpenSSH private key (%v)", shown, err)
	}
	return data, nil
}
