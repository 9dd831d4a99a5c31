package config

// Starter is the commented configuration file that 'svc init' writes. Every
// key is shown with its default.
const Starter = `# svc configuration. Flags given on the command line override these values.
# Sizes take units (512KiB, 16MiB, 2GiB, 1GB); durations take 500ms, 30s, 2m.

# Service name.
name: svc

# Models served by name: 'svc serve iris'. Paths are relative to this file.
models:
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
  workers: 1             # worker processes, each with its own model copy
  provider: ""           # cuda, coreml, rocm, directml, openvino, tensorrt, cpu; empty = automatic
  shutdown_grace: 30s    # how long in-flight requests may finish on stop

runtime:
  library: ""            # path to the ONNX Runtime library; empty = search
  timeout: 0s            # per inference; 0 = none. Past it: 504
  memory_limit: 0        # cap for ONNX Runtime's CPU arena and Go's heap target; 0 = none
  intra_op_threads: 0    # threads inside one operator; 0 = half the cores (at least 1)
  inter_op_threads: 0    # threads across operators; 0 = ONNX Runtime's default
  spinning: false        # let idle ONNX Runtime threads spin; off leaves the cores to HTTP and JSON work
  graph_optimization: all   # disabled, basic, extended or all
  optimized_model_path: ""  # write the optimized graph here (a cache for inspection)
  warmup: true           # one zero-filled inference before the model reports ready

limits:
  max_body_size: 16MiB   # largest /predict body; larger: 413

batching:                # merge requests that wait for a busy session into one run
  enabled: true          # only for models whose inputs and outputs all have a dynamic batch dimension
  max_batch_size: 32     # rows in one merged run
  max_queue_delay: 0s    # wait this long for more requests even when idle; 0 = never wait

providers:
  device_id: 0           # accelerator index (cuda, tensorrt, rocm, directml)
  tensorrt:
    fp16: false
    int8: false
    engine_cache: ""     # directory for built TensorRT engines; empty = off
  openvino:
    device_type: ""      # CPU, GPU, NPU or AUTO; empty = OpenVINO's default
`
