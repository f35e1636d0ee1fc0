#!/bin/bash
# Stands in for one simulated process that the host farm (farm.ts) runs in-process: a cuzk-daemon, a
# production prover or the parameter fetch. It lives exactly as long as that simulation, so the GPU-host
# worker supervises it as it would the real process: it prints the simulation's output, SIGTERM stops it,
# a simulated crash ends it with the real process's exit code, and when it is killed the farm sees its
# connection close. Bash builtins only (/dev/tcp, read, printf): a thousand machines' worth of stand-ins
# must not cost a curl, a fifo and a shell each.
# usage: standin.sh daemon --config <file> | production <work dir> | paramfetch <cache dir> <seconds> <ok|stall|fail>
set -u
export LC_ALL=C
kind=${1:-}
case "$kind" in
  daemon) args=("${3:-}") ;;
  production) args=("${2:-}") ;;
  paramfetch) args=("${@:2}") ;;
  *)
    echo "usage: standin.sh daemon --config <file> | production <work dir> | paramfetch <cache> <sec> <fault>" >&2
    exit 2
    ;;
esac
addr=${SIM_FARM_URL#http://}
host=${addr%:*}
port=${addr##*:}

# Stopped like the real process: the simulation ends before we exit, as a dying process closes its port.
stop() {
  if exec 4<>"/dev/tcp/$host/$port"; then
    printf 'POST /standins/%s/stop HTTP/1.0\r\nContent-Length: 0\r\n\r\n' "$$" >&4
    read -r _ <&4
  fi
  exit 0
}

if ! exec 3<>"/dev/tcp/$host/$port"; then
  echo "host farm at $SIM_FARM_URL is not listening" >&2
  exit 1
fi
printf -v body '%s\n' "$kind" "$$" "${PROOF_CONCURRENCY:-1}" "${args[@]}"
printf 'POST /standins HTTP/1.0\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s' "${#body}" "$body" >&3
trap stop TERM INT

# The response stays open while the simulation runs: `out`/`err` lines are its output, `exit <code>` its end.
read -r _ status _ <&3 || status=none
while IFS= read -r line <&3 && [ -n "${line%$'\r'}" ]; do :; done
if [ "$status" != 200 ]; then
  echo "host farm at $SIM_FARM_URL refused the $kind ($status):" >&2
  while IFS= read -r line <&3 || [ -n "$line" ]; do echo "$line" >&2; done
  exit 1
fi
while IFS= read -r line <&3; do
  case "$line" in
    "out "*) printf '%s\n' "${line#out }" ;;
    "err "*) printf '%s\n' "${line#err }" >&2 ;;
    "exit "*) exit "${line#exit }" ;;
  esac
done
# The farm went away mid-simulation: the process dies with it.
echo "host farm at $SIM_FARM_URL closed the $kind" >&2
exit 1
