package tray

import (
	"bufio"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"nudge/internal/testenv"
)

// panelConfig is an xfce4-panel with the systray plugin first, so the icon
// sits at (16, 16); it also skips the first-run dialog (docs/platform.md §3).
const panelConfig = `<channel name="xfce4-panel" version="1.0"><property name="configver" type="int" value="2"/><property name="panels" type="array"><value type="int" value="1"/>
  <property name="panel-1" type="empty"><property name="position" type="string" value="p=6;x=0;y=0"/><property name="length" type="uint" value="100"/>
    <property name="position-locked" type="bool" value="true"/><property name="size" type="uint" value="32"/><property name="icon-size" type="uint" value="24"/>
    <property name="plugin-ids" type="array"><value type="int" value="1"/><value type="int" value="2"/></property></property></property>
  <property name="plugins" type="empty"><property name="plugin-1" type="string" value="systray"/><property name="plugin-2" type="string" value="clock"/></property></channel>`

// menuArea is where the opened menu shows, below the 32-pixel panel and
// its border.
var menuArea = image.Rect(0, 40, 420, 200)

// TestTrayScreenshot opens the real menu in xfce4-panel under Xvfb with a
// real click and photographs it: the menu area must show a menu, not an
// empty screen. NUDGE_TRAY_SCREENSHOTS names a folder to keep the PNGs in.
func TestTrayScreenshot(t *testing.T) {
	for _, p := range []string{"Xvfb", "xfce4-panel", "xdotool", "import", "xdpyinfo", "dbus-daemon"} {
		testenv.Need(t, p)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	conf := filepath.Join(home, ".config", "xfce4", "xfconf", "xfce-perchannel-xml")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "xfce4-panel.xml"), []byte(panelConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	display := freeDisplay(t)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_RUNTIME_DIR=" + dir, "NO_AT_BRIDGE=1", "DISPLAY=" + display, "NUDGE_DATA_DIR=" + filepath.Join(dir, "data")}

	startGroup(t, env, nil, "Xvfb", display, "-screen", "0", "1024x600x24", "-nolisten", "tcp")
	eventually(t, "Xvfb answers", func() bool {
		cmd := exec.Command("xdpyinfo")
		cmd.Env = env
		return cmd.Run() == nil
	})
	// The stock session config: the panel needs xfconfd activated.
	var addr string
	startGroup(t, env, func(out io.Reader) {
		addr, _ = bufio.NewReader(out).ReadString('\n')
		addr = strings.TrimSpace(addr)
	}, "dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	startGroup(t, env, nil, "xfce4-panel", "--disable-wm-check")
	eventually(t, "the panel's StatusNotifierWatcher", func() bool {
		var has bool
		return conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has) == nil && has
	})
	w := &world{t: t, home: home, data: filepath.Join(dir, "data"), env: env}
	d := w.start()
	eventually(t, "nudge registered with the panel", func() bool {
		v, err := conn.Object("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher").
			GetProperty("org.kde.StatusNotifierWatcher.RegisteredStatusNotifierItems")
		items, _ := v.Value().([]string)
		return err == nil && len(items) > 0
	})
	eventually(t, "daemon ready", func() bool { _, ok := w.settings(); return ok })
	time.Sleep(time.Second) // the panel draws the icon and the menu it fetched

	keep := os.Getenv("NUDGE_TRAY_SCREENSHOTS")
	if keep == "" {
		keep = dir
	}
	before := shoot(t, env, filepath.Join(keep, "tray-closed.png"))
	run(t, env, "xdotool", "mousemove", "16", "16", "click", "1") // a left click opens the menu
	var after image.Image
	eventually(t, "the menu drawn", func() bool {
		after = shoot(t, env, filepath.Join(keep, "tray-menu-open.png"))
		return variance(after, menuArea) > 100
	})
	if v := variance(before, menuArea); v > 10 {
		t.Fatalf("the menu area shows something (variance %.0f) before the click", v)
	}
	t.Logf("menu area variance %.0f; screenshots in %s", variance(after, menuArea), keep)

	d.Cmd.Process.Signal(syscall.SIGTERM)
	if code := d.Exit(t); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
}

// freeDisplay picks an X display number nobody holds.
func freeDisplay(t *testing.T) string {
	t.Helper()
	for n := 90; n < 200; n++ {
		if !fileExists(fmt.Sprintf("/tmp/.X%d-lock", n)) && !fileExists(fmt.Sprintf("/tmp/.X11-unix/X%d", n)) {
			return fmt.Sprintf(":%d", n)
		}
	}
	t.Fatal("no free X display between :90 and :199")
	return ""
}

// startGroup starts a program in its own process group, which the test's
// end stops; onStdout reads its first output when given.
func startGroup(t *testing.T, env []string, onStdout func(io.Reader), name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out io.ReadCloser
	if onStdout != nil {
		var err error
		if out, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		// A panel whose plugin died can ignore SIGTERM: its group is
		// killed after a grace, so the run does not wait for ever.
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Logf("%s still running 10 s after SIGTERM: killed", name)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	if onStdout != nil {
		onStdout(out)
	}
}

func run(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// shoot photographs the whole screen into path.
func shoot(t *testing.T, env []string, path string) image.Image {
	t.Helper()
	run(t, env, "import", "-window", "root", path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// variance is the variance of the grey level over r.
func variance(img image.Image, r image.Rectangle) float64 {
	var sum, sq, n float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			g := (float64(cr) + float64(cg) + float64(cb)) / 3 / 257
			sum, sq, n = sum+g, sq+g*g, n+1
		}
	}
	mean := sum / n
	return sq/n - mean*mean
}
