package transport

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// dropSYN is a classic BPF socket filter that drops a TCP segment opening a
// connection (SYN without ACK) and keeps every other: on a listening socket
// it stops new handshakes while those under way complete. A socket filter
// on TCP sees the segment from its TCP header; byte 13 holds the flags.
var dropSYN = []unix.SockFilter{
	{Code: unix.BPF_LD | unix.BPF_B | unix.BPF_ABS, K: 13},
	{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: 0x12}, // SYN|ACK
	{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: 0x02, Jt: 0, Jf: 1},
	{Code: unix.BPF_RET | unix.BPF_K, K: 0},
	{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff},
}

// refuseNew makes the listening socket ignore new connections: their SYNs
// are dropped, so the kernel queues no more, and the client's retry (a
// second later) finds the port closed. The filter belongs to the socket,
// shared by every process that holds it.
func refuseNew(ln *net.TCPListener) error {
	rc, err := ln.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		prog := unix.SockFprog{Len: uint16(len(dropSYN)), Filter: &dropSYN[0]}
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &prog)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("attach a socket filter: %w", err)
	}
	return nil
}
