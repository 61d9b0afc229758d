package ledger

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// parseRun reads one ledger line. The lines Append writes are flat objects
// of plain strings, numbers and booleans, which a direct scan reads ten
// times faster than encoding/json; anything else (an escape, a nested
// value, a hand edit) goes to encoding/json, so both read the same runs.
func parseRun(line []byte) (Run, error) {
	if r, ok := scanFlat(line); ok {
		return r, nil
	}
	var r Run
	err := json.Unmarshal(line, &r)
	return r, err
}

func scanFlat(b []byte) (r Run, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return r, false
	}
	b = b[1 : len(b)-1]
	for len(b) > 0 {
		key, rest, ok := plainString(b)
		if !ok || len(rest) == 0 || rest[0] != ':' {
			return r, false
		}
		val, rest, ok := scalar(rest[1:])
		if !ok || !r.set(key, val) {
			return r, false
		}
		if len(rest) > 0 {
			if rest[0] != ',' {
				return r, false
			}
			rest = rest[1:]
		}
		b = rest
	}
	return r, true
}

// plainString is a leading JSON string with no escapes, without its quotes.
func plainString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return nil, nil, false
	}
	s = b[1 : 1+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, nil, false
	}
	return s, b[2+end:], true
}

// scalar is a leading string (quotes kept), number or boolean.
func scalar(b []byte) (val, rest []byte, ok bool) {
	if len(b) > 0 && b[0] == '"' {
		s, rest, ok := plainString(b)
		return b[:len(s)+2], rest, ok
	}
	i := 0
	for i < len(b) && b[i] != ',' {
		i++
	}
	v := b[:i]
	if len(v) == 0 || v[0] == '{' || v[0] == '[' || v[0] == 'n' {
		return nil, nil, false
	}
	return v, b[i:], true
}

// set puts val in r's field for key; false when it does not fit the field.
// An unknown key is ignored, as encoding/json ignores it.
func (r *Run) set(key, val []byte) bool {
	put, ok := runFields[string(key)]
	if !ok {
		return true
	}
	return put(r, val)
}

// runFields put a ledger line's value, by its key, in a Run's field.
var runFields = map[string]func(r *Run, val []byte) bool{
	"run":             func(r *Run, v []byte) bool { return putString(&r.ID, v) },
	"plan":            func(r *Run, v []byte) bool { return putString(&r.Plan, v) },
	"agent":           func(r *Run, v []byte) bool { return putString(&r.Agent, v) },
	"tier":            func(r *Run, v []byte) bool { return putString(&r.Tier, v) },
	"endpoint":        func(r *Run, v []byte) bool { return putString(&r.Endpoint, v) },
	"model":           func(r *Run, v []byte) bool { return putString(&r.Model, v) },
	"host":            func(r *Run, v []byte) bool { return putString(&r.Host, v) },
	"source":          func(r *Run, v []byte) bool { return putString(&r.Source, v) },
	"input_tokens":    func(r *Run, v []byte) bool { return putInt64(&r.Input, v) },
	"output_tokens":   func(r *Run, v []byte) bool { return putInt64(&r.Output, v) },
	"cached_tokens":   func(r *Run, v []byte) bool { return putInt64(&r.Cached, v) },
	"cost_usd":        func(r *Run, v []byte) bool { return putFloat(&r.CostUSD, v) },
	"priced":          func(r *Run, v []byte) bool { return putBool(&r.Priced, v) },
	"mode":            func(r *Run, v []byte) bool { return putString(&r.Mode, v) },
	"claim":           func(r *Run, v []byte) bool { return putString(&r.Claim, v) },
	"committed":       func(r *Run, v []byte) bool { return putBool(&r.Committed, v) },
	"not_daily":       func(r *Run, v []byte) bool { return putBool(&r.NotDaily, v) },
	"exit":            func(r *Run, v []byte) bool { return putInt(&r.Exit, v) },
	"estimated_calls": func(r *Run, v []byte) bool { return putInt(&r.Estimated, v) },
	"start":           func(r *Run, v []byte) bool { return putTime(&r.Start, v) },
	"end":             func(r *Run, v []byte) bool { return putTime(&r.End, v) },
}

// putString takes a quoted value, without its quotes.
func putString(dst *string, val []byte) bool {
	if val[0] != '"' {
		return false
	}
	*dst = string(val[1 : len(val)-1])
	return true
}

func putInt64(dst *int64, val []byte) bool {
	n, err := strconv.ParseInt(string(val), 10, 64)
	*dst = n
	return err == nil
}

func putInt(dst *int, val []byte) bool {
	n, err := strconv.Atoi(string(val))
	*dst = n
	return err == nil
}

func putFloat(dst *float64, val []byte) bool {
	f, err := strconv.ParseFloat(string(val), 64)
	*dst = f
	return err == nil
}

func putBool(dst *bool, val []byte) bool {
	b, err := strconv.ParseBool(string(val))
	*dst = b
	return err == nil
}

// putTime takes a quoted RFC 3339 time.
func putTime(dst *time.Time, val []byte) bool {
	if val[0] != '"' {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, string(val[1:len(val)-1]))
	*dst = t
	return err == nil
}
