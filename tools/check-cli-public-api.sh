#!/usr/bin/env bash
# The CLI (Sources/cadence) is the libraries' first consumer and uses their public API only.
# `cadence` is its own module, so `internal` symbols of the libraries do not compile in it
# unless a file says `@testable import`, which this refuses. What a separate module of the
# same package still sees is `package` access (for example `FramePacer.renderWork(until:)`):
# so the CLI's sources are type-checked again, against the modules `swift build` made, under a
# package name of their own, exactly as a program in another package would see them.
# Exits 1 (with the compiler's errors) when the CLI needs more than public API.
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -rn "@testable" Sources/cadence; then
    echo "check-cli-public-api: Sources/cadence uses @testable import" >&2
    exit 1
fi
swift build --product cadence 2>&1 | tail -n 1
python3 - "$(swift build --show-bin-path)" <<'PY'
import json, os, subprocess, sys
bin_path = sys.argv[1]
yaml = os.path.join(os.path.dirname(bin_path), "debug.yaml")
if not os.path.exists(yaml):
    yaml = os.path.join(".build", "debug.yaml")
args = None
for line in open(yaml):
    line = line.strip()
    if line.startswith("args: ") and '"-module-name","cadence"' in line and '"-emit-module"' in line:
        args = json.loads(line[len("args: "):])
        break
if args is None:
    sys.exit("check-cli-public-api: no compile command for the cadence module in " + yaml)
drop_with_value = {"-emit-module-path", "-output-file-map", "-index-store-path"}
drop = {"-emit-dependencies", "-emit-module", "-incremental", "-enable-batch-mode", "-serialize-diagnostics",
        "-parseable-output", "-c", "-enable-testing"}
out, skip = [], False
for i, a in enumerate(args):
    if skip:
        skip = False
        continue
    if a in drop_with_value:
        skip = True
        continue
    if a in drop or a.startswith("-j"):
        continue
    out.append(a)
if "-package-name" in out:
    out[out.index("-package-name") + 1] = "cadence_public_api_check"
else:
    out += ["-package-name", "cadence_public_api_check"]
out.insert(1, "-typecheck")
r = subprocess.run(out)
if r.returncode != 0:
    sys.exit("check-cli-public-api: Sources/cadence needs more than the libraries' public API (errors above)")
print("check-cli-public-api: Sources/cadence builds against public API only (no @testable, no package access)")
PY
