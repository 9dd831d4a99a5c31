//go:build !linux

package transport

import "net"

// refuseNew cannot stop a listening socket's handshakes here.
func refuseNew(*net.TCPListener) error {
	return errRefuseUnsupported
}
