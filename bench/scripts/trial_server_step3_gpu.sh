#!/bin/bash
# Runs `--trial-data files`, retired after commit 0621339: to reproduce, run it from a checkout of that commit.
# Issue 38 step 3 on CUDA (a device call): trial_server_gpu.sh's eight real-size candidates, one pass with
# --trial-data files and two with the task server (the table holds the second: warm), to see the verdicts,
# comparisons and perf medians agree with the server as the default. Carried as there: .carry/ and .kb/.
#   run(command="LIMIT=170 bash bench/scripts/trial_server_step3_gpu.sh", carry=[".carry", ".kb"])
# EXTRA adds eval flags to every pass (EXTRA="--held-out auto": the held-out sets through the server too).
MODES="files server server" exec bash "$(dirname "$0")/trial_server_gpu.sh"
