package wrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"nudge/internal/echo"
	"nudge/internal/private"
	"nudge/internal/usersock"
)

// Reasons a wrapper does not take a request. Client errors wrap one of them.
var (
	// ErrNotRunning: no wrapper answers on the socket.
	ErrNotRunning = errors.New("nudge wrap is not running")
	// ErrChildGone: the wrapper's command has exited.
	ErrChildGone = errors.New("the wrapped command has exited")
	// ErrOtherChild: the wrapper runs another process than the one asked for.
	ErrOtherChild = errors.New("the wrapper runs another process")
	// ErrInUse: the person has keys unsent or pressed one moments ago;
	// nothing was typed.
	ErrInUse = errors.New("the person is typing in the wrapped terminal")
)

// Info is what a wrapper tells about itself.
type Info struct {
	PID      int       `json:"pid"`       // the wrapper
	ChildPID int       `json:"child_pid"` // the command it runs, leader of the terminal's session
	TTY      string    `json:"tty"`       // the child's terminal, e.g. "/dev/pts/4"
	Command  []string  `json:"command"`
	Dir      string    `json:"dir"` // the working folder the command started in
	Started  time.Time `json:"started"`
	// BracketedPaste: the child switched bracketed paste on, so typed text
	// is sent between ESC[200~ and ESC[201~.
	BracketedPaste bool `json:"bracketed_paste"`
	// LastKey is when the person last pressed a key (zero: not yet);
	// Unsent, that they typed something since they last pressed Enter.
	LastKey time.Time `json:"last_key,omitzero"`
	Unsent  bool      `json:"unsent,omitempty"`
}

// typeRequest asks the wrapper to type Text then Enter into ChildPID's
// terminal, unless the person pressed a key within QuietFor or has keys
// unsent. Enter waits Settle once the text shows: an agent that takes an
// Enter soon after a paste as a new line needs it (classify.Agent.PasteSettle).
type typeRequest struct {
	ChildPID int           `json:"child_pid"`
	Text     string        `json:"text"`
	QuietFor time.Duration `json:"quiet_for"`
	Settle   time.Duration `json:"settle,omitempty"`
}

// maxText bounds a typed text.
const maxText = 1 << 20

// maxSettle bounds the wait before Enter, in which the person's keys wait.
const maxSettle = 2 * time.Second

// maxTypeBody bounds a type request: JSON may spell each byte of the text
// in up to six ("\u001b").
const maxTypeBody = 6*maxText + 1024

// Dir is the folder of the wrappers' sockets in dataDir: user-only, one
// socket per wrapper named after its pid.
func Dir(dataDir string) string { return filepath.Join(dataDir, "wrap") }

// SocketPath is the socket of the wrapper with process id pid.
func SocketPath(dataDir string, pid int) string {
	return filepath.Join(Dir(dataDir), strconv.Itoa(pid)+".sock")
}

// Sockets lists the wrappers' sockets in dataDir. The folder must belong
// to this user and be closed to everyone else, else it is not trusted.
// No folder means no wrapper has run: the error wraps fs.ErrNotExist.
func Sockets(dataDir string) ([]string, error) {
	dir := Dir(dataDir)
	if err := userOnly(dir); err != nil {
		return nil, err
	}
	socks, err := filepath.Glob(filepath.Join(dir, "*.sock"))
	if err != nil {
		return nil, fmt.Errorf("wrapper sockets in %s: %w", dir, err)
	}
	return slices.DeleteFunc(socks, func(s string) bool { _, ok := socketPID(s); return !ok }), nil
}

// socketPID is the pid of the wrapper whose socket is at path,
// "<pid>.sock"; a name of another form (the one a socket is made under
// before it is renamed into place, usersock.Listen) is no wrapper's.
func socketPID(path string) (int, bool) {
	pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(path), ".sock"))
	return pid, err == nil && pid > 0
}

// userOnly checks that dir is a folder of this user that nobody else can
// enter.
func userOnly(dir string) error {
	fi, err := ownFolder(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("wrapper folder %s is open to other users (mode %v)", dir, fi.Mode().Perm())
	}
	return nil
}

// ownFolder checks that dir is a folder (not a link) of this user.
func ownFolder(dir string) (fs.FileInfo, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("wrapper folder: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return nil, fmt.Errorf("wrapper folder %s is not a folder", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return nil, fmt.Errorf("wrapper folder %s belongs to another user", dir)
	}
	return fi, nil
}

