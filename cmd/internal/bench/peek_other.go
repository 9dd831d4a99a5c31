//go:build !unix

package bench

import "net"

// peerClosed cannot look without waiting here: closedByPeer peeks with a
// short deadline instead.
func peerClosed(net.Conn) (closed, ok bool) { return false, false }
