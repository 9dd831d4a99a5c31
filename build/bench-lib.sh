# Shell helpers of make bench's scripts (sourced; bash). The caller sets
# SVC (and GO and OUT where used), defines die, and keeps its
# started processes in CHILDREN (stopped by bench_cleanup, installed as the
# EXIT trap).

CHILDREN=()
bench_cleanup() {
	local p
	for p in ${CHILDREN[@]+"${CHILDREN[@]}"}; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null
			wait "$p" 2>/dev/null
		fi
	done
}

# run CMD...: run CMD in the background and wait for it, so that Ctrl-C or
# SIGTERM reaches the caller's trap at once (and the trap stops CMD).
run() {
	"$@" &
	local pid=$!
	CHILDREN+=("$pid")
	wait "$pid"
}

# start_server OUTFILE ARGS...: svc serve ARGS on 127.0.0.1 and a free
# port, with SERVER_ENV (NAME=VALUE words) in its environment and run
# through SERVER_WRAP (a command prefix that execs its arguments, such as
# "taskset -c 0"); sets SERVER_PID and SERVER_URL. The server's log goes to
# OUTFILE.err.
start_server() {
	local out=$1 i
	shift
	# shellcheck disable=SC2086 # SERVER_ENV and SERVER_WRAP are lists of words
	env ${SERVER_ENV:-} ${SERVER_WRAP:-} "$SVC" serve "$@" --host 127.0.0.1 --port 0 >"$out" 2>"$out.err" &
	SERVER_PID=$!
	CHILDREN+=("$SERVER_PID")
	SERVER_URL=
	for i in $(seq 1 300); do
		SERVER_URL=$(awk '$1 == "URL" {print $2; exit}' "$out")
		[ -n "$SERVER_URL" ] && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench: svc serve $* did not start: $(tail -c 500 "$out.err")" >&2
	stop_server
	return 1
}

# stop_server: SIGTERM to the server, wait for it to drain and exit.
stop_server() {
	kill -TERM "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
}

