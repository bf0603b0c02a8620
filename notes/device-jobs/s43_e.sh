# Session 43, call E (~320 s of budget left, so the most needed first, each result written as it
# comes): the pacing's GPU test (32 layers, both ways) and the peaks it asserts on; then
# gemm_blocks with its chunk staged as one list of words (branch next/blocks-issue: Q4_K
# 127 -> 95 registers at 2-8 rows) against main's, in one process each, Q4_K and Q8_0 at
# 28672x4096, 8 and 16 rows; then the test again. Before the call: the branch's gemm_blocks.cuh
# in the untracked blocks_issue/ (`git show next/blocks-issue:vexel_core/quant/kernels/cuda/
# gemm_blocks.cuh > blocks_issue/gemm_blocks.cuh`); the branch's kernel first. Carry [".devkit/wheels", ".devkit/setup.sh"]
# after `tree_slim.sh out`.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
mem() {
  timeout 60 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
    tests/test_device_memory.py > $OUT/mem$1.txt 2>&1
  echo "== mem$1 rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/mem$1.txt)"
  grep -E "^E " $OUT/mem$1.txt | head -4
}
mem 1
timeout 60 python3 - > $OUT/peaks.txt 2>&1 <<'PY'
# the peaks behind the test's assertions, paced and built whole
import tempfile
from pathlib import Path
from tests.builders.models import write_llama
from tests.builders.vocab import spm_vocab
from tests.test_device_memory import DEEP, _prompt_step_peak
from vexel_core.gguf.description import ModelDescription
from vexel_core.gguf.reader import GGUFFile
from vexel_core.memory import step_working_set
from vexel_core.plugins import load_plugins
host = load_plugins(strict=True)
path = write_llama(Path(tempfile.mkdtemp()) / "deep.gguf", spm_vocab(), DEEP, seed=4)
layer = step_working_set(ModelDescription.from_gguf(GGUFFile(path)), 16 * 512, 0) // 2
for paced in (True, False):
    limit, peak = _prompt_step_peak(path, host, paced)
    print(f"paced={paced} limit={limit} peak={peak} over the limit: {(peak - limit) / layer:.2f} layers", flush=True)
PY
echo "== peaks after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/peaks.txt
kern() {  # name; a PTX cache of its own (MLX keys it by kernel name, not by the headers)
  MLX_PTX_CACHE_DIR=/tmp/ptx-$1 timeout 90 python3 benchmarks/gemm_blocks.py --formats Q4_K,Q8_0 \
    --rows 8,16 --shapes 28672x4096 > $OUT/kern-$1.txt 2>&1
  echo "== kern-$1 rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/kern-$1.txt
}
cp vexel_core/quant/kernels/cuda/gemm_blocks.cuh /tmp/main_gemm_blocks.cuh
cp blocks_issue/gemm_blocks.cuh vexel_core/quant/kernels/cuda/gemm_blocks.cuh
kern words
cp /tmp/main_gemm_blocks.cuh vexel_core/quant/kernels/cuda/gemm_blocks.cuh
kern main
mem 2
