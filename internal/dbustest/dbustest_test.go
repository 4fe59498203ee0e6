package dbustest

import (
	"testing"

	"github.com/godbus/dbus/v5"
)

func TestRecorderRecordsNotify(t *testing.T) {
	addr := StartBus(t)
	rec := Record(t, addr)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2))}
	var id uint32
	err = obj.Call("org.freedesktop.Notifications.Notify", 0, "app", uint32(0), "", "summary", `body; $HOME "ok"`, []string{}, hints, int32(5000)).Store(&id)
	if err != nil || id != 1 {
		t.Fatalf("Notify = %d, %v", id, err)
	}
	got := rec.Next(t)
	if got.AppName != "app" || got.Summary != "summary" || got.Body != `body; $HOME "ok"` || got.ExpireTimeout != 5000 || got.Hints["urgency"].Value() != byte(2) {
		t.Errorf("recorded %+v", got)
	}
	var name, vendor, version, spec string
	if err := obj.Call("org.freedesktop.Notifications.GetServerInformation", 0).Store(&name, &vendor, &version, &spec); err != nil {
		t.Fatal(err)
	}
	if err := obj.Call("org.freedesktop.Notifications.CloseNotification", 0, id).Err; err != nil {
		t.Fatal(err)
	}
	// A second server cannot take the name.
	if _, err := NewRecorder(addr); err == nil {
		t.Error("a second Recorder owned the name too")
	}
}
