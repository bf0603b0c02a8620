# Planned for session 27 (written in session 26), call B, main: does NVRTC keep a cache across
# processes (NVRTC 12.9+ is said to cache through the driver's JIT cache: CUDA_CACHE_DISABLE,
# CUDA_CACHE_PATH, ~/.nv/ComputeCache), and how much of a kernel's ~1.5 s compile does it
# keep? benchmarks/compile_cost.py three times: as the machine is, again, and with the cache
# disabled. Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s27_b.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
env | grep -E "^CUDA_CACHE|^MLX_PTX" || echo "no CUDA_CACHE_* or MLX_PTX_* set"
python3 - <<'PY'
import ctypes, ctypes.util
for name in ("libnvrtc.so.13", "libnvrtc.so.12", ctypes.util.find_library("nvrtc")):
    try:
        lib = ctypes.CDLL(name)
    except (OSError, TypeError):
        continue
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    print(f"NVRTC {major.value}.{minor.value} ({name})")
    break
PY
cache=${CUDA_CACHE_PATH:-$HOME/.nv/ComputeCache}
size() { du -sk "$cache" 2>/dev/null | cut -f1 || echo 0; }
echo "== driver cache $cache: $(size) KB"
for run in first second; do
  timeout 120 python3 benchmarks/compile_cost.py > $OUT/compile_cost-$run.txt 2>&1
  echo "== $run run rc $? after $(( $(date +%s) - t0 )) s; cache $(size) KB"; tail -1 $OUT/compile_cost-$run.txt
done
CUDA_CACHE_DISABLE=1 timeout 120 python3 benchmarks/compile_cost.py > $OUT/compile_cost-disabled.txt 2>&1
echo "== cache disabled rc $? after $(( $(date +%s) - t0 )) s"; tail -1 $OUT/compile_cost-disabled.txt
python3 - "$OUT" <<'PY'  # each kernel's first launch, ms: first run, second, cache disabled
import sys
runs = [open(f"{sys.argv[1]}/compile_cost-{r}.txt").read().splitlines()
        for r in ("first", "second", "disabled")]
for lines in zip(*runs):
    if lines[0][:44].strip() in ("kernel", "") or len(lines[0]) < 50:
        continue
    print(f"{lines[0][:44]} " + " ".join(f"{line[44:54]:>10}" for line in lines))
PY
