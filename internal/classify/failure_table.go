package classify

import (
	"regexp"
	"strings"
)

// The table of the providers' and agents' error types and phrases that
// readFailure applies (docs/failures.md holds the same rows with their
// sources; TestFailureTableDoc keeps the two equal).

// failureType is one error type or code and the class it gives. Class ""
// is a type known to say nothing by itself (a generic category): the
// other signals decide. A Name ending in ".*" covers every code with that
// prefix.
type failureType struct {
	Name   string
	Class  Class
	Source string
}

// failureTypes are the error types, by who writes them.
var failureTypes = []failureType{
	// Anthropic API error types.
	{"invalid_request_error", Rejected, "docs.anthropic.com/en/api/errors"},
	{"authentication_error", Auth, "docs.anthropic.com/en/api/errors"},
	{"permission_error", Auth, "docs.anthropic.com/en/api/errors"},
	{"not_found_error", Rejected, "docs.anthropic.com/en/api/errors"},
	{"request_too_large", Rejected, "docs.anthropic.com/en/api/errors"},
	{"rate_limit_error", ProviderError, "docs.anthropic.com/en/api/errors"},
	{"api_error", ProviderError, "docs.anthropic.com/en/api/errors"},
	{"overloaded_error", ProviderError, "docs.anthropic.com/en/api/errors"},
	{"billing_error", UsageLimit, "docs.anthropic.com/en/api/errors"},
	{"error", "", "docs.anthropic.com/en/api/errors (the envelope's type)"},
	// OpenAI API error types and codes.
	{"insufficient_quota", UsageLimit, "platform.openai.com/docs/guides/error-codes"},
	{"invalid_api_key", Auth, "platform.openai.com/docs/guides/error-codes"},
	{"context_length_exceeded", Rejected, "platform.openai.com/docs/guides/error-codes"},
	{"model_not_found", Rejected, "platform.openai.com/docs/guides/error-codes"},
	{"rate_limit_exceeded", ProviderError, "platform.openai.com/docs/guides/error-codes"},
	{"server_error", ProviderError, "platform.openai.com/docs/guides/error-codes"},
	{"billing_not_active", UsageLimit, "platform.openai.com/docs/guides/error-codes"},
	{"usage_limit_reached", UsageLimit, "github.com/openai/codex codex-rs/core/src/error.rs (the ChatGPT backend's 429 body)"},
	// Moonshot (Kimi) API error types.
	{"invalid_authentication_error", Auth, "platform.moonshot.ai/docs/api/chat#error-explanation"},
	{"exceeded_current_quota_error", UsageLimit, "platform.moonshot.ai/docs/api/chat#error-explanation"},
	{"permission_denied_error", Auth, "platform.moonshot.ai/docs/api/chat#error-explanation"},
	{"resource_not_found_error", Rejected, "platform.moonshot.ai/docs/api/chat#error-explanation"},
	{"rate_limit_reached_error", ProviderError, "platform.moonshot.ai/docs/api/chat#error-explanation"},
	{"engine_overloaded_error", ProviderError, "platform.moonshot.ai/docs/api/chat#error-explanation"},
	{"content_filter", Rejected, "platform.moonshot.ai/docs/api/chat#error-explanation"},
	{"access_terminated_error", Auth, "github.com/openclaw/openclaw/pull/142656 (the Kimi coding endpoint's 403 body)"},
	// Google (Gemini) API status names.
	{"RESOURCE_EXHAUSTED", ProviderError, "ai.google.dev/gemini-api/docs/troubleshooting (rate or quota: the words decide)"},
	{"UNAVAILABLE", ProviderError, "ai.google.dev/gemini-api/docs/troubleshooting"},
	{"INTERNAL", ProviderError, "ai.google.dev/gemini-api/docs/troubleshooting"},
	{"DEADLINE_EXCEEDED", ProviderError, "ai.google.dev/gemini-api/docs/troubleshooting"},
	{"INVALID_ARGUMENT", Rejected, "ai.google.dev/gemini-api/docs/troubleshooting"},
	{"FAILED_PRECONDITION", Rejected, "ai.google.dev/gemini-api/docs/troubleshooting"},
	{"PERMISSION_DENIED", Auth, "ai.google.dev/gemini-api/docs/troubleshooting"},
	{"UNAUTHENTICATED", Auth, "cloud.google.com/apis/design/errors"},
	{"NOT_FOUND", Rejected, "ai.google.dev/gemini-api/docs/troubleshooting"},
	// Claude Code's error categories and apiError codes (docs/agents/claude.md §4.2).
	{"authentication_failed", Auth, "docs/agents/claude.md §4.2"},
	{"oauth_org_not_allowed", Auth, "docs/agents/claude.md §4.2"},
	{"account_on_hold", Auth, "docs/agents/claude.md §4.2"},
	{"verification_required", Auth, "docs/agents/claude.md §4.2"},
	{"cloud_credential_error", Auth, "docs/agents/claude.md §4.2"},
	{"invalid_request", Rejected, "docs/agents/claude.md §4.2"},
	{"overloaded", ProviderError, "docs/agents/claude.md §4.2"},
	{"rate_limit", ProviderError, "docs/agents/claude.md §4.2 (a bare category: a limit's words outrank it)"},
	{"message_over_context_limit", Rejected, "docs/agents/claude.md §4.2"},
	{"safety_monitor_blocked", Rejected, "docs/agents/claude.md §4.2"},
	{"dlp_request_denied", Rejected, "docs/agents/claude.md §4.2"},
	{"pdf_too_large", Rejected, "docs/agents/claude.md §4.2"},
	{"pdf_password_protected", Rejected, "docs/agents/claude.md §4.2"},
	{"connection_failed", ProviderError, "docs/agents/claude.md §4.2"},
	{"no_response", ProviderError, "docs/agents/claude.md §4.2"},
	{"stream_idle_timeout", ProviderError, "docs/agents/claude.md §4.2"},
	{"request_timeout", ProviderError, "docs/agents/claude.md §1 (2.1.333)"},
	{"client_certificate", Unknown, "docs/agents/claude.md §1 (2.1.333: told, never retried)"},
	{"tls_cert_invalid", Unknown, "docs/agents/claude.md §1 (2.1.333: told, never retried)"},
	{"unexpected_response", Unknown, "docs/agents/claude.md §1 (2.1.333: told, never retried)"},
	{"unknown", "", "docs/agents/claude.md §4.2 (a category of the executable)"},
	{"max_output_tokens", "", "docs/agents/claude.md §4.2 (a category of the executable)"},
	// Codex's codex_error_info names (docs/agents/codex.md §4.2).
	{"usage_limit_exceeded", UsageLimit, "docs/agents/codex.md §4.2"},
	{"usage_not_included", UsageLimit, "docs/agents/codex.md §4.2"},
	{"quota_exceeded", UsageLimit, "docs/agents/codex.md §4.2"},
	{"context_window_exceeded", Rejected, "docs/agents/codex.md §4.2"},
	{"bad_request", Rejected, "docs/agents/codex.md §4.2"},
	{"cyber_policy", Rejected, "docs/agents/codex.md §4.2"},
	{"unauthorized", Auth, "docs/agents/codex.md §4.2"},
	{"internal_server_error", ProviderError, "docs/agents/codex.md §4.2"},
	{"server_overloaded", ProviderError, "docs/agents/codex.md §4.2"},
	{"response_stream_connection_failed", ProviderError, "docs/agents/codex.md §4.2"},
	{"response_stream_disconnected", ProviderError, "docs/agents/codex.md §4.2"},
	{"http_connection_failed", ProviderError, "docs/agents/codex.md §4.2 (its own status outranks it)"},
	{"response_too_many_failed_attempts", ProviderError, "docs/agents/codex.md §4.2"},
	{"other", "", "docs/agents/codex.md §4.2 (a generic category)"},
	{"sandbox_error", Unknown, "docs/agents/codex.md §4.2"},
	// OpenCode's error names and body codes (docs/agents/opencode.md §6.3).
	{"MessageAbortedError", Cancelled, "docs/agents/opencode.md §6.3"},
	{"ProviderAuthError", Auth, "docs/agents/opencode.md §6.3"},
	{"ContextOverflowError", Rejected, "docs/agents/opencode.md §6.3"},
	{"ContentFilterError", Rejected, "docs/agents/opencode.md §6.3"},
	{"MessageOutputLengthError", Unknown, "docs/agents/opencode.md §6.3"},
	{"StructuredOutputError", Unknown, "docs/agents/opencode.md §6.3"},
	{"APIError", "", "docs/agents/opencode.md §6.3 (its status and body decide)"},
	{"UnknownError", "", "docs/agents/opencode.md §6.3 (its text decides)"},
	{"FreeUsageLimitError", UsageLimit, "docs/agents/opencode.md §9.4"},
	{"GoUsageLimitError", UsageLimit, "docs/agents/opencode.md §9.4"},
	{"invalid_prompt", Rejected, "docs/agents/opencode.md §6.3"},
	// Kimi Code's error codes and names (docs/agents/kimi.md A3).
	{"APIProviderQuotaExhaustedError", UsageLimit, "docs/agents/kimi.md A3"},
	{"provider.auth_error", Auth, "docs/agents/kimi.md A3"},
	{"auth.*", Auth, "docs/agents/kimi.md A3"},
	{"provider.rate_limit", ProviderError, "docs/agents/kimi.md A3"},
	{"provider.overloaded", ProviderError, "docs/agents/kimi.md A3"},
	{"provider.connection_error", ProviderError, "docs/agents/kimi.md A3"},
	{"provider.api_error", "", "docs/agents/kimi.md A3 (its status decides)"},
	{"context.overflow", Rejected, "docs/agents/kimi.md A3"},
	{"provider.filtered", Rejected, "docs/agents/kimi.md A3"},
	{"loop.max_steps_exceeded", Unknown, "docs/agents/kimi.md A3"},
	{"APIStatusError", "", "docs/agents/kimi.md A3, B4 (its status decides)"},
	{"APIProviderRateLimitError", ProviderError, "docs/agents/kimi.md A3 (seen: samples/kimi)"},
	{"APIProviderOverloadedError", ProviderError, "docs/agents/kimi.md A3 (seen: samples/kimi)"},
	{"LoopError", "", "docs/agents/kimi.md A3 (seen: samples/kimi; its code decides)"},
	// kimi-cli's error types (docs/agents/kimi.md B4).
	{"APIConnectionError", ProviderError, "docs/agents/kimi.md B4"},
	{"APITimeoutError", ProviderError, "docs/agents/kimi.md B4"},
	{"APIEmptyResponseError", ProviderError, "docs/agents/kimi.md B4"},
	// GitHub Copilot CLI's session.error errorType and errorCode (docs/agents/copilot.md §4).
	{"query", "", "docs/agents/copilot.md §4 (a generic category: its status and message decide)"},
	{"authentication", Auth, "docs/agents/copilot.md §4"},
	{"authorization", Auth, "docs/agents/copilot.md §4"},
	{"quota", UsageLimit, "docs/agents/copilot.md §4"},
	{"context_limit", Rejected, "docs/agents/copilot.md §4"},
	{"policy", Rejected, "docs/agents/copilot.md §4"},
	{"session_quota_exceeded", UsageLimit, "docs/agents/copilot.md §4"},
	{"billing_not_configured", UsageLimit, "docs/agents/copilot.md §4"},
	{"user_weekly_rate_limited", UsageLimit, "docs/agents/copilot.md §4"},
	{"user_global_rate_limited", UsageLimit, "docs/agents/copilot.md §4"},
	{"user_model_rate_limited", UsageLimit, "docs/agents/copilot.md §4"},
	{"rate_limited", ProviderError, "docs/agents/copilot.md §4"},
	// Muse's TurnErrorKind (docs/agents/muse.md A3).
	{"authRequired", Auth, "docs/agents/muse.md A3"},
	{"modelError", "", "docs/agents/muse.md A3 (its text decides)"},
	{"configError", Rejected, "github.com/meta-models/muse-code-sdk schema/msp/msp.d.ts (TurnErrorKind)"},
}

