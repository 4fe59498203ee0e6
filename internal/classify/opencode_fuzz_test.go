package classify

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenCode feeds arbitrary records after real ones: no panic, and every
// event is well formed.
func FuzzOpenCode(f *testing.F) {
	for _, name := range []string{"e500_giveup", "e429_free_tier", "permission_bash", "abort"} {
		for _, suffix := range []string{".sse_event.jsonl", ".sse_global_event.jsonl"} {
			file, err := os.Open(filepath.Join(openCodeSamples, name+suffix))
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(file)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				f.Add(append([]byte(nil), sc.Bytes()...))
			}
			file.Close()
		}
	}
	f.Add([]byte(`{"type":"sync","syncEvent":{"id":"evt_1","type":"message.updated.1","data":{"sessionID":"ses_a","info":{"id":"msg_1","role":"assistant","time":{"completed":1}}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r := newOpenCodeReader("fuzz.jsonl", nil)
		for range 2 {
			fuzzCheckEvents(t, openCodeName, r.Read(line))
		}
	})
}
