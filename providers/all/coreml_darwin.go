//go:build coreml

package all

import _ "github.com/svc-dev/svc/providers/coreml"
