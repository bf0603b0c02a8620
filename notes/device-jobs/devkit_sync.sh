# Install the wheels of .devkit/wheels that this machine's /tmp/vexel-site lacks. The shared
# setup.sh installs .devkit/wheels once per machine (when /tmp/vexel-site/mlx is missing), so
# a wheel added after a machine's first call never reached it (session 25: calls D and F lost
# their server runs to a missing uvicorn). Run after setup.sh:
#   source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...
site=/tmp/vexel-site
missing=()
for wheel in .devkit/wheels/*.whl; do
  IFS=- read -r name version _ <<< "$(basename "$wheel")"  # a wheel's name: NAME-VERSION-...
  [ -d "$site/$name-$version.dist-info" ] || missing+=("$wheel")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "devkit_sync: installing ${missing[*]##*/}"
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "${missing[@]}"
fi
