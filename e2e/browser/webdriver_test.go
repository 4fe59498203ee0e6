package browser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/testenv"
)

// elementKey names an element reference in the W3C WebDriver protocol.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// chromiumFlags are required on this machine (docs/platform.md §8): as root the
// sandbox cannot start, and without the networking flags Chromium keeps
// dialling out into the closed network.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage", "--window-size=1280,900",
}

// browser is one headless Chromium driven through chromedriver's W3C
// WebDriver HTTP API.
type browser struct {
	t       *testing.T
	base    string // chromedriver's address
	session string
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	chromium := testenv.Need(t, "chromium")
	driver := testenv.Need(t, "chromedriver")
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port), "--log-path="+filepath.Join(dir, "chromedriver.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromedriver: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "chromedriver.log")); err == nil && len(b) < 1<<16 {
				t.Logf("chromedriver log:\n%s", b)
			}
		}
	})
	b := &browser{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	daemontest.Eventually(t, "chromedriver ready", 20*time.Second, func() bool {
		var st struct{ Ready bool }
		return b.raw("GET", "/status", nil, &st) == nil && st.Ready
	})
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":             "chrome",
		"unhandledPromptBehavior": "ignore",
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			"args":   append(append([]string{}, chromiumFlags...), "--user-data-dir="+filepath.Join(dir, "profile")),
		},
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.raw("POST", "/session", caps, &created); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	b.session = created.SessionID
	t.Cleanup(func() { _ = b.raw("DELETE", "/session/"+b.session, nil, nil) })
	return b
}

// raw sends one WebDriver command and decodes its "value" into out.
func (b *browser) raw(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		j, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("webdriver %s %s: %s: %w", method, path, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		_ = json.Unmarshal(env.Value, &e)
		return &driverError{Code: e.Error, Message: e.Message}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Value, out)
}

type driverError struct{ Code, Message string }

func (e *driverError) Error() string { return e.Code + ": " + e.Message }

// do runs a command in the browser session and fails the test on error.
func (b *browser) do(method, path string, in, out any) {
	b.t.Helper()
	if err := b.raw(method, "/session/"+b.session+path, in, out); err != nil {
		b.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
}

func (b *browser) open(url string) {
	b.t.Helper()
	b.do("POST", "/url", map[string]string{"url": url}, nil)
}

func (b *browser) url() string {
	b.t.Helper()
	var u string
	b.do("GET", "/url", nil, &u)
	return u
}

// run executes script in the page and decodes what it returns into out.
func (b *browser) run(script string, out any, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	b.do("POST", "/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// click clicks the element css finds.
func (b *browser) click(css string) {
	b.t.Helper()
	b.onElement(css, "/click", map[string]any{})
}

// press sends keys (WebDriver key codes, "\uE007" for Enter) to the
// element css finds, as a person typing would.
func (b *browser) press(css, keys string) {
	b.t.Helper()
	b.onElement(css, "/value", map[string]any{"text": keys})
}

// onElement sends the element css finds the command at path. A page that
// draws the element anew in between (the sessions list, each second) gets
// the command again on the new one.
func (b *browser) onElement(css, path string, in any) {
	b.t.Helper()
	for try := 1; ; try++ {
		var el map[string]string
		b.do("POST", "/element", map[string]string{"using": "css selector", "value": css}, &el)
		err := b.raw("POST", "/session/"+b.session+"/element/"+el[elementKey]+path, in, nil)
		var de *driverError
		if errors.As(err, &de) && de.Code == "stale element reference" && try < 5 {
			continue
		}
		if err != nil {
			b.t.Fatalf("webdriver %s on %s: %v", path, css, err)
		}
		return
	}
}

// alertOpen reports whether a JavaScript dialog is showing.
func (b *browser) alertOpen() (bool, string) {
	var text string
	err := b.raw("GET", "/session/"+b.session+"/alert/text", nil, &text)
	if de, ok := err.(*driverError); ok && de.Code == "no such alert" {
		return false, ""
	}
	if err != nil {
		b.t.Fatalf("alert: %v", err)
	}
	return true, text
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