# proc_ticks PID: sets TICKS to the process's CPU time (utime + stime, in
# clock ticks, all threads). Builtins only, so it forks nothing: the shell's
# 'times' (children's CPU) stays exact around it.
proc_ticks() {
	local line
	TICKS=0
	read -r line <"/proc/$1/stat" 2>/dev/null || return 0
	line=${line##*) }
	# shellcheck disable=SC2206 # the fields of /proc/PID/stat
	local f=($line)
	TICKS=$((f[11] + f[12]))
}

# proc_sched PID: sets SCHED to "RUN_NS WAIT_NS SLICES THREADS", the sums
# over the process's threads of /proc/PID/task/TID/schedstat: time on a
# CPU, time runnable but waiting for one, and time slices. Threads that
# ended before the call are not counted. Builtins only.
proc_sched() {
	local f run=0 wait=0 slices=0 n=0 a b c
	for f in /proc/"$1"/task/*/schedstat; do
		read -r a b c <"$f" 2>/dev/null || continue
		run=$((run + a)) wait=$((wait + b)) slices=$((slices + c)) n=$((n + 1))
	done
	SCHED="$run $wait $slices $n"
}

# proc_kib PID FIELD: sets KIB to FIELD (VmRSS, VmHWM) of /proc/PID/status
# in KiB. Builtins only.
proc_kib() {
	local k v _
	KIB=0
	while read -r k v _; do
		if [ "$k" = "$2:" ]; then
			KIB=$v
			return 0
		fi
	done <"/proc/$1/status"
	return 1
}

# children_cpu FILE: the children's user + system seconds in the output of
# the shell's 'times' (second line, "0m1.234s 0m0.056s").
children_cpu() {
	awk 'NR == 2 {
		s = 0
		for (i = 1; i <= 2; i++) { t = $i; m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); s += m * 60 + t }
		print s
	}' "$1"
}

# with_cpu CPUFILE CMD...: run CMD (the load generator) while the server
# SERVER_PID runs, and write to CPUFILE the wall time and the CPU seconds
# the server and CMD used meanwhile (server from /proc/PID/stat, CMD from
# the shell's 'times': CMD must be the only child that ends in the window).
# Returns CMD's status.
with_cpu() {
	local file=$1 t0 t1 k0 k1 status hz
	shift
	hz=${CLK_TCK:-100}
	t0=$EPOCHREALTIME
	proc_ticks "$SERVER_PID"
	k0=$TICKS
	times >"$file.times0"
	run "$@"
	status=$?
	times >"$file.times1"
	proc_ticks "$SERVER_PID"
	k1=$TICKS
	t1=$EPOCHREALTIME
	awk -v k0="$k0" -v k1="$k1" -v hz="$hz" -v t0="$t0" -v t1="$t1" \
		-v b0="$(children_cpu "$file.times0")" -v b1="$(children_cpu "$file.times1")" 'BEGIN {
		printf "{\"wall_s\": %.3f, \"server_cpu_s\": %.2f, \"client_cpu_s\": %.3f}\n", t1 - t0, (k1 - k0) / hz, b1 - b0
	}' >"$file"
	rm -f "$file.times0" "$file.times1"
	return "$status"
}

# metrics URL: GET URL/metrics as the Prometheus text exposition.
metrics() {
	local hostport=${1#http://} fd
	exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport##*:}" || return 1
	printf 'GET /metrics HTTP/1.0\r\nHost: %s\r\nAccept: text/plain\r\n\r\n' "$hostport" >&"$fd"
	cat <&"$fd"
	exec {fd}<&-
}

# find_lib: sets LIB to the ONNX Runtime library beside $SVC (make build
# puts it in lib/), or dies.
find_lib() {
	local f
	LIB=
	for f in "$(dirname "$SVC")"/lib/libonnxruntime.so "$(dirname "$SVC")"/lib/libonnxruntime.dylib; do
		[ -e "$f" ] && LIB=$f && return 0
	done
	die "no ONNX Runtime library in $(dirname "$SVC")/lib: run 'make build'"
}

# ensure_rawbench: sets RAWBENCH to $OUT/bench.test, the test binary of
# cmd/internal/bench (BenchmarkRaw: ONNX Runtime in process; TestRawBodies:
# svc bench's request bodies as files), building it with $GO when it is
# not there yet. Its flags (-model, -lib, -shape, -modes, -warmup,
# -bodies) go beside the -test. ones.
ensure_rawbench() {
	RAWBENCH=$OUT/bench.test
	[ -x "$RAWBENCH" ] && return 0
	show "$GO test -c -o $RAWBENCH ./cmd/internal/bench"
	"$GO" test -c -o "$RAWBENCH" ./cmd/internal/bench || die "cannot build the test binary of cmd/internal/bench"
}

# raw_bench FILE REPS MODES ARGS...: BenchmarkRaw REPS times, with the
# modes (comma-separated, as -modes takes them) in a different order each
# time (rotated by one), so that drift of the machine's load hits every
# mode alike; ARGS go to the test binary (the -test.benchtime, the model
# flags), prefixed by RAW_WRAP (a command prefix, such as "taskset -c 0").
# The benchmark lines go to FILE, written only when every repetition
# passed; the rest of the output to stderr. Needs RAWBENCH
# (ensure_rawbench).
raw_bench() {
	local file=$1 reps=$2 list=$3 rep i order
	local -a modes
	IFS=, read -r -a modes <<<"$list"
	shift 3
	show "${RAW_WRAP:+$RAW_WRAP }$RAWBENCH -test.run '^\$' -test.bench '^BenchmarkRaw\$' $* -modes $list > $file   # repetitions: $reps, the modes rotated by one in each"
	: >"$file.part"
	for rep in $(seq 0 $((reps - 1))); do
		order=
		for i in "${!modes[@]}"; do
			order+=${order:+,}${modes[$(((i + rep) % ${#modes[@]}))]}
		done
		# shellcheck disable=SC2086 # RAW_WRAP is a list of words
		run ${RAW_WRAP:-} "$RAWBENCH" -test.run '^$' -test.bench '^BenchmarkRaw$' "$@" -modes "$order" >>"$file.part" || {
			echo "raw_bench: $(grep -v '^Benchmark' "$file.part" | tail -n 3)" >&2
			return 1
		}
	done
	mv "$file.part" "$file"
}

# raw_bodies DIR ARGS...: TestRawBodies writes the batch-1 request bodies
# svc bench sends (seed 1) for the model of ARGS (-model, -lib, -shape) to
# DIR as 1.json, 2.json, …, for wrk (build/bench-wrk.lua), after checking
# them against the model. Its output goes to stderr. Needs RAWBENCH
# (ensure_rawbench).
raw_bodies() {
	local dir=$1
	shift
	show "$RAWBENCH -test.run '^TestRawBodies\$' $* -bodies $dir"
	run "$RAWBENCH" -test.run '^TestRawBodies$' "$@" -bodies "$dir" >&2
}

# The PaddleOCR models' input shapes in make bench (the environment may
# override them).
CLS_SHAPE=${CLS_SHAPE:-x=1,3,48,192}
DET_SHAPE=${DET_SHAPE:-x=1,3,224,256}

# paddle_model NAME: sets model (build/models/paddleocr-NAME) and shape
# (CLS_SHAPE or DET_SHAPE) for cls or det, or dies.
paddle_model() {
	case $1 in
	cls) shape=$CLS_SHAPE ;;
	det) shape=$DET_SHAPE ;;
	*) die "unknown model $1 (cls or det)" ;;
	esac
	model=build/models/paddleocr-$1
	[ -f "$model/model.onnx" ] || die "$model/model.onnx missing: run 'make models'"
}

# show CMD...: records a command in $OUT/commands.txt and echoes it.
show() { printf '%s\n' "$*" >>"$OUT/commands.txt"; echo "+ $*" >&2; }

# bench_start NAME: makes $OUT, stops the started processes on exit and
# says NAME was interrupted on Ctrl-C or SIGTERM.
bench_start() {
	mkdir -p "$OUT"
	trap bench_cleanup EXIT
	# shellcheck disable=SC2064 # NAME is fixed now
	trap "echo '$1: interrupted' >&2; exit 130" INT TERM
}
