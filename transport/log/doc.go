// Package log writes svc's log: JSON lines (zap's production keys, the
// time as ISO 8601 in the local zone) through a Writer that puts a
// bounded buffer between the loggers and a destination that may be slow,
// drops lines rather than hold a request up, and writes whole lines at
// most PIPE_BUF at a time to a pipe shared by workers. Its JSONCore writes
// the access log's lines itself, byte for byte as zap would, at a small
// part of zap's cost; transport's AccessLog middleware uses it.
package log