// failurePhrase is wording that names one cause, and the class it gives.
type failurePhrase struct {
	Class   Class
	Pattern string
	Source  string
	re      *regexp.Regexp
}

// failurePhrases are the phrases, a usage limit's first: a record that
// speaks of a limit, a quota, a plan, a spend cap, credit or billing is
// never a provider error.
var failurePhrases = []failurePhrase{
	{Class: UsageLimit, Pattern: `\b(?:usage|session|weekly|monthly|daily|5[- ]?hour|opus|sonnet|fable|spend(?:ing)?|plan|billing|quota|your|account|team|workspace|organization) limits?\b`, Source: "github.com/anthropics/claude-code/issues/10333, /55876; github.com/continuedev/continue/issues/10373"},
	{Class: UsageLimit, Pattern: `(?:^|\b)limits? (?:reached|exhausted|exceeded)\b`, Source: "github.com/anthropics/claude-code/issues/13632, /7550"},
	{Class: UsageLimit, Pattern: `\bquota\b|insufficient[_ ]quota|exceeded[_ ]current[_ ]quota`, Source: "github.com/openai/codex/issues/17042; platform.openai.com/docs/guides/error-codes"},
	{Class: UsageLimit, Pattern: `\bcredits?\b|\bbilling\b|\bbalance is too low\b|\binsufficient (?:account )?(?:funds|balance)\b|\badd funds\b|\bpayment required\b`, Source: "github.com/anthropics/claude-code/issues/4208, /867; github.com/Alishahryar1/free-claude-code/issues/772"},
	{Class: UsageLimit, Pattern: `\bsubscription (?:is )?required\b|\bneed a \S+ subscription\b|\bupgrade (?:to (?:pro|plus|max|team|a paid)|your plan)\b|\bplan quota\b|\bwith your \S+ plan\b`, Source: "github.com/openai/codex/issues/3899, /2004; github.com/Wei-Shaw/sub2api/issues/4069"},
	{Class: UsageLimit, Pattern: `\btokens? per day\b|\brequests? per day\b|\b(?:tpd|rpd)\b`, Source: "github.com/MoonshotAI/kimi-cli/issues/1599"},
	{Class: Auth, Pattern: `\b(?:invalid|incorrect|missing|no) (?:x-)?api[ _-]?key\b|\bapi key (?:is )?(?:invalid|required|missing)\b|\brun /login\b|\bnot logged in\b|\blog ?in (?:expired|required)\b|\boauth (?:access )?token (?:has )?(?:expired|revoked)\b|\bauthentication (?:failed|required)\b|\bunauthori[sz]ed\b|\btoken has been invalidated\b|\bsign(?:ing)? in again\b|\bre-?authenticate\b|\binvalid auth(?:entication)? token\b|\bfailed to authenticate\b|^forbidden:|\baccess denied\b|\binvalid (?:\w+ )?(?:token|credentials?)\b|\borganization (?:has been|is) disabled\b|\bhas disabled \S+ (?:\S+ )?access\b|\baccount (?:has been|is) (?:disabled|suspended)\b|\bfailed to refresh (?:the )?token\b|\brefresh[_ ]token\b`, Source: "github.com/anthropics/claude-code/issues/6270, /9694, /19028, /83901; github.com/openai/codex/issues/7362, /6028"},
	{Class: Rejected, Pattern: `\b(?:prompt|input|message|request|context|conversation|content)(?: is)? too (?:long|large)\b|\bcontext[ _-]?(?:length|window)[ _-]?exceeded\b|\bmaximum (?:prompt|context) length\b|\bcontent[ _-]?filter|\bunknown model\b|\bmodel[ _]not[ _]found\b|\binvalid[ _]request\b|^prompt is too long|\bcontext (?:length|window) (?:exceeded|is exceeded)|\bmaximum context length\b|\bbad request\b|\bis not supported\b|\bunsupported (?:\w+ )?model\b|\bmodel \S+ (?:does not exist|not found)\b|\binvalid run configuration\b|\bsupports at most\b`, Source: "github.com/anomalyco/opencode/issues/2764; docs/agents/claude.md §4.3"},
	{Class: ProviderError, Pattern: `\boverload(?:ed)?\b|\bhigh demand\b|\bat capacity\b|\bqueue is full\b|\bserver is (?:busy|temporarily limiting requests)\b|\btemporarily (?:unavailable|rate-limited|overloaded)\b`, Source: "github.com/anthropics/claude-code/issues/39745; github.com/MoonshotAI/kimi-cli/issues/2209"},
	{Class: ProviderError, Pattern: `\btimed? ?out\b|\btimeout\b|\babort(?:ed)?\b|\bstall(?:ed)?\b|\bstream (?:disconnected|idle|closed)\b|\bconnection (?:error|closed|reset|refused|lost|failed|failure)\b|\bdisconnect(?:ed)?\b|\beconnreset\b|\betimedout\b|\bsocket hang up\b|\bfetch failed\b|\bnetwork error\b|\berror sending request\b|\bcannot connect\b|\bcould not connect\b|\bupstream connect error\b`, Source: "github.com/anthropics/claude-code/issues/2728, /6596; github.com/openai/codex/issues/41895"},
	{Class: ProviderError, Pattern: `\binternal server error\b|\bserver[ _]error\b|\bservice unavailable\b|\bbad gateway\b|\bgateway timeout\b|\btoo many requests\b|\brate[ _-]?limit(?:ed)?\b|\bper minute\b|\bmax rpm\b|\bexceeded retry limit\b|\btry again (?:later|in a moment|shortly)\b|\bretry shortly\b`, Source: "github.com/openai/codex/issues/12675; github.com/MoonshotAI/kimi-cli/issues/907; github.com/cline/cline/issues/4826"},
}

