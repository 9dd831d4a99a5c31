package config

import (
	"strings"

	"github.com/svc-dev/svc/providers"
)

// Starter returns the commented configuration file that 'svc init' writes.
// Every key is shown with its default. The provider names and the
// providers section come from the declared providers: each section is the
// provider's own starter snippet (providers.Known.Starter).
func Starter() string { return StarterWith("") }

// StarterWith is Starter with entry, a model's YAML entry indented under
// models: (as 'svc init --model' writes it), at the top of the models
// section; an empty entry leaves the file as Starter writes it.
func StarterWith(entry string) string {
	var users []string
	for _, name := range providers.Names() {
		if k, _ := providers.Info(name); k.UsesDeviceID {
			users = append(users, name)
		}
	}
	deviceUsers := ""
	if len(users) > 0 {
		deviceUsers = " (" + strings.Join(users, ", ") + ")"
	}
	var sections strings.Builder
	for _, k := range providers.KnownProviders() {
		if k.Starter == "" {
			continue
		}
		sections.WriteString("  " + k.Name + ":\n")
		for line := range strings.Lines(strings.TrimRight(k.Starter, "\n") + "\n") {
			if strings.TrimSpace(line) != "" {
				line = "    " + line
			}
			sections.WriteString(line)
		}
	}
	return strings.NewReplacer(
		"@PROVIDER_NAMES@", providers.NameList(),
		"@DEVICE_ID_USERS@", deviceUsers,
		"@PROVIDER_SECTIONS@\n", sections.String(),
		"@MODEL_ENTRY@\n", entry,
	).Replace(starterTemplate)
}

// starterTemplate is the starter file with the provider-dependent parts
// left as @PLACEHOLDERS@.
const starterTemplate = `# svc configuration. Flags given on the command line override these values.
# Sizes take units (512KiB, 16MiB, 2GiB, 1GB); durations take 500ms, 30s, 2m.

# Service name.
name: svc

# Models served by name: 'svc serve iris'. Paths are relative to this file.
models:
@MODEL_ENTRY@
  # iris:
  #   path: models/iris            # a .onnx file or a model directory
  #   version: "1.0"               # shown by /info (default: the model's own)
  #   description: Iris classifier
  #   metadata: {team: ml}         # added to /info metadata
  #   labels:                      # class labels per output, shown by /info
  #     probabilities: [setosa, versicolor, virginica]

serve:
  host: 0.0.0.0          # 127.0.0.1 accepts local connections only
  port: 8080
  grpc_port: 0           # Open Inference Protocol over gRPC; 0 = off (KServe uses 9000, Triton 8001)
  workers: 1             # worker processes, each with its own model copy
  provider: ""           # @PROVIDER_NAMES@; empty = automatic
  shutdown_grace: 30s    # how long in-flight requests may finish on stop
  drain_delay: 0s        # after SIGTERM, keep accepting (not ready) this long while load balancers catch up
  access_log: all        # all, errors (status >= 400), sampled:0.01 (errors + 1% of the rest) or off

runtime:
  library: ""            # path to the ONNX Runtime library; empty = search
  timeout: 0s            # per inference; 0 = none. Past it: 504
  memory_limit: 0        # cap for ONNX Runtime's CPU arena and Go's heap target; 0 = none
  intra_op_threads: 0    # threads inside one operator; 0 = half the cores (at least 1)
  cpu_affinity: off      # --workers N: auto pins each worker to its own cores, or [[0, 1], [2, 3]]
  inter_op_threads: 0    # threads across operators; 0 = ONNX Runtime's default
  spinning: false        # let idle ONNX Runtime threads spin; off leaves the cores to HTTP and JSON work
  graph_optimization: all   # disabled, basic, extended or all
  optimized_model_path: ""  # write the optimized graph here (a cache for inspection)
  profile: ""            # ONNX Runtime profiling: each session writes <profile>_<date>_<time>.json at shutdown
  warmup: true           # one inference on ones before the model reports ready
  release_memory_after: 2s  # give memory back to the OS after this long without requests; 0 = never
  go_procs: 0            # Go processors; 0 = tuned: one per core, one more while runs are long (GOMAXPROCS wins)

limits:
  max_body_size: 16MiB   # largest /predict body; larger: 413

batching:                # merge requests that wait for a busy session into one run
  enabled: true          # only for models whose inputs and outputs all have a dynamic batch dimension
  max_batch_size: 32     # rows in one merged run
  max_queue_delay: 0s    # wait this long for more requests even when idle; 0 = never wait
  adaptive: true         # learn from the runs the batch size (up to max_batch_size) that costs least per row

access:                  # off when empty; /health, /info, /v2 health and metadata, docs stay open
  api_keys_file: ""      # API keys, one per line (# comments); clients send Authorization: Bearer KEY
  api_keys_env: ""       # or an environment variable of comma-separated keys, such as SVC_API_KEYS
  cors:
    allowed_origins: []  # browser origins allowed to call the API, such as https://app.example.com, or '*'
    max_age: 0s          # how long browsers may cache a preflight answer; 0 = the browser's default

providers:
  device_id: 0           # accelerator index@DEVICE_ID_USERS@
@PROVIDER_SECTIONS@
`
