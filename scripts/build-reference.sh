#!/usr/bin/env bash
# Builds the reference control plane's discovery server (pilot-discovery) from its Go module, for
# the side-by-side benchmark (scripts/bench-versus.ts, `npm run bench:versus`). Benchmark tooling
# only: nothing built here ships, no reference source is committed, only the wrapper module in
# test/reference/go/ (go.mod/go.sum pin the version; the reference's own go.mod drives its
# orchestrator client libraries, independent of test/orchestrator/go's pins). Never run by `npm test`.
#
# The binary goes to test/reference/bin/<version>/pilot-discovery (git-ignored), so bumping the pin
# builds afresh and a run with the binary present does nothing (no Go needed then). Prints the
# binary's path on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
module="$root/test/reference/go"

# The pinned version, from go.mod's require line (the reference publishes only pseudo-versions to
# the Go module proxy: its release tags lack the "v" Go modules need).
version="$(awk '$1 == "istio.io/istio" && $2 ~ /^v/ { print $2; exit }' "$module/go.mod")"
if [ -z "$version" ]; then
  echo "build-reference: cannot read the istio.io/istio version from $module/go.mod" >&2
  exit 1
fi
out="$root/test/reference/bin/$version"
binary="$out/pilot-discovery"
if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi
# Go's own install location, for shells whose PATH lacks it.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "build-reference: go is not installed; it is needed once to build pilot-discovery $version" >&2
  exit 1
fi

mkdir -p "$out"
# Two runs at once build once: the second waits on the lock, then finds the binary.
exec 9>"$out/.lock"
flock 9
if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

started=$SECONDS
cd "$module"
# The module's own requirements are the only source: -mod=readonly refuses to change go.mod/go.sum.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly" CGO_ENABLED=0
echo "build-reference: building pilot-discovery $version into ${out#"$root"/} (15+ minutes when cold)" >&2
# Built to a temporary name and renamed, so an interrupted build never leaves a binary that looks done.
go build -trimpath -ldflags "-s -w" -o "$binary.tmp" istio.io/istio/pilot/cmd/pilot-discovery
mv "$binary.tmp" "$binary"
echo "build-reference: built in $((SECONDS - started)) s" >&2
echo "$binary"
