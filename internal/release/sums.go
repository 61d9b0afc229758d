package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sumsName is the checksums file, in sha256sum's format, so
// `sha256sum -c SHA256SUMS` checks a download.
const sumsName = "SHA256SUMS"

// writeSums writes SHA256SUMS into out for paths (files in out), sorted by
// name, and returns its path.
func writeSums(out string, paths []string) (string, error) {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := sha256File(filepath.Join(out, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%x  %s\n", sum, n)
	}
	p := filepath.Join(out, sumsName)
	return p, os.WriteFile(p, []byte(b.String()), 0o644)
}

func sha256File(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	return h.Sum(nil), nil
}
