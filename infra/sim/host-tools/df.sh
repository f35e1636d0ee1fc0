#!/bin/bash
# Stands in for `df --block-size=1 --output=avail,size <path>` on a simulated host whose disk is not
# this machine's: prints the scenario's free and total bytes in df's layout.
# usage: df.sh <free bytes> <total bytes> [df args...] <path>
set -u
echo "         Avail     1B-blocks"
printf '%14d %13d\n' "$1" "$2"
