package gocache

import (
	"bufio"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// UsedFile is the name of a staging layer's record of the read-layer
// entries its build used (Prog.Used).
const UsedFile = "used.txt"

// lockFile in the trusted layer serializes promotions and trims.
const lockFile = "promote.lock"

// trimStamp in the trusted layer is when it was last trimmed.
const trimStamp = "fleetwatch-trim.txt"

// lock takes dir's promotion lock, waiting for it.
func lock(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// Promote moves the entries of the staging layer (a trusted build's) into
// trusted, bodies before their index lines, keeping what trusted already
// holds; marks the entries of trusted the build used (read layer 0) as
// used now; and removes staging. A missing staging is nothing to do, so a
// promotion repeated after a crash is harmless.
func Promote(staging, trusted string) error {
	if _, err := os.Lstat(staging); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := lock(trusted)
	if err != nil {
		return err
	}
	defer unlock()
	var index []string
	err = filepath.WalkDir(staging, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		switch {
		case strings.HasSuffix(p, "-d"):
			return moveIn(p, staging, trusted)
		case strings.HasSuffix(p, "-a"):
			index = append(index, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range index {
		if err := moveIn(p, staging, trusted); err != nil {
			return err
		}
	}
	touchUsed(filepath.Join(staging, UsedFile), trusted, time.Now())
	return os.RemoveAll(staging)
}

// moveIn moves the file p of staging to the same place in trusted unless
// trusted has it already.
func moveIn(p, staging, trusted string) error {
	rel, err := filepath.Rel(staging, p)
	if err != nil {
		return err
	}
	dst := filepath.Join(trusted, rel)
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(p, dst)
}

// Touch marks as used now the trusted entries a go command was served
// from read layer 0 (trusted), as its used file lists them: a check's
// hits keep them from the trim as a trusted build's do. Only times change.
func Touch(usedPath, trusted string) { touchUsed(usedPath, trusted, time.Now()) }

// maxUsed bounds how much of a used file is read.
const maxUsed = 64 << 20

// OpenUsed opens a used file, which a check may have replaced: never
// through a symlink, never blocking on a FIFO, only a regular file.
func OpenUsed(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New(path + ": not a regular file")
	}
	return f, nil
}

// touchUsed marks as used now the trusted entries listed in the used file
// (those served from read layer 0), index and body.
func touchUsed(usedPath, trusted string, now time.Time) {
	f, err := OpenUsed(usedPath)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxUsed))
	for sc.Scan() {
		n, id, ok := strings.Cut(sc.Text(), " ")
		action, err := hex.DecodeString(id)
		if !ok || n != "0" || err != nil || len(action) != hashSize {
			continue
		}
		if _, body, ok := lookup(trusted, action); ok {
			_ = os.Chtimes(fileName(trusted, action, "a"), now, now)
			_ = os.Chtimes(body, now, now)
		}
	}
}

// Trim removes the trusted entries no build used for maxAge, at most once
// per day (the stamp file says when it last ran); it reports whether it ran.
func Trim(trusted string, maxAge time.Duration, now time.Time) (bool, error) {
	unlock, err := lock(trusted)
	if err != nil {
		return false, err
	}
	defer unlock()
	stamp := filepath.Join(trusted, trimStamp)
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < 24*time.Hour {
		return false, nil
	}
	entries, err := os.ReadDir(trusted)
	if err != nil {
		return false, err
	}
	for _, d := range entries {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		sub := filepath.Join(trusted, d.Name())
		files, _ := os.ReadDir(sub)
		for _, f := range files {
			if fi, err := f.Info(); err == nil && now.Sub(fi.ModTime()) > maxAge {
				os.RemoveAll(filepath.Join(sub, f.Name()))
			}
		}
	}
	if err := writeAtomic(stamp, []byte(now.UTC().Format(time.RFC3339)+"\n")); err != nil {
		return true, err
	}
	return true, os.Chtimes(stamp, now, now)
}
