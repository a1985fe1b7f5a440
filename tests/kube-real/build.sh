#!/usr/bin/env bash
# Builds the real kube-apiserver and etcd pinned by go.mod into DIR (default: bin/ beside this
# script). Cheap when up to date: nothing is done when both binaries exist and are newer than
# go.mod, go.sum and this script; otherwise Go's build cache makes a rebuild fast.
#   bash tests/kube-real/build.sh [DIR]
# Env: GO (the go command; default `go` on PATH, else /usr/local/go/bin/go), BUILD_PARALLEL
# (go build -p; default 2), FORCE=1 (build even when up to date).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/bin}"
K8S_VERSION="v1.36.3"   # keep in step with go.mod

fail() { echo "kube-real/build.sh: $*" >&2; exit 1; }

GO="${GO:-}"
if [ -z "$GO" ]; then
  if command -v go >/dev/null 2>&1; then GO="$(command -v go)";
  elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go;
  else fail "no Go toolchain found (set GO=/path/to/go; Go >= 1.26 is needed)"; fi
fi

[ -x "$GO" ] || fail "GO=$GO is not an executable Go toolchain"

mkdir -p "$OUT" || fail "cannot create $OUT"
OUT="$(cd "$OUT" && pwd)"
APISERVER="$OUT/kube-apiserver"
ETCD="$OUT/etcd"

up_to_date() {
  local b="$1"
  [ -x "$b" ] && [ "$b" -nt "$HERE/go.mod" ] && [ "$b" -nt "$HERE/go.sum" ] \
    && [ "$b" -nt "$HERE/build.sh" ]
}

if [ "${FORCE:-0}" != 1 ] && up_to_date "$APISERVER" && up_to_date "$ETCD"; then
  echo "kube-real/build.sh: $APISERVER and $ETCD are up to date"
  exit 0
fi

cd "$HERE"
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
P="${BUILD_PARALLEL:-2}"
MINOR="${K8S_VERSION#v1.}"; MINOR="${MINOR%%.*}"
VPKG=k8s.io/component-base/version
LDFLAGS="-s -w -X $VPKG.gitVersion=$K8S_VERSION -X $VPKG.gitMajor=1 -X $VPKG.gitMinor=$MINOR"
LDFLAGS="$LDFLAGS -X $VPKG.gitTreeState=clean"

start=$(date +%s)
build() {  # build NAME PACKAGE LDFLAGS
  local name="$1" pkg="$2" ld="$3" tmp="$OUT/.$1.tmp"
  echo "kube-real/build.sh: building $name ($pkg) with $("$GO" env GOVERSION)..."
  if ! "$GO" build -p "$P" -trimpath -ldflags "$ld" -o "$tmp" "$pkg"; then
    rm -f "$tmp"
    fail "building $name ($pkg) failed; see the errors above"
  fi
  mv -f "$tmp" "$OUT/$name"
}
build etcd go.etcd.io/etcd/server/v3 "-s -w"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$LDFLAGS"

"$ETCD" --version >/dev/null 2>&1 || fail "$ETCD does not run"
v="$("$APISERVER" --version 2>&1)" || fail "$APISERVER does not run: $v"
[ "$v" = "Kubernetes $K8S_VERSION" ] \
  || fail "$APISERVER reports '$v', expected 'Kubernetes $K8S_VERSION'"
echo "kube-real/build.sh: built $APISERVER ($v) and $ETCD ($("$ETCD" --version | head -1))" \
  "in $(( $(date +%s) - start ))s"
