//go:build coreml && darwin

package coreml_test

import (
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/coreml"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

func TestContract(t *testing.T) { providertest.CheckContract(t, coreml.New()) }

func TestUsable(t *testing.T) {
	if err := coreml.New().Usable(providers.Host{LibraryProviders: []string{"CoreMLExecutionProvider", "CPUExecutionProvider"}}); err != nil {
		t.Errorf("not usable: %v", err)
	}
	err := coreml.New().Usable(providers.Host{LibraryProviders: []string{"CPUExecutionProvider"}})
	if err == nil || !strings.Contains(err.Error(), "does not offer CoreMLExecutionProvider") {
		t.Errorf("library without CoreML: %v", err)
	}
}

// The official darwin library offers CoreML, and a session runs with it.
func TestOfficialLibrary(t *testing.T) {
	host := providertest.LoadORT(t)
	if err := coreml.New().Usable(host); err != nil {
		t.Fatalf("CoreML not usable with the official library: %v", err)
	}
}
