# Session 8, call C (fresh machine, the session's last): the GPU tests of the final code's
# compiled decode steps (bfloat16 tolerance) and gemv_int8 defaults (long rows now take the
# tilings measured fastest at 4096x14336), then one Q4_0 request beside mlx-lm.
export VEXEL_CACHE=/tmp/vx
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_compiled_decode.py 2>&1 | tail -4
timeout 160 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py -k "int8 and gguf_kernel" 2>&1 | tail -4
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 170 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
