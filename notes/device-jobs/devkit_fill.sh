# Fill .devkit in a fresh checkout, on this (CPU) machine, from ../shared and PyPI; run from
# the project root: bash notes/device-jobs/devkit_fill.sh
# .devkit/{setup.sh,wheels,peers}: ../shared/device's (MLX with CUDA 13, mlx-lm, the project's
# pure-Python dependencies, llama.cpp's source), plus what the test runner and the server need
# beyond them (the GPU machine has no network). .devkit/extra: what the whole test suite needs
# beyond that (s33_b.sh onwards install it): llama_cpp (../shared/wheels) and its diskcache;
# pytest-xdist; openai and httpx for the server's tests (session 33 found those modules never
# collected on the GPU). .devkit/pyspy: py-spy, for the host-time profiles.
set -e
shared=../shared
mkdir -p .devkit/extra .devkit/pyspy .git/info
grep -qx "/.devkit/" .git/info/exclude 2>/dev/null || echo "/.devkit/" >> .git/info/exclude
cp -r $shared/device/setup.sh $shared/device/wheels $shared/device/peers .devkit/
cp $shared/wheels/llama_cpp_python-*.whl .devkit/extra/
py312=(--python-version 3.12 --implementation cp)
get() { python3 -m pip download -q --no-deps --only-binary=:all: "$@"; }
get "${py312[@]}" --platform manylinux_2_28_x86_64 -d .devkit/wheels hypothesis \
  sortedcontainers attrs uvicorn starlette h11 anyio sniffio idna prometheus_client
get -d .devkit/extra diskcache pytest-xdist execnet openai distro tqdm httpx2 httpcore2 \
  truststore httpx httpcore certifi
get "${py312[@]}" --platform manylinux2014_x86_64 -d .devkit/extra jiter
get --platform manylinux2014_x86_64 -d .devkit/pyspy py-spy
du -sh .devkit/*
