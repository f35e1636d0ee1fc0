#!/bin/sh
# Stands in for one simulated process that the host farm (farm.ts) runs in-process: a cuzk-daemon or a
# production prover. It lives exactly as long as that simulation, so the GPU-host worker supervises it
# as it would the real process: SIGTERM stops it, and a simulated crash ends it with the daemon's code.
# usage: standin.sh daemon --config <file>   |   standin.sh production <work dir>
set -u
kind=${1:-}
case "$kind" in
  daemon) ref=${3:-} ;;
  production) ref=${2:-} ;;
  *) echo "usage: standin.sh daemon --config <file> | production <work dir>" >&2; exit 2 ;;
esac
fifo="$SIM_FARM_DIR/standin-$$.fifo"
mkfifo "$fifo" || exit 1
if ! curl -sf -o /dev/null -X POST "$SIM_FARM_URL/standins" \
  --data-urlencode "kind=$kind" --data-urlencode "ref=$ref" --data-urlencode "pid=$$" \
  --data-urlencode "concurrency=${PROOF_CONCURRENCY:-1}"; then
  rm -f "$fifo"
  echo "host farm at $SIM_FARM_URL refused the $kind" >&2
  exit 1
fi
# Stopped like the real process: the simulation ends before we exit, as a dying process closes its port.
trap 'curl -s -o /dev/null -X POST "$SIM_FARM_URL/standins/$$/stop"; rm -f "$fifo"; exit 0' TERM INT
# Blocks until the farm writes the exit code (a crash); a signal ends us here instead.
{ read -r code < "$fifo"; } 2>/dev/null
rm -f "$fifo"
exit "${code:-1}"
