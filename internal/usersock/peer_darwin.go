package usersock

import "golang.org/x/sys/unix"

// socketPeerUID reads the peer's user id of the socket fd
// (LOCAL_PEERCRED, the getpeereid(3) of macOS).
func socketPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
