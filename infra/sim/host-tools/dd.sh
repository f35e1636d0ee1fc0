#!/bin/bash
# Stands in for `dd if=/dev/zero bs=1M conv=fdatasync of=<file> count=<MiB>` on a simulated host with
# a disk of the scenario's speed: the file reaches its size at that pace (growing in ten steps when the
# write takes long enough to be cut short), as a real write would. Integer arithmetic only: few forks.
# usage: dd.sh <MB/s> [dd args...] (of= and count= are read from them)
set -u
mbps=$1
shift
of='' count=0
for a in "$@"; do
  case "$a" in
    of=*) of=${a#of=} ;;
    count=*) count=${a#count=} ;;
  esac
done
[ -n "$of" ] || { echo "dd.sh: no of=" >&2; exit 1; }
: >"$of"
bytes=$((count * 1048576))
# bytes / (MB/s) = microseconds
us=$((bytes / mbps))
steps=1
[ "$us" -ge 500000 ] && steps=10
step_us=$((us / steps))
for ((i = 1; i <= steps; i++)); do
  sleep "$((step_us / 1000000)).$(printf '%06d' $((step_us % 1000000)))"
  truncate -s $((bytes * i / steps)) "$of"
done
