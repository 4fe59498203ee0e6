// Package fakegemini is a small stand-in for the Gemini API
// (generativelanguage.googleapis.com) on 127.0.0.1, so a real Gemini CLI,
// pointed at it by GOOGLE_GEMINI_BASE_URL, can be driven into chosen failures
// (docs/agents/gemini.md §9) without leaving the machine.
//
// It answers `POST <prefix>/models/<model>:streamGenerateContent` (SSE with
// `alt=sse`, else one JSON array), `…:generateContent` (one JSON object),
// `…:countTokens` and `GET <prefix>/models`. Every other request gets 404.
//
// A scenario is a queue of modes consumed by main-loop requests, the
// streamed requests that carry function declarations. Other requests (the
// CLI's routing, next-speaker and title side calls) always get a plain
// success, so they do not eat the scenario. Once the queue is empty every
// main-loop request succeeds; Push appends modes while the server runs.
//
// Modes (bodies as the Gemini API writes them, docs/agents/gemini.md §9):
//
//	ok           200, the text ReplyText (finishReason STOP, usage metadata)
//	400          400 INVALID_ARGUMENT "Request contains an invalid argument."
//	401          401 UNAUTHENTICATED, invalid credentials
//	500          500 INTERNAL "An internal error has occurred. …"
//	503          503 UNAVAILABLE "The model is overloaded. Please try again later."
//	429-quota    429 RESOURCE_EXHAUSTED, a per-day quota with RetryInfo retryDelay 37s
//	stream-500   200, then the 500 body as the stream's first chunk
//	stream-503   200, then the 503 body as the stream's first chunk
//	drop         the connection is closed without an answer
//	tool-shell   200, a call of run_shell_command with {"command":"echo hi"}
//	tool-approve 200, a call of run_shell_command that the CLI asks the
//	             person to approve ({"command":"touch approved.txt"})
package fakegemini

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"nudge/e2e/fakeprovider"
)

// The answer modes that are not HTTP errors.
const (
	ModeOK   = fakeprovider.ModeOK
	ModeDrop = "drop"
	// ModeSide is logged for requests that are not main-loop ones.
	ModeSide = "side"
	// ModeToolShell asks the CLI to run a shell command it runs without
	// asking (one that only prints).
	ModeToolShell = "tool-shell"
	// ModeToolApprove asks the CLI to run a shell command it asks the
	// person to approve (one that writes a file).
	ModeToolApprove = "tool-approve"
)

// ReplyText is the model text of every success.
const ReplyText = "Hello from the fake Gemini server."

// streamPrefix starts a mode whose error comes inside a 200 stream, as the
// Gemini API reports a failure after the answer has begun; the CLI's SDK
// reads a chunk that is an error body as that error (docs/agents/gemini.md §9).
const streamPrefix = "stream-"

// ModelID is the model listed by GET /models; any requested model is answered.
const ModelID = "gemini-2.5-flash"

// failure is one HTTP error answer in google.rpc.Status form.
type failure struct {
	status  int
	rpc     string // google.rpc.Code name ("UNAVAILABLE")
	message string
	details []any
}

// quotaMessage is the text of a per-day free-tier quota answer.
const quotaMessage = "You exceeded your current quota, please check your plan and billing details. " +
	"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n" +
	"* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 250, model: gemini-2.5-flash\n" +
	"Please retry in 37.5s."

// failures maps a scenario mode to its error answer.
var failures = map[string]failure{
	"400": {status: 400, rpc: "INVALID_ARGUMENT", message: "Request contains an invalid argument."},
	"401": {status: 401, rpc: "UNAUTHENTICATED", message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."},
	"500": {status: 500, rpc: "INTERNAL", message: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"},
	"503": {status: 503, rpc: "UNAVAILABLE", message: "The model is overloaded. Please try again later."},
	"429-quota": {status: 429, rpc: "RESOURCE_EXHAUSTED", message: quotaMessage, details: []any{
		map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
			"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
			"quotaId":         "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
			"quotaDimensions": map[string]any{"location": "global", "model": ModelID},
			"quotaValue":      "250",
		}}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.Help", "links": []any{map[string]any{
			"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
	}},
}

// Modes lists every scenario mode, in the order of the package doc.
func Modes() []string {
	return []string{ModeOK, "400", "401", "500", "503", "429-quota", streamPrefix + "500", streamPrefix + "503", ModeDrop, ModeToolShell, ModeToolApprove}
}

// api is the Gemini API as the shared fake server plays it.
var api = fakeprovider.API{Name: "fakegemini", Modes: Modes(), BasePath: "", Serve: serve}

// Server answers Gemini API requests per its scenario and logs each one.
type Server = fakeprovider.Server

// Request is one logged request.
type Request = fakeprovider.Request

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only). Unknown modes are refused.
func New(scenario []string, logPath string) (*Server, error) {
	return fakeprovider.New(api, scenario, logPath)
}

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func ParseScenario(s string) ([]string, error) { return api.ParseScenario(s) }

// content is one turn of a request: a role and its parts.
type content struct {
	Role  string `json:"role"`
	Parts []struct {
		Text             string          `json:"text"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
	} `json:"parts"`
}

// body is the part of a generateContent request the fake looks at.
type body struct {
	Contents []content `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
	} `json:"tools"`
}

