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

	gossh "golang.org/x/crypto/ssh"

	"fleetwatch/internal/safepath"
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
// project, written and read without following a symlink.
func hostKey(project, path string) ([]byte, error) {
	if path == "" {
		return defaultKey(project)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		var pemData []byte
		if pemData, err = newHostKeyPEM(); err != nil {
			return nil, fmt.Errorf("--host-key %s: %v", path, err)
		}
		// O_EXCL: a key another server wrote meanwhile is kept.
		var f *os.File
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			_, err = f.Write(pemData)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("--host-key %s: %v", path, unwrapPath(err))
		}
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--host-key %s: %v", path, unwrapPath(err))
	}
	return checkKey(path, data)
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
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", shown, err)
	}
	return checkKey(shown, data)
}

// checkKey makes sure data is a private key ssh can serve with.
func checkKey(path string, data []byte) ([]byte, error) {
	if _, err := gossh.ParsePrivateKey(data); err != nil {
		return nil, fmt.Errorf("%s: not an OpenSSH private key (%v)", path, err)
	}
	return data, nil
}
