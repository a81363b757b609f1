#!/usr/bin/env bash
# tools/soak.sh: run a scene headless for a while and print its resident memory over time
# (`./impetus soak scene.lua --minutes N [--restart STEPS] [--every SECONDS]`).
#
#   without --restart   the host program itself, build/release/bin/impetus --headless, stepping the
#                       scene without end (what `impetus --headless --steps <many>` keeps per step)
#   --restart STEPS     lua5.4 with impetus.runner: the scene restarted (setup on a fresh world, the
#                       R key) every STEPS steps, so the worlds it drops must be freed
#
# Every --every seconds (default 5) a line "t = ... s  rss = ... MB"; at the end the first sample,
# the peak, the last, the growth over the run and over its second half (a run that has reached
# its plateau grows ~0 there). The process is stopped (SIGTERM, then SIGKILL) at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

scene="" minutes=2 restart=0 every=5
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --restart) restart=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    -*) echo "soak: unknown option $1" >&2; exit 2 ;;
    *) scene=$1; shift ;;
  esac
done
[ -n "$scene" ] || { echo "usage: impetus soak scene.lua --minutes N [--restart STEPS] [--every SECONDS]" >&2; exit 2; }
[ -f "$scene" ] || [ -f "$scene/main.lua" ] || { echo "soak: no scene $scene" >&2; exit 2; }

steps_file=$(mktemp)
child_lua=$(mktemp --suffix=.lua)
trap 'rm -f "$steps_file" "$child_lua"' EXIT
if [ "$restart" -gt 0 ]; then
  cat >"$child_lua" <<'LUA'
local path, every, steps_file = arg[1], tonumber(arg[2]), arg[3]
local runner = require("impetus").runner(path)
runner:start()
if not runner.world then io.stderr:write("soak: " .. tostring(runner.error) .. "\n") os.exit(1) end
local n, restarts = 0, 0
while true do
  if not runner:step() then io.stderr:write("soak: " .. tostring(runner.error) .. "\n") os.exit(1) end
  n = n + 1
  if n % every == 0 then
    runner:restart()
    restarts = restarts + 1
    local f = io.open(steps_file, "w")
    f:write(n, " steps, ", restarts, " restarts\n")
    f:close()
  end
end
LUA
  LUA_PATH="$ROOT/scripts/?.lua;$ROOT/scripts/?/init.lua;;" LUA_CPATH="$ROOT/build/release/lib/?.so;;" \
    lua5.4 "$child_lua" "$scene" "$restart" "$steps_file" &
else
  "$ROOT/build/release/bin/impetus" --headless --steps 2000000000 "$scene" >/dev/null &
fi
pid=$!

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status" 2>/dev/null || echo 0; }

mode="host --headless"
[ "$restart" -gt 0 ] && mode="runner, restart every $restart steps"
echo "soak: $scene ($mode), $minutes min, RSS every $every s"
end=$(( $(date +%s) + ${minutes%.*} * 60 ))
samples=()
t0=$(date +%s)
while [ "$(date +%s)" -lt "$end" ]; do
  sleep "$every"
  if ! kill -0 "$pid" 2>/dev/null; then echo "soak: the process ended early" >&2; wait "$pid" || true; exit 1; fi
  r=$(rss_mb)
  samples+=("$r")
  extra=""
  [ -s "$steps_file" ] && extra="  ($(cat "$steps_file"))"
  printf '  t = %4d s  rss = %7s MB%s\n' "$(( $(date +%s) - t0 ))" "$r" "$extra"
done
kill -TERM "$pid" 2>/dev/null || true
sleep 1
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

n=${#samples[@]}
half=$(( n / 2 ))
[ "$half" -gt 0 ] || half=1
printf '%s\n' "${samples[@]}" | awk -v half="$half" '
  { v[NR] = $1; if ($1 > peak) peak = $1 }
  END {
    printf "soak: first %.1f MB, peak %.1f MB, last %.1f MB; growth %+.1f MB over the run, %+.1f MB over its second half\n",
      v[1], peak, v[NR], v[NR] - v[1], v[NR] - v[half]
  }'
