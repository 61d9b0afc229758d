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
	var w wordSplitter
	for _, r := range s {
		w.add(r)
	}
	if w.quote != 0 || w.escaped {
		return nil, fmt.Errorf("%q has an unfinished quote or escape", s)
	}
	w.endWord()
	if len(w.words) == 0 {
		return nil, fmt.Errorf("%q names no program", s)
	}
	return w.words, nil
}

// wordSplitter is splitWords's state between runes.
type wordSplitter struct {
	words   []string
	cur     strings.Builder
	inWord  bool
	quote   rune // the open quote, 0 outside quotes
	escaped bool // the last rune was an unquoted backslash
}

func (w *wordSplitter) add(r rune) {
	switch {
	case w.escaped:
		w.cur.WriteRune(r)
		w.escaped = false
	case r == '\\' && w.quote != '\'':
		w.escaped, w.inWord = true, true
	case w.quote != 0 && r == w.quote:
		w.quote = 0
	case w.quote != 0:
		w.cur.WriteRune(r)
	case r == '\'' || r == '"':
		w.quote, w.inWord = r, true
	case r == ' ' || r == '\t' || r == '\n':
		w.endWord()
	default:
		w.cur.WriteRune(r)
		w.inWord = true
	}
}

// endWord ends the word under way, if any.
func (w *wordSplitter) endWord() {
	if w.inWord {
		w.words = append(w.words, w.cur.String())
		w.cur.Reset()
		w.inWord = false
	}
}
