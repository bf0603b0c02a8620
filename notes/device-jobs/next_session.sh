# Proposed first calls of the next session (written at the end of session 8), one after the
# other on the warm machine:
#   source .devkit/setup.sh && bash notes/device-jobs/next_session.sh 1   (then 2)
# 1: every GPU test in one run (session 8 ran only those of its changes) while llama.cpp builds.
# 2: one Q4_0 request, all three engines, and benchmarks/ab.py --one-rope against the default,
#    alternating (the token is mostly MLX's per-kernel cost now: one launch fewer per layer).
export VEXEL_CACHE=/tmp/vx
case "$1" in
1)
  mkdir -p /tmp/lc
  (bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
  timeout 400 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
  for t in test_compiled_decode test_attention_kernels test_attention_backends test_engine; do
    timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line tests/$t.py 2>&1 | tail -2
  done
  wait
  echo "llama.cpp build rc $(cat /tmp/lc/built)"
  ;;
2)
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
  for round in 1 2; do
    timeout 60 python3 benchmarks/ab.py --one-rope $B --trace-steps $OUT/steps-one-rope-$round.jsonl 2>&1 | grep -E "generated tok/s|rror" | sed 's/^/one rope: /'
    timeout 60 vexel $B 2>&1 | grep -E "generated tok/s|rror" | sed 's/^/default: /'
  done
  python3 benchmarks/step_summary.py $OUT/steps-*.jsonl
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log
  ;;
shmem)
  # Does MLX 0.32.4 pass cuda_kernel's shared_memory through? (MLX's source seen in session 8
  # passed 0 for kernels made from Python.) Dynamic shared memory past 48 KiB would let
  # gemv_int8 stage whole rows with 8 warps and 3-4 stages (the sweep's 48 KiB limit).
  python3 - <<'PY'
import mlx.core as mx
src = """
  extern __shared__ float buf[];
  int i = threadIdx.x;
  for (int j = i; j < N; j += blockDim.x) buf[j] = float(j);
  __syncthreads();
  if (i == 0) { float s = 0; for (int j = 0; j < N; ++j) s += buf[j]; out[0] = s; }
"""
n = 24 * 1024  # floats: 96 KiB
try:
    k = mx.fast.cuda_kernel(name="vx_dyn_smem", input_names=["x"], output_names=["out"],
                            source=src, shared_memory=4 * n)
    y = k(inputs=[mx.zeros((1,))], template=[("N", n)], grid=(32, 1, 1), threadgroup=(32, 1, 1),
          output_shapes=[(1,)], output_dtypes=[mx.float32])[0]
    want = n * (n - 1) / 2  # float32 sums round: agree to 1e-4
    print("dynamic shared memory 96 KiB works:", abs(float(y[0]) - want) < 1e-4 * want)
except Exception as e:
    print("dynamic shared memory 96 KiB fails:", str(e)[:200])
PY
  ;;
esac
