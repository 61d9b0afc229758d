// Package browse opens a web page in the operator's browser: $BROWSER
// when set, else the system's opener (xdg-open, open). It owns the checks
// that keep a hostile address (a forge's words) from becoming anything
// but one http(s) address passed as one argument: no shell, no flag, no
// other scheme.
package browse

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"unicode"
)

// maxURL bounds the address: a forge is not trusted to be brief.
const maxURL = 2048

// Check says why raw is not an address to open: only an absolute http or
// https address with a host, no control characters or spaces, not
// starting with a dash (which a program could take for a flag).
func Check(raw string) error {
	switch {
	case raw == "":
		return errors.New("no address")
	case len(raw) > maxURL:
		return fmt.Errorf("the address is %d bytes long (at most %d)", len(raw), maxURL)
	case strings.HasPrefix(raw, "-"):
		return errors.New("the address starts with a dash")
	case strings.IndexFunc(raw, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0:
		return errors.New("the address holds a space or a control character")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not an address: %v", err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return fmt.Errorf("only http and https addresses open, not %q", u.Scheme)
	}
	if u.Host == "" || u.User != nil {
		return errors.New("the address names no host, or carries a user")
	}
	return nil
}

// Argv is the program and arguments that open raw: $BROWSER's first entry
// (a colon-separated list, its words split on spaces, "%s" replaced by
// the address, else the address added last), else xdg-open or open. The
// address is always one word of its own.
func Argv(raw, browser, goos string) ([]string, error) {
	if err := Check(raw); err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(browser, ":")
	words := strings.Fields(first)
	if len(words) == 0 {
		switch goos {
		case "darwin":
			return []string{"open", raw}, nil
		case "windows", "plan9", "js", "wasip1":
			return nil, fmt.Errorf("no browser to open on %s: set $BROWSER", goos)
		}
		return []string{"xdg-open", raw}, nil
	}
	put := false
	for i, w := range words {
		if w == "%s" {
			words[i], put = raw, true
		}
	}
	if !put {
		words = append(words, raw)
	}
	return words, nil
}

// Open starts the browser on raw, detached in a session of its own so it
// outlives the cockpit and never reads its terminal, and returns once it
// started; a goroutine waits for it so it leaves no zombie.
func Open(raw string) error {
	argv, err := Argv(raw, os.Getenv("BROWSER"), runtime.GOOS)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil // /dev/null: the terminal is the cockpit's
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start %s: %v", argv[0], err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
