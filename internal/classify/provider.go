package classify

// Which provider a dead turn failed against (docs/behaviour.md §9): the
// provider, endpoint and model an agent's own records name, else the
// provider its registration implies.

// providerTitles are the names people write for the provider ids records
// use; an id not listed is shown as it is.
var providerTitles = map[string]string{
	"anthropic": "Anthropic",
	"openai":    "OpenAI",
	"moonshot":  "Moonshot",
	"xai":       "xAI",
	"meta":      "Meta",
	"bedrock":   "Amazon Bedrock",
	"vertex":    "Google Vertex AI",
	"google":    "Google",
	"github":    "GitHub Copilot",
}

// ProviderTitle is provider id as people write it ("Anthropic").
func ProviderTitle(id string) string {
	if t, ok := providerTitles[id]; ok {
		return t
	}
	return id
}

// Attribute names the provider on ev's failure when the agent's records
// named none: the agent's own (Agent.Provider).
func (a Agent) Attribute(ev *Event) {
	if f := ev.Failure; f != nil && f.Provider == "" {
		f.Provider = a.Provider
	}
}

// on names the provider, endpoint and model a failure happened on, each
// only where a record said it.
func (f *Failure) on(provider, endpoint, model string) {
	if provider != "" {
		f.Provider = provider
	}
	if endpoint != "" {
		f.Endpoint = endpoint
	}
	if model != "" {
		f.Model = model
	}
}

// On says what the failure happened on, in the words of the timeline and
// the Inbox: "on Anthropic, model claude-opus-5-5"; "" when no provider is
// known.
func (f Failure) On() string {
	if f.Provider == "" {
		return ""
	}
	on := "on " + ProviderTitle(f.Provider)
	if f.Endpoint != "" {
		on += " at " + f.Endpoint
	}
	if f.Model != "" {
		on += ", model " + f.Model
	}
	return on
}
