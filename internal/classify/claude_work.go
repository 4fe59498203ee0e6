package classify

import (
	"bytes"
	"reflect"
	"strings"
	"unicode/utf8"

	"nudge/internal/jsonscan"
)

// Most records of a busy session are the assistant's answers and tool
// calls, each agent_activity and nothing else (docs/agents/claude.md §4.1
// row 10), and the user records carrying the results of those calls,
// agent_activity too unless one answers a question (row 3).
// claudeWork and claudeToolResults tell such records without decoding
// them, which is most of what reading a transcript costs
// (docs/performance.md).

// claudeNotWork are bytes that may make an assistant record more than
// work: a synthetic placeholder, a turn's end, a question box. Without a
// \u escape in the line, a decoded string holds one of them only when the
// line does.
var claudeNotWork = [][]byte{[]byte(`end_turn`), []byte(`<synthetic>`), []byte(`AskUserQuestion`), []byte(`\u`)}

// claudeKeys are the keys a value of type T is decoded by, in lower case:
// encoding/json matches a key to a field without regard to case.
func claudeKeys[T any]() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[strings.ToLower(name)] = true
	}
	return keys
}

var (
	claudeRecordKeys  = claudeKeys[claudeRecord]()
	claudeMessageKeys = claudeKeys[claudeMessage]()
	// claudeBlockType is the one key of a content block read here: its
	// other fields are read only for a text block or a question's answer.
	claudeBlockType = map[string]bool{"type": true}
)

// claudeWork reads line, when it is an assistant record of work, into r:
// its type, session, working directory, time and uuid, the rest left
// empty. It reports false, leaving r as it was, for any line it cannot
// tell is one (those are decoded); whenever it reports true, decoding
// line gives the same fields and the same events (fuzzed against it). It
// takes a line only when the record is a plain one (claudePlain) and no
// byte of claudeNotWork is in it.
func claudeWork(line []byte, r *claudeRecord) bool {
	for _, b := range claudeNotWork {
		if bytes.Contains(line, b) {
			return false
		}
	}
	model := ""
	if !claudePlain(line, "assistant", func(m []byte) bool { return claudeMessageModel(m, &model) }, r) {
		return false
	}
	r.Message.Model = model
	return true
}

// claudeModelKey is the one key of a message claudeWork reads.
var claudeModelKey = map[string]bool{"model": true}

// claudeMessageModel reads an assistant message's model into model: it
// reports false for a message that is not an object, or whose model is
// not one plain string under its own name.
func claudeMessageModel(m []byte, model *string) bool {
	if len(m) == 0 || m[0] != '{' {
		return false
	}
	seen := false
	for key, value := range jsonscan.Members(m) {
		if string(key) != "model" {
			if !otherKey(key, claudeModelKey) {
				return false
			}
			continue
		}
		if seen || !plainString(value) {
			return false
		}
		seen, *model = true, string(value[1:len(value)-1])
	}
	return true
}

// claudeToolResult is the content claudeToolResults reads a record as.
var claudeToolResult = []claudeBlock{{Type: "tool_result"}}

// claudeToolResults reads line, when it is a user record carrying the
// results of tool calls and nothing else, into r: its type, session,
// working directory, time and uuid, and as content one tool_result block
// standing for all of them (the blocks' ids tell which question a result
// answers: the caller takes this path only while no question is open).
// Like claudeWork it reports false, leaving r as it was, for any line it
// cannot tell is one; whenever it reports true, decoding line gives the
// same fields but the blocks' ids and the same events (fuzzed against
// it). It takes a line only when the record is a plain one (claudePlain)
// with one message whose only field is content, an array of tool_result
// blocks: no text (an interruption, §4.1 row 1), no provenance (a
// harness row, a prompt), no isMeta.
func claudeToolResults(line []byte, r *claudeRecord) bool {
	if !claudePlain(line, "user", claudeOnlyToolResults, r) {
		return false
	}
	r.Message.Content.Blocks = claudeToolResult
	return true
}

// claudeOnlyToolResults tells a message whose one field is content, a
// non-empty array of blocks each of type tool_result, with no other key
// that may be decoded as one of those fields.
func claudeOnlyToolResults(message []byte) bool {
	content, ok := claudeOneKey(message, "content", claudeMessageKeys)
	if !ok {
		return false
	}
	n := 0
	for block := range jsonscan.Elements(content) {
		if typ, ok := claudeOneKey(block, "type", claudeBlockType); !ok || string(typ) != `"tool_result"` {
			return false
		}
		n++
	}
	return n > 0
}

// claudeOneKey returns the value of key in the object obj when obj holds
// no other key that may be decoded as one of fields (otherKey); key
// written twice is such a key. A missing key gives nil.
func claudeOneKey(obj []byte, key string, fields map[string]bool) ([]byte, bool) {
	var value []byte
	for k, v := range jsonscan.Members(obj) {
		switch {
		case string(k) == key && value == nil:
			value = v
		case !otherKey(k, fields):
			return nil, false
		}
	}
	return value, true
}

// claudePlain reads line, a record of type typ, into r when decoding it
// sets no field but type, sessionId, cwd, timestamp, uuid and message,
// each of the first five a plain string (no escape, valid UTF-8: the
// bytes are the value) written once in the case it is decoded by,
// isSidechain absent or false. With message set, the record has one
// message and message tells it may be read so; else any message is.
func claudePlain(line []byte, typ string, message func([]byte) bool, r *claudeRecord) bool {
	if !jsonscan.Valid(line) {
		return false
	}
	var fields [5][]byte // type, sessionId, cwd, timestamp, uuid
	messages := 0
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
		case "message":
			if messages++; message != nil && (messages > 1 || !message(value)) {
				return false
			}
		default:
			if !otherKey(key, claudeRecordKeys) {
				return false
			}
		}
		if n < 0 {
			continue
		}
		if fields[n] != nil || !plainString(value) {
			return false
		}
		fields[n] = value[1 : len(value)-1]
	}
	if string(fields[0]) != typ || message != nil && messages == 0 {
		return false
	}
	*r = claudeRecord{Type: typ, SessionID: string(fields[1]), Cwd: string(fields[2]), Timestamp: string(fields[3]), UUID: string(fields[4])}
	return true
}

// otherKey tells a key that sets none of fields (claudeKeys): plain
// ASCII (no escape, nothing that folds into a letter) and no field's name
// in any case.
func otherKey(key []byte, fields map[string]bool) bool {
	var lower [32]byte // longer than any field's name
	for i, c := range key {
		if c >= utf8.RuneSelf || c == '\\' {
			return false
		}
		if i < len(lower) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
	}
	return len(key) > len(lower) || !fields[string(lower[:len(key)])]
}

// plainString tells a JSON string whose bytes between the quotes are
// its value.
func plainString(value []byte) bool {
	return len(value) >= 2 && value[0] == '"' && bytes.IndexByte(value, '\\') < 0 && utf8.Valid(value)
}
