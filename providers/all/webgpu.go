package all

import _ "github.com/svc-dev/svc/providers/webgpu"
