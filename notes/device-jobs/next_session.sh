# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
#
# Written at the end of session 19. Host and GPU are even at ~2.5 ms a token (build ~1.1 +
# submit ~1.3; kernels ~2.5). Session 19 found that the paged decode's launches have a median
# of 14.1 us and a mean of 18.1 (max 383): ~128 us a step of slow launches, most likely page
# faults on the step's tiny host-made arrays (notes/gpu-kernels.md, "Session 19").
#
# 0: (~400 s) the one-step array and 16-byte tokens: `git apply
#    notes/patches/one-step-array.patch` (or check out next/one-step-array), then in one call:
#      a. the slow launches in order, main's path and the patch's:
#         python3 benchmarks/gpu_timeline.py --top 3 --last 96 --where paged_decode \
#           --where rope_single -- $W      (W: bench ... -n 1 --prompt-len 128 --output-len 128)
#         and the same under `python3 benchmarks/ab.py --separate-step-arrays` (runpy, as
#         notes/device-jobs/s19_b.sh does for its second timeline)
#      b. bash notes/device-jobs/arms_rounds.sh 2 "vexel" \
#           "python3 benchmarks/ab.py --tiny-tokens" \
#           "python3 benchmarks/ab.py --separate-step-arrays" \
#           "python3 benchmarks/ab.py --separate-step-arrays --tiny-tokens"   (main's path)
#    If slow launches remain with both: the sampled token (MLX's argmax output, 4 bytes, read
#    by the host every step) still shares the small pool with whatever tiny array the GPU
#    writes first in a step.
# 1: (~500 s, two calls back to back) the three engines on main: s14_a.sh 1 builds llama.cpp
#    beside GPU tests; s14_a.sh 2 runs one Q4_0 request in Vexel, mlx-lm and llama.cpp.
# 2: the paged decode's split with the merge inside the kernel (the last CTA of a KV head to
#    finish merges, by an atomic counter that it resets): call C/D's benchmark with the write
#    had two spans at 12.2-13.9 us against one at 15.4-16.4 (256 tokens) and four spans at
#    13.4-15.5 against 21.2-21.9 (512), but the merge kernel costs a launch (~4.5 us of host
#    time a layer), which a host-bound step cannot pay.
# 3: (~550 s alone) the engine's Hypothesis searches on CUDA, never finished on a GPU:
#      source .devkit/setup.sh && timeout 550 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5
# Alternated A/Bs: notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the
# runs' median steps; one slow host episode must not decide a round).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
