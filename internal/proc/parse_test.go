package proc

import (
	"encoding/binary"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses, as a process may set it.
	line := "4242 (a) (b c)) S 4100 4242 4100 34817 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	s, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := stat{name: "a) (b c)", state: 'S', ppid: 4100, tty: "34817", started: "987654"}
	if s != want {
		t.Errorf("parseStat = %+v, want %+v", s, want)
	}
	if s.gone() {
		t.Error("a sleeping process counts as gone")
	}
	noTTY := strings.Replace(line, " 34817 ", " 0 ", 1)
	if s, err := parseStat([]byte(noTTY)); err != nil || s.tty != "" {
		t.Errorf("tty_nr 0: tty %q, %v; want none", s.tty, err)
	}
	zombie := strings.Replace(line, ")) S ", ")) Z ", 1)
	if s, err := parseStat([]byte(zombie)); err != nil || !s.gone() {
		t.Errorf("zombie: gone = %v, %v", s.gone(), err)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2 3", "4242 (x) S notanumber 1 1 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 5"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func TestParseUIDs(t *testing.T) {
	status := "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n"
	real, eff, err := parseUIDs([]byte(status))
	if err != nil || real != 1000 || eff != 0 {
		t.Errorf("parseUIDs = %d, %d, %v; want 1000, 0", real, eff, err)
	}
	for _, bad := range []string{"Name:\tx\n", "Uid:\t1000\n", "Uid:\tx\ty\n"} {
		if _, _, err := parseUIDs([]byte(bad)); err == nil {
			t.Errorf("parseUIDs(%q) accepted", bad)
		}
	}
}

func TestSplitNUL(t *testing.T) {
	if got := splitNUL([]byte("opencode\x00serve\x00--port\x000\x00")); !reflect.DeepEqual(got, []string{"opencode", "serve", "--port", "0"}) {
		t.Errorf("splitNUL = %q", got)
	}
	if got := splitNUL([]byte("\x00\x00")); got != nil {
		t.Errorf("splitNUL of nothing = %q, want nil", got)
	}
	env := splitNUL([]byte("HOME=/h\x00OPENCODE_SERVER_PASSWORD=a=b\x00OPENCODE=1\x00"))
	if v, ok := Lookup(env, "OPENCODE_SERVER_PASSWORD"); !ok || v != "a=b" {
		t.Errorf("Lookup = %q, %v", v, ok)
	}
	if _, ok := Lookup(env, "OPENCODE_SERVER"); ok {
		t.Error("Lookup matched a prefix of another name")
	}
}

func TestParseListeners(t *testing.T) {
	// Words in host byte order, as the kernel prints them.
	v4 := func(a netip.Addr) string {
		b := a.As4()
		return strings.ToUpper(hex32(binary.NativeEndian.Uint32(b[:])))
	}
	v6 := func(a netip.Addr) string {
		b := a.As16()
		var s string
		for i := 0; i < 16; i += 4 {
			s += strings.ToUpper(hex32(binary.NativeEndian.Uint32(b[i:])))
		}
		return s
	}
	lo, any6, lo6 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::"), netip.MustParseAddr("::1")
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: " + v4(lo) + ":1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 54008 1 0000000000000000 100 0 0 10 0\n" +
		"   1: " + v4(lo) + ":A951 " + v4(lo) + ":1000 01 00000000:00000000 00:00000000 00000000     0        0 54097 1 0000000000000000 100 0 0 10 0\n" +
		"   2: zzzz:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n"
	got := parseListeners([]byte(tcp))
	want := []listener{{inode: 54008, addr: netip.AddrPortFrom(lo, 4096)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tcp: %+v, want %+v (established rows and bad addresses skipped)", got, want)
	}
	tcp6 := "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: " + v6(any6) + ":0FA0 " + v6(any6) + ":0000 0A 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 100 0 0 10 0\n" +
		"   1: " + v6(lo6) + ":1F90 " + v6(any6) + ":0000 0A 00000000:00000000 00:00000000 00000000  1000        0 778 1 0000000000000000 100 0 0 10 0\n"
	got = parseListeners([]byte(tcp6))
	want = []listener{{inode: 777, addr: netip.AddrPortFrom(any6, 4000)}, {inode: 778, addr: netip.AddrPortFrom(lo6, 8080)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tcp6: %+v, want %+v", got, want)
	}
	if sock, ok := socketInode("socket:[54008]"); !ok || sock != 54008 {
		t.Errorf("socketInode = %d, %v", sock, ok)
	}
	for _, bad := range []string{"pipe:[1]", "/dev/null", "socket:[x]", "socket:[12"} {
		if _, ok := socketInode(bad); ok {
			t.Errorf("socketInode(%q) accepted", bad)
		}
	}
}

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i], v = digits[v&0xf], v>>4
	}
	return string(b[:])
}

