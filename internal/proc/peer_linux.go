package proc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// PeerUID returns the user id that owns the other end of a TCP connection
// on this machine: the socket at peer, connected to local. The kernel's
// socket table says (sock_diag, as `ss -e` reads it), asked for that one
// socket; a peer it does not hold (another machine, another network
// namespace) is an error wrapping fs.ErrNotExist.
func PeerUID(local, peer netip.AddrPort) (int, error) {
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	family := byte(unix.AF_INET)
	if peer.Addr().Is6() {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("socket table: %w", err)
	}
	defer unix.Close(fd)
	// struct nlmsghdr, then struct inet_diag_req_v2 (linux/inet_diag.h):
	// family, protocol, ext, pad, states, then the socket's id: ports
	// and addresses in network order, interface, and no cookie.
	const hdr, req = 16, 56
	msg := make([]byte, hdr+req)
	binary.NativeEndian.PutUint32(msg[0:], hdr+req)
	binary.NativeEndian.PutUint16(msg[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST)
	r := msg[hdr:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], ^uint32(0))
	binary.BigEndian.PutUint16(r[8:], peer.Port())
	binary.BigEndian.PutUint16(r[10:], local.Port())
	putAddr(r[12:28], peer.Addr())
	putAddr(r[28:44], local.Addr())
	binary.NativeEndian.PutUint32(r[48:], ^uint32(0))
	binary.NativeEndian.PutUint32(r[52:], ^uint32(0))
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("socket table: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("socket table: %w", err)
	}
	buf = buf[:n]
	if len(buf) < hdr {
		return 0, errors.New("socket table: short answer")
	}
	switch binary.NativeEndian.Uint16(buf[4:]) {
	case unix.NLMSG_ERROR:
		if len(buf) >= hdr+4 {
			if errno := -int32(binary.NativeEndian.Uint32(buf[hdr:])); errno != 0 {
				return 0, fmt.Errorf("socket table: peer %s: %w", peer, syscall.Errno(errno))
			}
		}
		return 0, errors.New("socket table: no answer")
	case unix.SOCK_DIAG_BY_FAMILY:
		// struct inet_diag_msg: family, state, timer, retrans, the id
		// (48 bytes), expires, rqueue, wqueue, uid, inode.
		const uidAt = hdr + 4 + 48 + 12
		if len(buf) < uidAt+4 {
			return 0, errors.New("socket table: short answer")
		}
		return int(binary.NativeEndian.Uint32(buf[uidAt:])), nil
	}
	return 0, errors.New("socket table: unexpected answer")
}

// putAddr writes a as inet_diag_sockid keeps it: 4 or 16 bytes in network
// order.
func putAddr(b []byte, a netip.Addr) {
	if a.Is4() {
		v := a.As4()
		copy(b, v[:])
		return
	}
	v := a.As16()
	copy(b, v[:])
}
