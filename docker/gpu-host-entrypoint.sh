#!/bin/sh
# GPU-host entrypoint: detect the hardware, then run the GPU-host worker. The worker itself fetches
# parameters, starts and supervises cuzk-daemon (log kept in $WORK_DIR/cuzk-daemon.log and shipped
# with every failure) and starts the production prover, each as a Temporal activity, so every step
# is visible and typed in the lifecycle's history.
set -eu
: "${HOST_TASK_QUEUE:?HOST_TASK_QUEUE must be set by the rent activity}"
: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS must be set by the rent activity}"
mkdir -p "$WORK_DIR" "$PARAM_CACHE_DIR"

node /app/dist/workers/detect-hardware.js > "$WORK_DIR/hardware.json"
echo "gpu-host: $(cat "$WORK_DIR/hardware.json")"

exec node /app/dist/workers/gpu-host-worker.js