// kinfoRecord builds one struct kinfo_proc the way the kernel lays it out.
func kinfoRecord(pid, ppid int32, ruid, euid uint32, stat byte, tdev int32, sec int64, usec int32, comm string) []byte {
	r := make([]byte, kinfoSize)
	le := binary.LittleEndian
	le.PutUint64(r[kinfoStartSec:], uint64(sec))
	le.PutUint32(r[kinfoStartUsec:], uint32(usec))
	r[kinfoStat] = stat
	le.PutUint32(r[kinfoPID:], uint32(pid))
	copy(r[kinfoComm:kinfoComm+kinfoCommLen-1], comm)
	le.PutUint32(r[kinfoRUID:], ruid)
	le.PutUint32(r[kinfoUID:], euid)
	le.PutUint32(r[kinfoPPID:], uint32(ppid))
	le.PutUint32(r[kinfoTdev:], uint32(tdev))
	return r
}

func TestParseKinfos(t *testing.T) {
	const sRun = 2
	buf := append(kinfoRecord(501, 1, 501, 501, sRun, 0x10000003, 1796029667, 406000, "opencode"),
		kinfoRecord(777, 501, 502, 501, sZomb, noDev, 1796029000, 7, "a-command-name-longer-than-sixteen")...)
	got, err := parseKinfos(buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []kinfo{
		{pid: 501, ppid: 1, ruid: 501, euid: 501, tty: "268435459", started: "1796029667.406000", name: "opencode"},
		{pid: 777, ppid: 501, ruid: 502, euid: 501, zombie: true, started: "1796029000.000007", name: "a-command-name-l"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseKinfos =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := parseKinfos(buf[:kinfoSize+1]); err == nil {
		t.Error("a torn record was accepted")
	}
	if got, err := parseKinfos(nil); err != nil || len(got) != 0 {
		t.Errorf("empty table: %v, %v", got, err)
	}
}

// procArgsBuffer builds a KERN_PROCARGS2 area: argc, the executable's
// path, alignment NULs, argv, the environment, then the kernel's strings.
func procArgsBuffer(exe string, args, env []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(args)))
	b = append(append(b, exe...), 0)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	for _, s := range append(append([]string{}, args...), env...) {
		b = append(append(b, s...), 0)
	}
	return append(b, "\x00executable_path=/usr/local/bin/opencode\x00ptr_munge=\x00\x00\x00"...)
}

func TestParseProcArgs(t *testing.T) {
	args := []string{"/usr/local/bin/opencode", "serve", "--port", "0", ""}
	env := []string{"HOME=/Users/me", "OPENCODE_SERVER_PASSWORD=s3cret"}
	gotArgs, gotEnv, err := parseProcArgs(procArgsBuffer("/usr/local/bin/opencode", args, env))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotArgs, args) || !reflect.DeepEqual(gotEnv, env) {
		t.Errorf("parseProcArgs = %q, %q; want %q, %q", gotArgs, gotEnv, args, env)
	}
	if _, env, err := parseProcArgs(procArgsBuffer("/bin/sh", []string{"sh"}, nil)); err != nil || env != nil {
		t.Errorf("no environment: %q, %v", env, err)
	}
	for _, bad := range [][]byte{
		nil,                                  // no count
		{1, 0},                               // a torn count
		{0xff, 0xff, 0xff, 0xff, '/', 0},     // a negative count
		{3, 0, 0, 0, '/', 'x', 0, 0, 'a', 0}, // fewer arguments than counted
		{1, 0, 0, 0, '/', 'b', 'i', 'n'},     // the path never ends
	} {
		if args, _, err := parseProcArgs(bad); err == nil {
			t.Errorf("parseProcArgs(%q) = %q, accepted", bad, args)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (a) (b c)) S 4100 4242 4100 34817 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10\n"))
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 5 0 0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseStat(data)
		if err == nil && (s.started == "" || s.tty == "0") {
			t.Errorf("parseStat(%q) = %+v", data, s)
		}
	})
}

func FuzzParseListeners(f *testing.F) {
	f.Add([]byte("  sl  local_address rem_address   st\n   0: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 54008 1\n"))
	f.Add([]byte("   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 0:0 0:0 0 1000 0 778 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range parseListeners(data) {
			if !l.addr.IsValid() {
				t.Errorf("parseListeners(%q) gave an invalid address", data)
			}
		}
	})
}

func FuzzParseKinfos(f *testing.F) {
	f.Add(kinfoRecord(501, 1, 501, 501, 2, 0x10000003, 1796029667, 406000, "opencode"))
	f.Add(make([]byte, 2*kinfoSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := parseKinfos(data)
		if err == nil && len(ks) != len(data)/kinfoSize {
			t.Errorf("%d records from %d bytes", len(ks), len(data))
		}
	})
}

func FuzzParseProcArgs(f *testing.F) {
	f.Add(procArgsBuffer("/usr/local/bin/opencode", []string{"opencode", "serve"}, []string{"A=1"}))
	f.Add([]byte{2, 0, 0, 0, 0, 'a', 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		args, _, err := parseProcArgs(data)
		if err == nil && len(args) != int(binary.LittleEndian.Uint32(data)) {
			t.Errorf("parseProcArgs(%q): %d arguments, count says %d", data, len(args), binary.LittleEndian.Uint32(data))
		}
	})
}
