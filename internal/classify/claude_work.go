package classify

import (
	"bytes"
	"reflect"
	"strings"
	"unicode/utf8"

	"nudge/internal/jsonscan"
)

// Most records of a busy session are the assistant's answers and tool
// calls: each is agent_activity and nothing else (docs/agents/claude.md
// §4.1 row 10). claudeWork tells such a record without decoding it, which
// is most of what reading a transcript costs (docs/performance.md).

// claudeNotWork are bytes that may make an assistant record more than
// work: a synthetic placeholder, a turn's end, a question box. Without a
// \u escape in the line, a decoded string holds one of them only when the
// line does.
var claudeNotWork = [][]byte{[]byte(`end_turn`), []byte(`<synthetic>`), []byte(`AskUserQuestion`), []byte(`\u`)}

// claudeRecordKeys are the keys a record is decoded by, in lower case:
// encoding/json matches a key to a field without regard to case.
var claudeRecordKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[claudeRecord]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[strings.ToLower(name)] = true
	}
	return keys
}()

// claudeWork reads line, when it is an assistant record of work, into r:
// its type, session, working directory, time and uuid, the rest left
// empty. It reports false, leaving r as it was, for any line it cannot
// tell is one (those are decoded); whenever it reports true, decoding
// line gives the same fields and the same events (fuzzed against it). It
// takes a line only when every field it reads is a plain string (no
// escape, valid UTF-8: the bytes are the value) written once, in the case
// the record is decoded by, isSidechain is absent or false, and every
// other key either is no field of claudeRecord or is message.
func claudeWork(line []byte, r *claudeRecord) bool {
	for _, b := range claudeNotWork {
		if bytes.Contains(line, b) {
			return false
		}
	}
	if !jsonscan.Valid(line) {
		return false
	}
	var fields [5][]byte // type, sessionId, cwd, timestamp, uuid
	for key, value := range jsonscan.Members(line) {
		n := -1
		switch string(key) {
		case "type":
			n = 0
		case "sessionId":
			n = 1
		case "cwd":
			n = 2
		case "timestamp":
			n = 3
		case "uuid":
			n = 4
		case "isSidechain":
			if string(value) != "false" {
				return false
			}
		case "message": // its fields count only with the bytes of claudeNotWork
		default:
			if !claudeOtherKey(key) {
				return false
			}
		}
		if n < 0 {
			continue
		}
		if fields[n] != nil || !claudePlainString(value) {
			return false
		}
		fields[n] = value[1 : len(value)-1]
	}
	if string(fields[0]) != "assistant" {
		return false
	}
	*r = claudeRecord{Type: "assistant", SessionID: string(fields[1]), Cwd: string(fields[2]), Timestamp: string(fields[3]), UUID: string(fields[4])}
	return true
}

// claudeOtherKey tells a key that sets no field of claudeRecord: plain
// ASCII (no escape, nothing that folds into a letter) and no field's name
// in any case.
func claudeOtherKey(key []byte) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return !claudeRecordKeys[strings.ToLower(string(key))]
}

// claudePlainString tells a JSON string whose bytes between the quotes are
// its value.
func claudePlainString(value []byte) bool {
	return len(value) >= 2 && value[0] == '"' && bytes.IndexByte(value, '\\') < 0 && utf8.Valid(value)
}
