package planfs

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/fleetwatch/fleetwatch/model"
)

// PlanFromText reads a plan whose file content is data, as a scan of the
// tree would: the lanes of a remote claims backend come from git objects,
// not from files. ok is false when the content is not a plan (binary), with
// the warning saying so.
func PlanFromText(lane model.Lane, name string, data []byte, modTime int64) (p model.Plan, warns []model.Warning, ok bool) {
	rel := string(model.RelOf(lane, name))
	warn := func(msg string) { warns = append(warns, model.Warning{File: rel, Message: msg}) }
	size := int64(len(data))
	if size > HeaderLimit {
		data = data[:HeaderLimit]
	}
	if bytes.IndexByte(data, 0) >= 0 {
		warn(errBinary.Error() + "; skipped")
		return p, warns, false
	}
	text := string(data)
	if size > HeaderLimit {
		warn("larger than 64 KiB; only the first 64 KiB are read for the header")
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		warn("invalid UTF-8; read with replacement characters")
	}
	h := detach(model.ParseHeader(text))
	for _, w := range h.Warnings {
		w.File = rel
		warns = append(warns, w)
	}
	return newPlan(lane, name, size, modTime, h), warns, true
}
