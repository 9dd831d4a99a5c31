package pipeline

import (
	"testing"

	"go.uber.org/goleak"
)

// The stages' schedules start goroutines; each test closes them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
