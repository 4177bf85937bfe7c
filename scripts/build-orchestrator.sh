#!/usr/bin/env bash
# Builds the real orchestrator API server (kube-apiserver) and etcd from their Go modules, for the
# tests that run against them (test/support/real-orchestrator.ts). Test tooling only: nothing built
# here ships, and only the wrapper module in test/orchestrator/go/ is committed.
#
# The versions come from test/orchestrator/go/go.mod, and the binaries go to
# test/orchestrator/bin/kube-<version>_etcd-<version>/ (git-ignored), so bumping a version builds
# afresh and a run with both binaries present does nothing (no Go needed then).
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

if [ -x "$out/kube-apiserver" ] && [ -x "$out/etcd" ]; then
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
# Two runs at once (CI and a developer's test run) build once: the second waits, then finds both.
exec 9>"$out/.lock"
flock 9
if [ -x "$out/kube-apiserver" ] && [ -x "$out/etcd" ]; then
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

echo "build-orchestrator: building kube-apiserver $kube and etcd $etcd into ${out#"$root"/} (minutes when cold)" >&2
# Built to temporary names and renamed, so an interrupted build never leaves a binary that looks done.
go build -trimpath -ldflags "$kube_flags" -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3
mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
mv "$out/etcd.tmp" "$out/etcd"
echo "build-orchestrator: built in $((SECONDS - started)) s" >&2
