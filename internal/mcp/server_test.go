package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"nudge/internal/classify"
)

// TestToolsNameEveryAgentAndState: a client learns the agents and states
// list_sessions takes from its schema, and the agents from the
// instructions, all from the registries.
func TestToolsNameEveryAgentAndState(t *testing.T) {
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(Options{}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	for _, a := range classify.Agents() {
		if !strings.Contains(cs.InitializeResult().Instructions, a.Title) {
			t.Errorf("the instructions do not name %s", a.Title)
		}
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tool *sdk.Tool) bool { return tool.Name == "list_sessions" })
	if i < 0 {
		t.Fatal("no list_sessions tool")
	}
	raw, err := json.Marshal(tools.Tools[i].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct{ Enum []string }
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if got := schema.Properties["agent"].Enum; !slices.Equal(got, classify.Names()) {
		t.Errorf("agent takes %q, want %q", got, classify.Names())
	}
	if got := schema.Properties["state"].Enum; !slices.Equal(got, stateNames()) || len(got) == 0 {
		t.Errorf("state takes %q, want %q", got, stateNames())
	}
	for _, st := range stateNames() {
		if !strings.Contains(tools.Tools[i].Description, st) {
			t.Errorf("list_sessions' description does not name the state %s", st)
		}
	}
}
