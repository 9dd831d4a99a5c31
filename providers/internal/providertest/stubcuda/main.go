// Command stubcuda writes STUB CUDA libraries for tests on machines without
// an NVIDIA GPU (see providertest.StubCUDA): the sonames and symbols the
// ONNX Runtime CUDA provider library imports, doing nothing and reporting
// no device. Integration tests run it with 'go run'.
//
//	stubcuda -provider build/lib/linux-amd64-cuda/libonnxruntime_providers_cuda.so [-driver] DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/svc-dev/svc/providers/internal/providertest"
)

func main() {
	provider := flag.String("provider", "", "the CUDA provider library whose imports to stub")
	driver := flag.Bool("driver", false, "stub the NVIDIA driver (libcuda.so.1) too: it reports no device")
	flag.Parse()
	if *provider == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: stubcuda -provider LIB [-driver] DIR")
		os.Exit(2)
	}
	built, err := providertest.BuildStubCUDA(flag.Arg(0), *provider, *driver)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stubcuda:", err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(built, " "))
}
