package classify

import (
	"slices"

	"nudge/internal/jsonscan"
)

// Most lines of a busy rollout are Codex at work: answers, reasoning, tool
// calls and their output (response_item), and the items it completes, the
// messages it writes and its token counts (event_msg), each agent_activity and nothing else
// (docs/agents/codex.md §4.1). codexWork tells such lines without decoding
// them, which is most of what reading a rollout costs
// (docs/performance.md).

// codexWorkItems are the response_item payload types that are work
// whatever else they hold (codexRollout.responseItem); an assistant's
// message is work too.
var codexWorkItems = map[string]bool{
	"function_call": true, "custom_tool_call": true, "local_shell_call": true,
	"function_call_output": true, "custom_tool_call_output": true,
	"reasoning": true, "web_search_call": true,
}

// The keys codexWork reads, by object. Any other key of a line taken sets
// a field that no event of such a line depends on: decoded, it may at
// worst mistype one, which decodeRecord allows.
var (
	codexRecordKeys  = newCodexKeys("timestamp", "ordinal", "type", "payload")
	codexPayloadKeys = newCodexKeys("type", "role", "call_id", "item", "info", "rate_limits")
	codexItemKeys    = newCodexKeys("type")
)

// codexWork reads line, when it is a record of Codex at work, into r: its
// time, ordinal and type, and of its payload the type, role, call id,
// item type, usage and rate limits, the rest left empty. It reports false, leaving r as it was,
// for any line it cannot tell is one (those are decoded); whenever it
// reports true, decoding line gives the same events and the same reader
// state (fuzzed against it). The keys it reads must each be written once,
// in the case they are decoded by, as a plain string (plainString) but
// the ordinal, usage and rate limits (any value) and the payload and its
// item (objects).
func codexWork(line []byte, r *codexRecord) bool {
	var top [4][]byte
	var payload [6][]byte
	if !jsonscan.Valid(line) || !codexRecordKeys.members(line, top[:]) ||
		!codexPayloadKeys.members(top[3], payload[:]) {
		return false
	}
	var rec codexRecord
	for i, v := range []*string{&rec.Timestamp, nil, &rec.Type, nil} {
		if v != nil && !plainValue(top[i], v) {
			return false
		}
	}
	rec.Ordinal = top[1]
	p := &rec.Payload
	if !plainValue(payload[0], &p.Type) ||
		payload[1] != nil && !plainValue(payload[1], &p.Role) ||
		payload[2] != nil && !plainValue(payload[2], &p.CallID) {
		return false
	}
	switch {
	case rec.Type == "response_item" && (codexWorkItems[p.Type] || p.Type == "message" && p.Role == "assistant"):
	case rec.Type == "event_msg" && p.Type == "agent_message":
	case rec.Type == "event_msg" && p.Type == "token_count":
		// The usage (info) is not read, only whether there is one; the
		// rate limits, when given, are decoded on their own.
		p.Info = payload[4]
		if payload[5] != nil && !decodeRecord(payload[5], &p.RateLimits) {
			return false
		}
	case rec.Type == "event_msg" && p.Type == "item_completed":
		var item [1][]byte
		if !codexItemKeys.members(payload[3], item[:]) || !plainValue(item[0], &p.Item.Type) ||
			p.Item.Type == "" || p.Item.Type == "UserMessage" {
			return false
		}
	default:
		return false
	}
	*r = rec
	return true
}

// codexKeys are the keys of an object codexWork reads, in order, and as a
// set in lower case (otherKey).
type codexKeys struct {
	names []string
	lower map[string]bool
}

func newCodexKeys(names ...string) codexKeys {
	k := codexKeys{names: names, lower: map[string]bool{}}
	for _, n := range names {
		k.lower[n] = true // all in lower case
	}
	return k
}

// members puts into values the value of each of k's keys in the object
// obj, nil for one missing. It reports false when obj is not an object, a
// key is written twice, or another key may be decoded as one of k's
// (otherKey).
func (k codexKeys) members(obj []byte, values [][]byte) bool {
	if len(obj) == 0 || obj[0] != '{' {
		return false
	}
	for key, value := range jsonscan.Members(obj) {
		i := slices.Index(k.names, string(key))
		switch {
		case i >= 0 && values[i] == nil:
			values[i] = value
		case i >= 0 || !otherKey(key, k.lower):
			return false
		}
	}
	return true
}

// plainValue reads v, a plain string (plainString), into s.
func plainValue(v []byte, s *string) bool {
	if !plainString(v) {
		return false
	}
	*s = string(v[1 : len(v)-1])
	return true
}
