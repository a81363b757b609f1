#!/usr/bin/env bash
# bench/peers/run.sh [--sleep]: impetus, ODE and Bullet on the same scenes, side by side, with ratios.
# Needs libode-dev and libbullet-dev (the build is skipped with a message when they are missing).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
make -s -C bench/peers peers
./impetus build release >/dev/null
out=$( { LUA_PATH="scripts/?.lua;scripts/?/init.lua;;" LUA_CPATH="build/release/lib/?.so;;" \
         lua5.4 bench/peers/impetus_scenes.lua "$@"; bench/peers/peers "$@"; } )
echo "$out"
echo
for scene in pile pyramid; do
  imp=$(echo "$out" | awk -v s="$scene:" '$1 == "impetus" && $2 == s {print $3}')
  ode=$(echo "$out" | awk -v s="$scene:" '$1 == "ode" && $2 == s {print $3}')
  bul=$(echo "$out" | awk -v s="$scene:" '$1 == "bullet" && $2 == s {print $3}')
  awk -v s="$scene" -v i="$imp" -v o="$ode" -v b="$bul" \
    'BEGIN { printf "%-8s ODE / impetus = %.2f   Bullet / impetus = %.2f   (> 1: impetus is faster)\n", s, o / i, b / i }'
done
