#!/bin/sh
# Records what Go's text/template with sprig (the reference's template engine) writes for each case
# of cases.json into test/services/injection/template/go-parity.json, which go-parity.test.ts holds
# the TypeScript interpreter to. Needs Go and the Go module proxy (or a module cache with sprig).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$here" && go build -o "$out/parity" .)
"$out/parity" "$here/cases.json" > "$out/outputs.json"
node -e '
const fs = require("node:fs")
const cases = JSON.parse(fs.readFileSync(process.argv[1], "utf8"))
const outputs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"))
const rows = cases.map((c, i) => ({ ...c, go: outputs[i] }))
fs.writeFileSync(process.argv[3], `${JSON.stringify(rows, null, 1)}\n`)
' "$here/cases.json" "$out/outputs.json" "$root/test/services/injection/template/go-parity.json"
