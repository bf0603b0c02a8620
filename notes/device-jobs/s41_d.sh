# Session 41, call D: gemm_blocks (a few activation rows times the file's blocks of any format
# on the tensor cores), not yet run on a GPU: its GPU tests, its kernel table at three
# Llama-3-8B shapes for Q4_K, Q6_K and Q8_0, and the engine on a random Q8_0 Llama-3-8B at 8
# requests of 512 + 128, with it and without it (ab.py --no-gemm-blocks: the float kernel).
# The Q8_0 file is written in the background while the tests run.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s41_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
M=/tmp/vx/random-llama3-8b-q8_0.gguf
python3 -c "from pathlib import Path; from vexel_core.bench.random_model import write_random_model as w; w(Path('$M'), 'llama3-8b', 'q8_0')" \
  > $OUT/model.log 2>&1 &
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu tests/test_gemm_blocks.py \
  > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/tests.txt | cut -c1-240 | head -8
(cd benchmarks && timeout 90 python3 -u gemm_blocks.py --rows 2,8,16 \
  --shapes 4096x4096,28672x4096,4096x14336) > $OUT/kern.txt 2>&1
echo "== gemm_blocks.py rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/kern.txt | tail -28
wait
echo "== model after $(( $(date +%s) - t0 )) s: $(ls -la $M 2>&1)"; tail -3 $OUT/model.log
B="bench --random llama3-8b --dtype q8_0 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB -n 8"
timeout 75 vexel $B > $OUT/blocks-b8.txt 2>&1
echo "== gemm_blocks, 8 requests: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|rror" $OUT/blocks-b8.txt | sed 's/│//g' | tr -s ' ')
timeout 75 python3 benchmarks/ab.py --no-gemm-blocks $B > $OUT/float-b8.txt 2>&1
echo "== float kernel, 8 requests: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|rror" $OUT/float-b8.txt | sed 's/│//g' | tr -s ' ')
