#!/usr/bin/env bash
# The GPU check, one script for a machine with an NVIDIA GPU, CuPy and (optionally) PyTorch CUDA:
#   1. the environment (GPU, driver, Python, NumPy, CuPy, PyTorch);
#   2. python -m pytest tests/gpu (under a time limit; parallel when pytest-xdist is there);
#   3. bench/gpu_bench.py (fgrad vs PyTorch CUDA: the W2 training step, big elementwise ops, matmul);
#   4. a Markdown summary on stdout, and with $OUT set: $OUT/gpu_check.md, $OUT/gpu_tests.log,
#      $OUT/gpu_bench.md.
# No install step: run from anywhere, it uses the checkout it lives in (PYTHONPATH=<repo>).
# Exit status: 0 when the tests passed (or all skipped on a machine without a GPU) and the
# benchmark ran; 1 when a test failed, the test run timed out, or every test skipped although
# nvidia-smi shows a GPU; 2 when only the benchmark failed. The summary is printed either way. Budget: under 8 minutes in all (GPU_TEST_TIMEOUT + GPU_BENCH_TIMEOUT + a little).
#
#   bash bench/gpu_check.sh
#   GPU_TEST_TIMEOUT=300 GPU_TEST_WORKERS=8 GPU_BENCH_ARGS=--quick bash bench/gpu_check.sh
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-330}
BENCH_TIMEOUT=${GPU_BENCH_TIMEOUT:-110}
WORKERS=${GPU_TEST_WORKERS:-8}
BENCH_ARGS=${GPU_BENCH_ARGS:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
LOG="$WORK/gpu_tests.log"
BENCH_MD="$WORK/gpu_bench.md"
started=$(date +%s)

echo "## Environment"
gpu_seen=0  # whether the driver shows a GPU: then tests that all skip, or a benchmark without one, fail
if command -v nvidia-smi >/dev/null 2>&1; then
    smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)
    smi_rc=$?
    echo "$smi" | sed 's/^/nvidia-smi: /'
    [ "$smi_rc" -eq 0 ] && [ -n "$smi" ] && gpu_seen=1
else
    echo "nvidia-smi: not found"
fi
"$PY" - <<'EOF'
import platform
import numpy
print(f"python {platform.python_version()} ({platform.machine()}), numpy {numpy.__version__}")
try:
    import cupy
    try:
        n = cupy.cuda.runtime.getDeviceCount()
        print(f"cupy {cupy.__version__}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}, {n} GPU(s)")
    except Exception as e:
        print(f"cupy {cupy.__version__}, but CUDA reports no usable GPU: {type(e).__name__}: {e}")
except ImportError:
    print("cupy: not installed (tests/gpu will skip)")
try:
    import torch
    cuda = f"CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s)" if torch.cuda.is_available() else "no GPU"
    print(f"torch {torch.__version__} ({cuda})")
except ImportError:
    print("torch: not installed (the PyTorch columns and DLPack tests will skip)")
EOF

echo
echo "## tests/gpu (time limit ${TEST_TIMEOUT}s)"
extra=()
if "$PY" -c "import xdist" 2>/dev/null && [ "$WORKERS" -gt 1 ]; then
    extra+=(-n "$WORKERS")
fi
if "$PY" -c "import pytest_timeout" 2>/dev/null; then
    extra+=(--timeout=120)
fi
# -rfEsxX: the reasons of failures, errors, skips and (x)fails in the summary; --durations: what took long
timeout --kill-after=15 "$TEST_TIMEOUT" "$PY" -m pytest -q -rfEsxX --durations=10 -p no:cacheprovider \
    "${extra[@]}" tests/gpu 2>&1 | tee "$LOG"
test_rc=${PIPESTATUS[0]}
summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed|skipped|error|xfailed|deselected)|no tests ran" "$LOG" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
case $test_rc in
    0) test_status="ok" ;;
    124|137) test_status="TIMED OUT after ${TEST_TIMEOUT}s (partial log above)" ;;
    5) if [ "$gpu_seen" -eq 1 ]; then
           test_status="FAILED: the driver shows a GPU but every test skipped (see the reasons above)"
       else
           test_status="skipped: no usable GPU (see the reasons above)"; test_rc=0
       fi ;;
    *) test_status="FAILED (pytest exit $test_rc)" ;;
esac

echo
echo "## Benchmark (time limit ${BENCH_TIMEOUT}s)"
# shellcheck disable=SC2086  # BENCH_ARGS is a list of flags
require=()
[ "$gpu_seen" -eq 1 ] && require=(--require-gpu)
timeout --kill-after=10 "$BENCH_TIMEOUT" "$PY" bench/gpu_bench.py $BENCH_ARGS "${require[@]}" --markdown "$BENCH_MD"
bench_rc=$?
case $bench_rc in
    0) bench_status="ok" ;;
    124|137) bench_status="TIMED OUT after ${BENCH_TIMEOUT}s" ;;
    *) bench_status="FAILED (exit $bench_rc)" ;;
esac

elapsed=$(( $(date +%s) - started ))
report="$WORK/gpu_check.md"
{
    echo "## GPU check summary"
    echo
    echo "| step | status | detail |"
    echo "| --- | --- | --- |"
    echo "| tests/gpu | $test_status | ${summary:-no summary line (see the log)} |"
    echo "| benchmark | $bench_status | bench/gpu_bench.py $BENCH_ARGS |"
    echo "| total | ${elapsed}s | |"
    echo
    if [ -s "$BENCH_MD" ]; then
        cat "$BENCH_MD"
    else
        echo "(the benchmark wrote no table)"
    fi
} > "$report"
echo
cat "$report"

if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
    cp "$report" "$LOG" "$OUT"/ 2>/dev/null
    [ -s "$BENCH_MD" ] && cp "$BENCH_MD" "$OUT"/
fi

if [ "$test_rc" -ne 0 ]; then
    exit 1
fi
if [ "$bench_rc" -ne 0 ]; then
    exit 2
fi
exit 0
