#!/bin/sh
# install.smoke: `cmake --install` into a fresh prefix, then the demo from the installed tree
# alone (run from an empty directory; the binaries find share/clusterd next to themselves).
# Usage: install_smoke.sh BUILD_DIR PREFIX
set -eu
build=$1
prefix=$2
rm -rf "$prefix"
mkdir -p "$(dirname "$prefix")"
cmake --install "$build" --prefix "$prefix" > "$prefix.install.log"
for f in bin/clusterd bin/clusterctl bin/clustersim bin/npu-agent \
         share/clusterd/faultCode.json share/clusterd/faultDuration.json \
         share/clusterd/relationFaultCustomization.json share/clusterd/NodeDConfiguration.json \
         share/doc/clusterd/deploy.md lib/systemd/system/clusterd.service; do
  test -e "$prefix/$f" || { echo "install.smoke: $f was not installed" >&2; exit 1; }
done
grep -q -- '--store dir:/var/lib/clusterd' "$prefix/lib/systemd/system/clusterd.service" ||
  { echo "install.smoke: the unit does not use the dir store" >&2; exit 1; }
# --data-dir defaults to the installed data directory, not the source tree.
data=$(cd "$prefix/share/clusterd" && pwd -P)
for bin in clusterd clustersim npu-agent; do
  "$prefix/bin/$bin" --help | grep -q -- "$data" ||
    { echo "install.smoke: $bin --data-dir does not default to $data" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$prefix/bin/clustersim" --smoke --no-live --state-dir "$work/state"