// prepareDir creates the sockets' folder user-only in a data folder of
// this user alone, closes it if it was left open, and removes the sockets
// of wrappers that no longer run.
func prepareDir(dataDir string, log *slog.Logger) error {
	if err := private.Folder("data folder", dataDir); err != nil {
		return err
	}
	dir := Dir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("wrapper folder: %w", err)
	}
	fi, err := ownFolder(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("wrapper folder: %w", err)
		}
	}
	socks, _ := Sockets(dataDir)
	for _, s := range socks {
		if pid, _ := socketPID(s); syscall.Kill(pid, 0) == syscall.ESRCH {
			log.Info("removing the socket of a wrapper that no longer runs", "socket", s)
			_ = os.Remove(s)
		}
	}
	return nil
}

// keyboard is what the socket's handlers need of the running session.
type keyboard interface {
	info() Info
	// typeText types text then Enter for childPID, or says why not
	// (ErrChildGone, ErrOtherChild, ErrInUse).
	typeText(childPID int, text string, quietFor, settle time.Duration) error
}

// serve answers requests on ln until the returned stop is called; stop
// lets the requests in progress finish, then removes the socket at path. The server's own complaints go to log,
// never to the person's terminal.
func serve(ln net.Listener, path string, k keyboard, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /who", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(k.info())
	})
	mux.HandleFunc("POST /type", func(w http.ResponseWriter, r *http.Request) {
		var req typeRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxTypeBody)).Decode(&req); err != nil {
			http.Error(w, "bad type request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if req.Text == "" || len(req.Text) > maxText {
			http.Error(w, fmt.Sprintf("text must be 1 to %d bytes", maxText), http.StatusBadRequest)
			return
		}
		err := k.typeText(req.ChildPID, req.Text, req.QuietFor, req.Settle)
		switch {
		case err == nil:
			w.WriteHeader(http.StatusNoContent)
		case errors.Is(err, ErrInUse):
			http.Error(w, err.Error(), http.StatusLocked)
		case errors.Is(err, ErrChildGone):
			http.Error(w, err.Error(), http.StatusGone)
		case errors.Is(err, ErrOtherChild):
			http.Error(w, err.Error(), http.StatusConflict)
		default:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		// Shutdown, not Close: a text typed just before the command exited
		// still gets its answer, so it is not reported as undelivered.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = os.Remove(path)
	}
}

// Client talks to one wrapper over its socket.
type Client struct {
	socket string
	http   *http.Client
}

// NewClient returns a client for the wrapper listening on socket. Its
// answers may take echo.Wait longer than the 5 s it is given otherwise: a
// type request waits for the text to show before Enter.
func NewClient(socket string) *Client {
	return &Client{socket: socket, http: usersock.Client(socket, 5*time.Second+echo.Wait)}
}

// Who asks the wrapper what it runs.
func (c *Client) Who(ctx context.Context) (Info, error) {
	var info Info
	return info, c.do(ctx, http.MethodGet, "/who", nil, &info)
}

// Type asks the wrapper to type text then Enter into its terminal, if it
// still runs childPID and the person pressed no key within quietFor and
// left none unsent.
func (c *Client) Type(ctx context.Context, childPID int, text string, quietFor, settle time.Duration) error {
	return c.do(ctx, http.MethodPost, "/type", typeRequest{ChildPID: childPID, Text: text, QuietFor: quietFor, Settle: settle}, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("wrapper %s%s: %w", c.socket, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://wrap"+path, body)
	if err != nil {
		return fmt.Errorf("wrapper %s%s: %w", c.socket, path, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return fmt.Errorf("%w (%s): %w", ErrNotRunning, c.socket, err)
		}
		return fmt.Errorf("wrapper %s%s: %w", c.socket, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		err := fmt.Errorf("wrapper %s%s: %s: %s", c.socket, path, resp.Status, bytes.TrimSpace(msg))
		switch resp.StatusCode {
		case http.StatusGone:
			return fmt.Errorf("%w: %w", ErrChildGone, err)
		case http.StatusConflict:
			return fmt.Errorf("%w: %w", ErrOtherChild, err)
		case http.StatusLocked:
			return fmt.Errorf("%w: %w", ErrInUse, err)
		}
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("wrapper %s%s: %w", c.socket, path, err)
	}
	return nil
}
