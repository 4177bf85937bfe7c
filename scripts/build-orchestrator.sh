#!/usr/bin/env bash
# Builds the real orchestrator API server (kube-apiserver), its controller-manager
# (kube-controller-manager: garbage collector, namespace deletion, ServiceAccount tokens) and etcd
# from their Go modules, for the tests that run against them (test/support/real-orchestrator.ts). Test tooling only: nothing built
# here ships, and only the wrapper module in test/orchestrator/go/ is committed.
#
# The versions come from test/orchestrator/go/go.mod, and the binaries go to
# test/orchestrator/bin/kube-<version>_etcd-<version>/ (git-ignored), so bumping a version builds
# afresh and a run with every binary present does nothing (no Go needed then); a folder missing only
# one of them (built before it was added) builds just that one.
#
# A cold build (empty Go build cache, modules to download) took 561 s on 2 loaded cores, 7 s with a
# warm Go build cache; see test/support/README.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
module="$root/test/orchestrator/go"

# The pinned versions, read from go.mod's require lines (the first one of each name).
version_of() {
  awk -v name="$1" '$1 == name && $2 ~ /^v/ { print $2; exit }' "$module/go.mod"
}
kube="$(version_of k8s.io/kubernetes)"
etcd="$(version_of go.etcd.io/etcd/server/v3)"
if [ -z "$kube" ] || [ -z "$etcd" ]; then
  echo "build-orchestrator: cannot read the k8s.io/kubernetes and etcd versions from $module/go.mod" >&2
  exit 1
fi
out="$root/test/orchestrator/bin/kube-${kube}_etcd-${etcd}"

binaries="kube-apiserver kube-controller-manager etcd"
all_built() {
  for name in $binaries; do [ -x "$out/$name" ] || return 1; done
}
if all_built; then
  exit 0
fi
# Go's own install location, for shells whose PATH lacks it.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "build-orchestrator: go is not installed; it is needed once to build kube-apiserver $kube and etcd $etcd" >&2
  exit 1
fi

mkdir -p "$out"
# Two runs at once (CI and a developer's test run) build once: the second waits, then finds them all.
exec 9>"$out/.lock"
flock 9
if all_built; then
  exit 0
fi

started=$SECONDS
cd "$module"
# The module's own requirements are the only source: -mod=readonly refuses to change go.mod/go.sum.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly" CGO_ENABLED=0
# The API server reports the release it was built from (the Go module carries no version stamp, and
# /version answers clients such as kubectl that read it).
minor="${kube#v1.}"
minor="${minor%%.*}"
stamp="k8s.io/component-base/version"
kube_flags="-s -w -X $stamp.gitVersion=$kube -X $stamp.gitMajor=1 -X $stamp.gitMinor=$minor -X $stamp.gitTreeState=clean"

echo "build-orchestrator: building kube $kube and etcd $etcd into ${out#"$root"/} (minutes when cold)" >&2
# Built to temporary names and renamed, so an interrupted build never leaves a binary that looks done.
build() { # <name> <package> <ldflags>
  [ -x "$out/$1" ] && return 0
  go build -trimpath -ldflags "$3" -o "$out/$1.tmp" "$2"
  mv "$out/$1.tmp" "$out/$1"
}
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kube_flags"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kube_flags"
build etcd go.etcd.io/etcd/server/v3 "-s -w"
echo "build-orchestrator: built in $((SECONDS - started)) s" >&2
