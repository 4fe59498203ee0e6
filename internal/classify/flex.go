package classify

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// Tolerant field types for records written by versions not captured here:
// a field may carry another JSON type than the one seen (a number as a
// string, a flag as "true"). Each reads what it can and never fails, so one
// odd field does not cost the rest of the record.

// flexString is a JSON string; a number or a boolean reads as its literal
// text, anything else as "".
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*s = ""
	switch {
	case len(b) == 0:
	case b[0] == '"':
		var v string
		if json.Unmarshal(b, &v) == nil {
			*s = flexString(v)
		}
	case b[0] == 't' || b[0] == 'f' || b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		*s = flexString(b)
	}
	return nil
}

// flexInt is a JSON integer, an integral float, or a string holding one;
// anything else reads as 0.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	*n = 0
	var s flexString
	_ = s.UnmarshalJSON(b)
	f, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64)
	if err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		*n = flexInt(f)
	}
	return nil
}

// flexBool is true for true, "true" (any case) and a non-zero number.
type flexBool bool

func (v *flexBool) UnmarshalJSON(b []byte) error {
	var s flexString
	_ = s.UnmarshalJSON(b)
	switch t := strings.ToLower(strings.TrimSpace(string(s))); t {
	case "true":
		*v = true
	case "false", "":
		*v = false
	default:
		f, err := strconv.ParseFloat(t, 64)
		*v = flexBool(err == nil && f != 0)
	}
	return nil
}

// flexUnixTime is a time given in Unix seconds (a number or a numeric
// string), in milliseconds when the number is too large for seconds, or as
// an RFC 3339 string. Anything else is the zero time.
type flexUnixTime struct{ time.Time }

// maxEpochSeconds is the last second of year 9999.
const maxEpochSeconds = maxEpochMs / 1000

func (t *flexUnixTime) UnmarshalJSON(b []byte) error {
	t.Time = time.Time{}
	var s flexString
	_ = s.UnmarshalJSON(b)
	text := strings.TrimSpace(string(s))
	if at, err := time.Parse(time.RFC3339Nano, text); err == nil {
		t.Time = at.UTC()
		return nil
	}
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil || !(f > 0):
	case f <= maxEpochSeconds:
		t.Time = time.Unix(int64(f), 0).UTC()
	case f <= maxEpochMs:
		t.Time = msTime(int64(f)).UTC()
	}
	return nil
}
