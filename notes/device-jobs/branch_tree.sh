# Sourced by a device call's script, from the project root, to run a branch (session 11): the
# branch's changed files travel in the git-ignored wt/NAME (the whole tree twice would pass the
# 64 MiB a call carries), and `tree NAME` makes /tmp/NAME, main's tree with wt/NAME over it,
# and installs it as the project (editable), so that tests and `vexel` run the branch. Call
# `main_again` to install the root's tree again. Here, before the call (a branch that deletes
# files needs more than this):
#   rm -rf wt/NAME && mkdir -p wt/NAME && git diff --name-only --diff-filter=d -z main BRANCH \
#     | xargs -0 git archive BRANCH | tar -x -C wt/NAME
root=$PWD
tree() {
  rm -rf /tmp/$1 && mkdir -p /tmp/$1
  tar -C "$root" --exclude=./wt --exclude=./.devkit -cf - . | tar -C /tmp/$1 -xf -
  cp -a "$root/wt/$1/." /tmp/$1/
  (cd /tmp/$1 && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile -e . \
     > /tmp/$1-install.log 2>&1) || { echo "$1: install failed"; tail -5 /tmp/$1-install.log; }
}
main_again() {
  (cd "$root" && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile -e . \
     > /dev/null 2>&1)
}