// functions counts the function declarations a request offers.
func (b body) functions() int {
	n := 0
	for _, t := range b.Tools {
		n += len(t.FunctionDeclarations)
	}
	return n
}

// lastUserText returns the last text part of the last user turn that has
// one, cut to 500 bytes.
func (b body) lastUserText() string {
	for i := len(b.Contents) - 1; i >= 0; i-- {
		c := b.Contents[i]
		if c.Role != "user" {
			continue
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			if t := strings.TrimSpace(c.Parts[j].Text); t != "" {
				if len(t) > 500 {
					t = strings.ToValidUTF8(t[:500], "")
				}
				return t
			}
		}
	}
	return ""
}

// serve answers one request.
func serve(s *Server, w http.ResponseWriter, r *http.Request) {
	rec := fakeprovider.NewRequest(r, "req-fake-")
	var b body
	fakeprovider.DecodeBody(r, &b)
	rec.Tools = b.functions()
	rec.LastUserText = b.lastUserText()
	if n := len(b.Contents); n > 0 {
		rec.LastRole = b.Contents[n-1].Role
	}
	path := r.URL.Path
	model, method, _ := strings.Cut(path[strings.LastIndex(path, "/")+1:], ":")
	rec.Model = model
	w.Header().Set("x-goog-request-id", rec.RequestID)

	switch {
	case r.Method == http.MethodPost && method == "streamGenerateContent":
		rec.Stream = true
		rec.Mode = ModeSide
		if rec.Tools > 0 {
			rec.Mode = s.Next()
		}
		rec.Status = answer(w, rec, r.URL.Query().Get("alt") == "sse")
	case r.Method == http.MethodPost && method == "generateContent":
		rec.Mode = ModeSide
		rec.Status = http.StatusOK
		fakeprovider.WriteJSON(w, http.StatusOK, response(side(b)))
	case r.Method == http.MethodPost && method == "countTokens":
		rec.Mode, rec.Status = "count_tokens", http.StatusOK
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{"totalTokens": 10})
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		rec.Mode, rec.Status = "models", http.StatusOK
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{"models": []any{
			map[string]any{"name": "models/" + ModelID, "displayName": "Fake Gemini", "supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"}}}})
	default:
		rec.Mode, rec.Status = "not_found", http.StatusNotFound
		writeError(w, failure{status: http.StatusNotFound, rpc: "NOT_FOUND", message: "Not found: " + path})
	}
	s.Record(rec)
}

// side is the text of a side call's answer. The CLI asks its router for a
// JSON choice of model and its next-speaker check for a JSON verdict; any
// other side call gets ReplyText.
func side(b body) string {
	t := b.lastUserText()
	switch {
	case strings.Contains(t, "next_speaker"):
		return `{"reasoning":"The model answered.","next_speaker":"user"}`
	case strings.Contains(t, "model_choice"):
		return `{"reasoning":"A simple request.","model_choice":"flash"}`
	}
	return ReplyText
}

// response is one generateContent answer carrying text.
func response(text string) map[string]any {
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  ModelID,
		"responseId":    "resp-fake-" + fakeprovider.RandomHex(6),
	}
}

// answer writes the reply for a streamed request and returns its status (0
// when the connection was dropped).
func answer(w http.ResponseWriter, rec Request, sse bool) int {
	if f, ok := failures[rec.Mode]; ok {
		writeError(w, f)
		return f.status
	}
	if f, ok := failures[strings.TrimPrefix(rec.Mode, streamPrefix)]; ok {
		fakeprovider.StartEvents(w).Raw(string(errorBody(f)))
		return http.StatusOK
	}
	if rec.Mode == ModeDrop {
		hj, ok := w.(http.Hijacker)
		if !ok {
			slog.Error("fakegemini: cannot drop the connection: no hijacker")
			return 0
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			slog.Error("fakegemini: drop the connection", "err", err)
			return 0
		}
		conn.Close()
		return 0
	}
	text := ReplyText
	if rec.Mode == ModeSide {
		text = "A side answer."
	}
	answer := response(text)
	switch rec.Mode {
	case ModeToolShell:
		answer["candidates"] = shellCall("echo hi", "Print hi.")
	case ModeToolApprove:
		answer["candidates"] = shellCall("touch approved.txt", "Make a file.")
	}
	if !sse {
		fakeprovider.WriteJSON(w, http.StatusOK, []any{answer})
		return http.StatusOK
	}
	fakeprovider.StartEvents(w).Send("", answer)
	return http.StatusOK
}

// shellCall is an answer's candidates calling run_shell_command with command.
func shellCall(command, description string) []any {
	return []any{map[string]any{
		"content": map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{
			"name": "run_shell_command", "args": map[string]any{"command": command, "description": description}}}}},
		"finishReason": "STOP", "index": 0}}
}

// errorBody is f as a google.rpc.Status error body.
func errorBody(f failure) []byte {
	e := map[string]any{"code": f.status, "message": f.message, "status": f.rpc}
	if f.details != nil {
		e["details"] = f.details
	}
	b, err := json.Marshal(map[string]any{"error": e})
	if err != nil {
		panic(err) // the failures are this file's own literals
	}
	return b
}

// writeError writes f as an error answer.
func writeError(w http.ResponseWriter, f failure) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(f.status)
	if _, err := w.Write(errorBody(f)); err != nil {
		slog.Warn("fakegemini: write answer", "err", err)
	}
}