// The patterns are matched against the lower-cased text: a pattern with
// an upper-case letter other than a class (\S, \W) would never match.
func init() {
	for i := range failurePhrases {
		failurePhrases[i].re = regexp.MustCompile(failurePhrases[i].Pattern)
	}
}

// failureTypeIndex finds a type by its name; failureTypePrefixes are the
// ".*" rows.
var failureTypeIndex, failureTypePrefixes = func() (map[string]failureType, []failureType) {
	m := map[string]failureType{}
	var prefixes []failureType
	for _, t := range failureTypes {
		if p, ok := strings.CutSuffix(t.Name, "*"); ok {
			prefixes = append(prefixes, failureType{p, t.Class, t.Source})
			continue
		}
		m[t.Name] = t
	}
	return m, prefixes
}()

// lookupFailureType finds a code in the table: as written, in snake_case
// (Codex's camelCase "usageLimitExceeded"), or by a prefix row. Names are
// matched with their case: Google's INTERNAL is not Kimi Code's internal.
func lookupFailureType(name string) (failureType, bool) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return failureType{}, false
	}
	if t, ok := failureTypeIndex[name]; ok {
		return t, true
	}
	if t, ok := failureTypeIndex[codexSnake(name)]; ok {
		return t, true
	}
	for _, p := range failureTypePrefixes {
		if strings.HasPrefix(name, p.Name) {
			return p, true
		}
	}
	return failureType{}, false
}
