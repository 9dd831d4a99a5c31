//go:build unix

package bench

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerClosed looks, without waiting, whether the idle connection c has
// anything to read (the server's end of it, or bytes no request asked
// for): a recv with MSG_PEEK and MSG_DONTWAIT. ok is false where the
// connection has no file descriptor to look at.
func peerClosed(c net.Conn) (closed, ok bool) {
	sc, isSys := c.(syscall.Conn)
	if !isSys {
		return false, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var buf [1]byte
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr = unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return true // never wait for the descriptor to be readable
	})
	if err != nil {
		return true, true
	}
	// Nothing to read: the connection is open and quiet. Anything else
	// (end of stream, stray bytes, an error) is a connection not to send
	// on.
	return !errors.Is(rerr, unix.EAGAIN) && !errors.Is(rerr, unix.EWOULDBLOCK), true
}
