#!/usr/bin/env bash
# Runs `airlock eval` over the shared corpora and fails under the recorded floors
# (docs/evaluation.md records the figures; the floors live in the eval commands' own flags).
# $1 is `airlock` (which runs the `airlock-lab` beside it) or `airlock-lab` itself.
set -euo pipefail
bin=$1
corpora=$2
# Shell commands (docs/evaluation.md, "Shell commands"): floors a little under the recorded
# figures, so a regression fails CI; the goal (99% recall, <= 2% benign asked) is not met, see
# the known misses there (mostly deliberate differences with the corpora's labels).
"$bin" eval commands --corpora "$corpora" --misses 10 \
  --min-recall 0.985 --max-benign-asked 0.02 \
  --min-recall-for tirith=0.965 --max-benign-asked-for tirith=0.055 \
  --min-recall-for hermes=0.915 --max-benign-asked-for hermes=0.025
# (hermes 0.92 -> 0.915: deleting build/ is allowed by product decision (docs/evaluation.md); Hermes labels it
# dangerous on three lines; without the listed disagreements recall is unchanged at 92.3%)

# Text scanner (docs/evaluation.md, "Text scanner"): held-out splits, and leave-one-out
# (--loso: each source trained and calibrated without, then scanned whole); floors in the file.
"$bin" eval text --corpora "$corpora" --loso --floors crates/airlock-shield/eval-floors.toml
