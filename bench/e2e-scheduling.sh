#!/usr/bin/env bash
# The outcome aiadmit exists for, on the real scheduler: the corpus's GPU
# workloads applied to a small GPU cluster once where aiadmit is not called
# and once where it is, and what became of them: Pods on GPU nodes, Pods
# Pending with the scheduler's reason, workloads refused at apply time with
# the rule (bench/e2e_scheduling.py). docs/e2e.md shows a run.
#
#   bench/e2e-scheduling.sh
#
# Uses the cluster of AIADMIT_E2E_DIR when one is up there, else starts one
# (scripts/e2e-cluster) and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/e2e-lib.sh
source bench/e2e-lib.sh

bench_e2e_up
export SCHED_WITHOUT=sched-without-$$ SCHED_WITH=sched-with-$$ KUBECTL AIADMIT_E2E_OPERATORS
bench_namespace "$SCHED_WITHOUT" false
bench_namespace "$SCHED_WITH" true
python3 bench/e2e_scheduling.py
bench_delete_namespace "$SCHED_WITHOUT"
bench_delete_namespace "$SCHED_WITH"
