package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrNoEditor is the refusal to edit when neither $VISUAL nor $EDITOR is set.
var ErrNoEditor = errors.New("no editor: set $VISUAL or $EDITOR (for example EDITOR=vi, or VISUAL=\"code -w\")")

// Editor is the operator's editor command as words: $VISUAL, else $EDITOR,
// split at spaces with '…' and "…" quoting (no shell runs it). getenv is
// os.Getenv outside tests.
func Editor(getenv func(string) string) ([]string, error) {
	for _, name := range []string{"VISUAL", "EDITOR"} {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		words, err := splitWords(v)
		if err != nil {
			return nil, fmt.Errorf("$%s: %v", name, err)
		}
		return words, nil
	}
	return nil, ErrNoEditor
}

// EditorCmd is the editor (Editor's words) opening path; the caller runs it
// on the terminal (the UI through tea.ExecProcess, the CLI directly).
func EditorCmd(words []string, path string) *exec.Cmd {
	return exec.Command(words[0], append(append([]string(nil), words[1:]...), path)...)
}

// splitWords splits s at unquoted blanks; quotes group, backslash escapes
// the next character outside single quotes.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote, escaped := false, rune(0), false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("%q has an unfinished quote or escape", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("%q names no program", s)
	}
	return words, nil
}
