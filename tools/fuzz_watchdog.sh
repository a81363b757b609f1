#!/usr/bin/env bash
# fuzz_watchdog.sh STALL_SECONDS WATCHED_FILE OUT ERR -- command ...
#
# Runs the command with stdout in OUT and stderr in ERR. The command shows progress by writing
# WATCHED_FILE (tools/fuzz.lua's child appends every operation to its journal); when the file has
# not changed for STALL_SECONDS the command hangs: the watchdog appends "FUZZ-HANG" and the
# backtraces of all its threads (gdb -batch, when gdb is installed) to ERR, then sends SIGABRT,
# whose handler in the AddressSanitizer runtime (ASAN_OPTIONS=handle_abort=1) prints the stack of
# the thread it lands on; SIGKILL 5 s later if it is still alive. Exit status: the command's, or
# 124 for a hang. FUZZ_QUICK_KILL=1 kills a hang at once, without backtraces (the minimizer's
# candidates, which are known by the operation they stop in).
stall=$1 watched=$2 out=$3 err=$4
shift 4
[ "${1:-}" = "--" ] && shift
"$@" >"$out" 2>"$err" &
pid=$!
last=""
changed=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
  sleep 0.25
  now=$(stat -c '%s %y' "$watched" 2>/dev/null || true)
  if [ "$now" != "$last" ]; then last=$now; changed=$SECONDS; continue; fi
  if [ $((SECONDS - changed)) -ge "$stall" ] && kill -0 "$pid" 2>/dev/null; then
    echo "FUZZ-HANG: no progress for $stall s" >>"$err"
    if [ -n "${FUZZ_QUICK_KILL:-}" ]; then kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exit 124; fi
    if command -v gdb >/dev/null 2>&1; then
      timeout 60 gdb -batch -nx -p "$pid" -ex "thread apply all bt" >>"$err" 2>&1 || true
    fi
    kill -ABRT "$pid" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exit 124
  fi
done
wait "$pid"
