// Command svc serves one ONNX model over HTTP with JSON.
package main

import (
	"context"
	"os"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
}
