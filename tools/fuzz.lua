-- tools/fuzz.lua: the API fuzzer of impetus (`./impetus fuzz`).
--
--   ./impetus fuzz [--minutes N] [--seeds N] [--seed S] [--ops K]   a campaign (without --minutes and
--                                                                    --seeds: 200 seeds from seed 1;
--                                                                    300 operations a seed)
--   ./impetus fuzz --replay fuzz-findings/x.lua                     run a reproduction it wrote
--   ./impetus fuzz --script S [--ops K]                             print seed S as a standalone script
--   options: --batch B (seeds per child process, 25), --stall T (seconds without progress that make
--            a hang, 20), --build sanitize|release (sanitize), --out DIR (fuzz-findings),
--            --no-minimize, --quiet, --no-undo (without the undo and undo-drift checks)
--
-- A campaign runs seeds in child processes (lua5.4 tools/fuzz.lua child ...), a batch of seeds
-- each, under tools/fuzz_watchdog.sh. Seed s draws its operations from tools/fuzz_ops.lua's
-- generator seeded with s and runs them one by one, each protected by pcall, on the runtime of
-- tools/fuzz_prelude.lua. The child journals every operation's source before running it.
--
-- Two kinds of failure. The prelude's checks (an unclean error, NaN past the NaN guard, a failed
-- callback that changed the world, an accepted bad argument) print "FUZZ-FAIL" with a copy of the
-- journal and the seed goes on. A process that dies (an AddressSanitizer or UBSan report, a crash,
-- a C assert, a hang that the watchdog stops) leaves the journal up to the operation that killed
-- it; the campaign goes on with the next seed. Each failure gets a signature (the check, or the
-- sanitizer's report kind and engine function or source line; for a hang, the binding and the
-- engine stage of the backtrace). A new signature's operation list is shrunk by delta debugging
-- (Zeller and Hildebrandt's ddmin: each candidate is a standalone script run under the watchdog,
-- kept when it fails with the same signature) and written to DIR/<signature>.lua, its output to
-- DIR/<signature>.log.
--
-- A seed replays the same operations bit for bit: the generator is splitmix64 on Lua integers, the
-- operations are source text, and what the generator looks at (which objects exist) is the
-- engine's deterministic answer to the same earlier operations.
local ROOT = os.getenv("IMPETUS_ROOT") or "."
package.path = ROOT .. "/tools/?.lua;" .. package.path

local function prelude_text()
  local f = assert(io.open(ROOT .. "/tools/fuzz_prelude.lua"))
  local s = f:read("a")
  f:close()
  return s
end

local function read(path)
  local f = io.open(path)
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "w"))
  f:write(s)
  f:close()
end

-- ---- the child: run seeds, journal operations ---------------------------------------------------

local function child(from, count, nops, dir)
  dofile(ROOT .. "/tools/fuzz_prelude.lua")
  local gen = require "fuzz_ops"
  local seeds = assert(io.open(dir .. "/seeds", "a"))
  local journal, current, reported, soft = nil, nil, {}, 0
  FUZZ_PROGRESS = function(i) journal:write("-- replay ", i, "\n") journal:flush() end
  -- a failure that leaves the process running is noted once per kind (and per message, for errors
  -- and refusals) with a copy of the journal so far, and the seed goes on
  FUZZ_SOFT = function(kind, detail)
    local key = kind
    if kind == "unclean" or kind == "accepted" then key = kind .. (detail:gsub("^operation %d+: ", ""):gsub("%d+", "#")) end
    if reported[key] then return end
    reported[key] = true
    soft = soft + 1
    journal:flush()
    local copy = string.format("%s/soft-%d", dir, soft)
    local f = assert(io.open(copy, "w"))
    f:write(read(dir .. "/journal"))
    f:close()
    io.stdout:write(string.format("FUZZ-FAIL %s: %s @seed %d journal %s\n", kind, (detail:gsub("\n", "\\n")), current, copy))
    io.stdout:flush()
  end
  for seed = from, from + count - 1 do
    current = seed
    seeds:write("start ", seed, "\n") seeds:flush()
    journal = assert(io.open(dir .. "/journal", "w"))
    FUZZ_RESET()
    FUZZ.failed = {}
    local r, ctx, fns = gen.rng(seed), gen.context(), {}
    for i = 1, nops do
      local src, post = gen.generate(r, ctx)
      journal:write("-- op ", i, "\n", src, "\n") journal:flush()
      local fn, err = load(src, "=op", "t")
      if not fn then FUZZ_FAIL("generator", err .. " in " .. src) end
      fns[i] = fn
      FUZZ_OP(i, fn)
      post()
    end
    FUZZ_DRIFT(fns)
    journal:close()
    seeds:write("done ", seed, " ", nops, "\n") seeds:flush()
  end
  seeds:close()
end

-- ---- scripts -------------------------------------------------------------------------------------

-- the operations of a journal, in order (replay markers are comments inside the last one)
local function journal_ops(text)
  local ops, cur = {}, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:match("^%-%- op %d+$") then
      cur = {}
      ops[#ops + 1] = cur
    elseif cur and not line:match("^%-%- replay %d+$") then
      cur[#cur + 1] = line
    end
  end
  for i, lines in ipairs(ops) do ops[i] = table.concat(lines, "\n") end
  return ops
end

local function script(ops, header)
  local parts = { header or "", prelude_text(), "\nlocal OPS = {\n" }
  for i, src in ipairs(ops) do parts[#parts + 1] = string.format("function() -- %d\n%s\nend,\n", i, src) end
  parts[#parts + 1] = "}\nRUN(OPS)\n"
  return table.concat(parts)
end

-- ---- failures ------------------------------------------------------------------------------------

local function frames(err)
  local list = {}
  for line in err:gmatch("[^\n]+") do
    -- ASan / UBSan: "    #3 0x7f.. in hash_grid ../engine/broadphase.c:455"
    local fn, file = line:match("^%s*#%d+ 0x%x+ in ([%w_]+) ([^%(%s]%S*)$")
    -- gdb: "#3  0x00007f.. in hash_grid (...) at ../engine/broadphase.c:455" or "#0  hash_grid (...) at ..."
    if not fn then fn, file = line:match("^#%d+%s+0x%x+ in ([%w_]+) .* at (%S+)$") end
    if not fn then fn, file = line:match("^#%d+%s+([%w_]+) .* at (%S+)$") end
    if fn and file:find("engine/", 1, true) then list[#list + 1] = { fn = fn, file = file, lua = file:find("engine/lua/", 1, true) ~= nil } end
  end
  return list
end

-- a hang's place: the outermost binding function (the API call the script made) and the engine
-- function two calls inside it (under the imp_* entry point: the stage that loops)
local function hang_place(err)
  local fs = frames(err)
  local binding, below
  for i = #fs, 1, -1 do
    if fs[i].lua then
      binding = fs[i].fn
      below = fs[i - 2] and fs[i - 2].fn or fs[i - 1] and fs[i - 1].fn
      break
    end
  end
  if not binding then return "Lua code", "no engine frame" end
  return binding, below or "?"
end

local function normalize(s)
  s = s:gsub("expected, got %a+", "expected, got T")
  return (s:gsub("[%w_/%.]+%.lua:%d+: ", ""):gsub("op:%d+: ", ""):gsub("0x%x+", "#"):gsub("%-?%d[%d%.e%+%-]*", "#"))
end

-- signature, kind and description of one "FUZZ-FAIL kind: detail" line of the prelude's checks
local function soft_signature(kind, detail)
  detail = detail:gsub(" @seed %d+ journal %S+$", "")
  if kind == "unclean" then
    detail = detail:gsub("^operation %d+: ", "")
    return "unclean: " .. normalize(detail):sub(1, 100), kind, detail
  end
  if kind == "nan" then return "nan: a non-finite state escaped the NaN guard", kind, detail end
  if kind == "undo" then return "undo: a failed callback left the world changed", kind, detail end
  if kind == "undo-drift" then return "undo-drift: a failed step changed the later steps", kind, detail end
  if kind == "accepted" then return "accepted: " .. (detail:match("^[%a ]*%a") or detail), kind, detail end
  return kind .. ": " .. normalize(detail):sub(1, 100), kind, detail
end

local function soft_failures(out)
  local list = {}
  for kind, detail in out:gmatch("FUZZ%-FAIL (%S+): ([^\n]*)") do
    local sig, k, d = soft_signature(kind, detail)
    list[#list + 1] = { sig = sig, kind = k, detail = d }
  end
  return list
end

-- signature, kind, description of a process that died (a sanitizer report, a hang, an assert, a
-- signal); nil when it exited by itself
local function crash_signature(rc, err)
  if err:find("FUZZ-HANG", 1, true) or rc == 124 then
    local binding, below = hang_place(err)
    return string.format("hang in %s > %s", binding, below), "hang", "no progress; see the backtrace"
  end
  local asan = err:match("ERROR: AddressSanitizer: ([%w%-]+)")
  if asan then
    local fs = frames(err)
    local top = fs[1] and fs[1].fn or "?"
    local where = fs[1] and fs[1].file:match("([%w_]+%.c:%d+)") or "?"
    return string.format("asan %s in %s", asan, top), "asan", asan .. " at " .. where
  end
  local file, line, what = err:match("([%w_]+%.c):(%d+):%d+: runtime error: ([^\n]*)")
  if file then
    local short = what:gsub(":.*", ""):gsub("%-?%d[%d%.e%+]*", "#"):gsub("'[^']*'", "T"):sub(1, 60)
    return string.format("ubsan %s at %s:%s", short, file, line), "ubsan", what
  end
  local assertion = err:match("Assertion `([^']*)' failed")
  if assertion then return "assert " .. assertion, "assert", assertion end
  if rc ~= 0 and rc ~= 3 then
    local fs = frames(err)
    local last = err:match("([^\n]+)\n?$") or ""
    return string.format("crash (status %d) in %s", rc, fs[1] and fs[1].fn or "?"), "crash", last
  end
  return nil
end

local SOFT = { unclean = true, nan = true, undo = true, ["undo-drift"] = true, accepted = true }

-- ---- running children ----------------------------------------------------------------------------

local CFG = {
  build = "sanitize", batch = 25, stall = 20, ops = 300, out = "fuzz-findings", minimize = true,
  minutes = nil, seeds = nil, seed = 1, quiet = false, undo = true,
}

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function env_prefix(build)
  local lib = ROOT .. "/build/" .. build .. "/lib/?.so"
  local env = {
    "LUA_PATH=" .. shell_quote(ROOT .. "/scripts/?.lua;" .. ROOT .. "/scripts/?/init.lua;" .. ROOT .. "/tools/?.lua;;"),
    "LUA_CPATH=" .. shell_quote(lib .. ";;"),
    "IMPETUS_ROOT=" .. shell_quote(ROOT),
  }
  if not CFG.undo then env[#env + 1] = "FUZZ_NO_UNDO=1" end
  if build == "sanitize" then
    local function gcc_lib(name)
      local p = io.popen("gcc -print-file-name=" .. name)
      local s = p:read("l")
      p:close()
      return s
    end
    env[#env + 1] = "LD_PRELOAD=" .. shell_quote(gcc_lib("libasan.so") .. " " .. gcc_lib("libubsan.so"))
    -- abort on the first report (with its stack); SIGABRT from the watchdog prints a stack too;
    -- an allocation over 4 GB is a finding (the engine should have refused the size), not a swap storm
    env[#env + 1] = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:handle_abort=1:max_allocation_size_mb=4096:allocator_may_return_null=0"
    env[#env + 1] = "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
  end
  return "env " .. table.concat(env, " ") .. " "
end

local ENV

local function watch(stall, watched, dir, cmd, watchdog_env)
  local out, err = dir .. "/out", dir .. "/err"
  local line = string.format("%s%s %d %s %s %s -- %s%s", watchdog_env or "", shell_quote(ROOT .. "/tools/fuzz_watchdog.sh"), stall,
    shell_quote(watched), shell_quote(out), shell_quote(err), ENV, cmd)
  local ok, how, rc = os.execute(line)
  if how == "signal" then rc = 128 + rc end
  return rc or 0, read(out), read(err)
end

-- a candidate of the minimizer, killed at once when it stops making progress
local function run_script(ops, dir, stall)
  write(dir .. "/cand.lua", script(ops))
  write(dir .. "/progress", "")
  return watch(stall, dir .. "/progress", dir, "FUZZ_JOURNAL=" .. shell_quote(dir .. "/progress") .. " lua5.4 "
    .. shell_quote(dir .. "/cand.lua"), "FUZZ_QUICK_KILL=1 ")
end

-- does this candidate fail the way the original did?
local function same_failure(sig, kind, rc, out, err, hang_op, cand_ops, dir)
  -- an operation on an object whose making was shrunk away is not the same run
  for _, f in ipairs(soft_failures(out)) do
    if f.sig ~= sig and f.kind == "unclean" and f.detail:find("a nil value", 1, true) then return false end
  end
  if kind == "hang" then -- the same operation hangs (the watchdog stopped it there)
    if rc ~= 124 then return false end
    local i = math.tointeger(tonumber(read(dir .. "/progress"):match("%d+") or ""))
    return i ~= nil and cand_ops[i] == hang_op
  end
  if SOFT[kind] then
    for _, f in ipairs(soft_failures(out)) do if f.sig == sig then return true end end
    return false
  end
  local s, k = crash_signature(rc, err)
  if not s then return false end
  if kind == "hang" then return k == "hang" and s:match("^hang in ([%w_?]+)") == sig:match("^hang in ([%w_?]+)") end
  return s == sig
end

-- Zeller and Hildebrandt's ddmin over the operation list: remove complements of n chunks while the
-- failure stays; n doubles when none can go; ends 1-minimal (no single operation can go)
local function ddmin(ops, fails)
  local n = 2
  while #ops >= 2 do
    local chunk = math.ceil(#ops / n)
    local reduced = false
    for i = 1, n do
      local lo, hi = (i - 1) * chunk + 1, math.min(i * chunk, #ops)
      if lo > #ops then break end
      local rest = {}
      for k = 1, #ops do if k < lo or k > hi then rest[#rest + 1] = ops[k] end end
      if #rest > 0 and fails(rest) then
        ops, reduced = rest, true
        n = math.max(n - 1, 2)
        break
      end
    end
    if not reduced then
      if n >= #ops then break end
      n = math.min(#ops, n * 2)
    end
  end
  return ops
end

local function minimize(ops, sig, kind, dir)
  -- a candidate that hangs is known by the operation it stopped in (the last of the journal); no
  -- backtrace needed, and a few seconds without progress are enough (operations take milliseconds)
  local stall = kind == "hang" and 5 or CFG.stall
  local tests = 0
  local function fails(list)
    tests = tests + 1
    local rc, out, err = run_script(list, dir, stall)
    return same_failure(sig, kind, rc, out, err, ops[#ops], list, dir)
  end
  if not fails(ops) then return nil, tests end
  return ddmin(ops, fails), tests
end

local function slug(sig)
  return (sig:lower():gsub("[^%w]+", "_"):gsub("^_+", ""):gsub("_+$", ""):sub(1, 70))
end

-- ---- the campaign --------------------------------------------------------------------------------

local function campaign()
  local function now()
    local p = io.popen("date +%s.%N")
    local t = tonumber(p:read("l"))
    p:close()
    return t
  end
  local wall0 = now()
  local function elapsed() return now() - wall0 end
  os.execute("mkdir -p " .. shell_quote(CFG.out))
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. shell_quote(dir))
  local deadline = CFG.minutes and CFG.minutes * 60 or nil
  local last_seed = CFG.seeds and CFG.seed + CFG.seeds - 1 or nil
  if not deadline and not last_seed then last_seed = CFG.seed + 199 end
  local seed, seeds_run, ops_run, findings, order = CFG.seed, 0, 0, {}, {}
  local function say(...) if not CFG.quiet then io.stderr:write(string.format(...)) end end
  say("fuzz: %s build, %d operations a seed, seeds from %d%s%s%s, findings in %s/\n", CFG.build, CFG.ops, CFG.seed,
    last_seed and (" to " .. last_seed) or "", deadline and string.format(", for %g minutes", CFG.minutes) or "",
    CFG.undo and "" or ", without the undo checks", CFG.out)
  -- a failure of seed `failed` whose journal is `journal`: counted, and a new one shrunk and written
  -- (after_seeds, ops_before: the seeds run up to this one, the operations before its own)
  local function note(failed, journal, after_seeds, ops_before, sig, kind, detail, out, err)
    local ops = journal_ops(journal)
    local f = findings[sig]
    if not f then
      f = { sig = sig, kind = kind, detail = detail, seed = failed, seeds = {}, at = elapsed(), after_seeds = after_seeds,
        after_ops = ops_before + #ops, ops = #ops }
      findings[sig] = f
      order[#order + 1] = sig
      write(CFG.out .. "/" .. slug(sig) .. ".log", string.format("seed %d\n%s\n--- stdout\n%s\n--- stderr\n%s", failed, sig,
        out or "", err or ""))
      say("fuzz: seed %d: %s (%s) after %.0f s\n", failed, sig, detail or "", f.at)
      if CFG.minimize and #ops > 0 then
        local t1 = elapsed()
        local small, tests = minimize(ops, sig, kind, dir)
        if small then
          f.min = #small
          f.path = CFG.out .. "/" .. slug(sig) .. ".lua"
          local header = string.format("-- %s\n-- found by tools/fuzz.lua, seed %d (%d operations), shrunk to %d by ddmin (%d runs, %.0f s)\n"
            .. "-- run: ./impetus fuzz --replay %s\n", sig, failed, #ops, #small, tests, elapsed() - t1, f.path)
          write(f.path, script(small, header))
          say("fuzz:   shrunk to %d operations: %s\n", #small, f.path)
        else
          say("fuzz:   the journal of seed %d does not reproduce it alone (%d operations)\n", failed, #ops)
          write(CFG.out .. "/" .. slug(sig) .. ".full.lua", script(ops, "-- " .. sig .. " (not reproduced alone)\n"))
        end
      end
    end
    f.seeds[#f.seeds + 1] = failed
  end

  while (not last_seed or seed <= last_seed) and (not deadline or elapsed() < deadline) do
    local count = CFG.batch
    if last_seed then count = math.min(count, last_seed - seed + 1) end
    write(dir .. "/seeds", "")
    write(dir .. "/journal", "")
    local batch_start, seeds_before, ops_before = seed, seeds_run, ops_run
    local rc, out, err = watch(CFG.stall, dir .. "/journal", dir, string.format("lua5.4 %s child %d %d %d %s",
      shell_quote(ROOT .. "/tools/fuzz.lua"), seed, count, CFG.ops, shell_quote(dir)))
    local started, done = nil, {}
    for what, s, n in read(dir .. "/seeds"):gmatch("(%a+) (%d+) ?(%d*)") do
      s = tonumber(s)
      if what == "start" then started = s else done[s] = true ops_run = ops_run + tonumber(n) seeds_run = seeds_run + 1 end
    end
    for k, d, s, path in out:gmatch("FUZZ%-FAIL (%S+): ([^\n]-) @seed (%d+) journal (%S+)") do
      s = tonumber(s) -- the seeds of the batch before s ran all their operations
      note(s, read(path), seeds_before + s - batch_start + 1, ops_before + (s - batch_start) * CFG.ops, soft_signature(k, d))
    end
    local sig, kind, detail = crash_signature(rc, err)
    if not sig and rc == 3 then -- a hard failure: the generator wrote an operation that does not compile
      sig, kind, detail = "fuzzer: " .. (out:match("FUZZ%-FAIL generator: ([^\n]*)") or "exit 3"), "generator", ""
    end
    if not sig and rc == 0 then
      seed = seed + count
    else
      local failed = started or seed
      local journal = read(dir .. "/journal")
      seeds_run = seeds_run + 1
      ops_run = ops_run + #journal_ops(journal)
      note(failed, journal, seeds_run, ops_run - #journal_ops(journal), sig or ("child failed (status " .. rc .. ")"), kind, detail, out, err)
      seed = failed + 1
    end
  end
  os.execute("rm -rf " .. shell_quote(dir))
  local wall = elapsed()
  print(string.format("fuzz: %d seeds, %d operations in %.0f s (%s build%s): %d distinct failure(s)", seeds_run, ops_run,
    wall, CFG.build, CFG.undo and "" or ", no undo checks", #order))
  for _, sig in ipairs(order) do
    local f = findings[sig]
    print(string.format("  %s\n    first at seed %d after %d seeds / %d operations / %.0f s; %d seed(s) hit it%s", sig, f.seed,
      f.after_seeds, f.after_ops, f.at, #f.seeds, f.path and string.format("; minimized to %d operations: %s", f.min, f.path) or ""))
  end
  return #order == 0 and 0 or 1
end

-- ---- command line --------------------------------------------------------------------------------

local args = { ... }
if args[1] == "child" then
  child(tonumber(args[2]), tonumber(args[3]), tonumber(args[4]), args[5])
  os.exit(0)
end

local i = 1
local replay
while args[i] do
  local a = args[i]
  local function value() i = i + 1 return (assert(args[i], a .. " needs a value")) end
  if a == "--minutes" then CFG.minutes = tonumber(value())
  elseif a == "--seeds" then CFG.seeds = math.tointeger(tonumber(value()))
  elseif a == "--seed" then CFG.seed = math.tointeger(tonumber(value()))
  elseif a == "--ops" then CFG.ops = math.tointeger(tonumber(value()))
  elseif a == "--batch" then CFG.batch = math.tointeger(tonumber(value()))
  elseif a == "--stall" then CFG.stall = math.tointeger(tonumber(value()))
  elseif a == "--build" then CFG.build = value()
  elseif a == "--out" then CFG.out = value()
  elseif a == "--no-minimize" then CFG.minimize = false
  elseif a == "--quiet" then CFG.quiet = true
  elseif a == "--no-undo" then CFG.undo = false
  elseif a == "--replay" then replay = value()
  elseif a == "--script" then -- print the standalone script of one seed: --script SEED
    CFG.script = math.tointeger(tonumber(value()))
  else
    io.stderr:write("fuzz: unknown argument " .. a .. "\n")
    os.exit(2)
  end
  i = i + 1
end
ENV = env_prefix(CFG.build)

if replay then
  local ok, how, rc = os.execute(ENV .. "lua5.4 " .. shell_quote(replay))
  os.exit(rc or 1)
elseif CFG.script then
  -- regenerate seed CFG.script's journal in a child and print it as a script
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. shell_quote(dir))
  watch(CFG.stall, dir .. "/journal", dir, string.format("lua5.4 %s child %d 1 %d %s", shell_quote(ROOT .. "/tools/fuzz.lua"),
    CFG.script, CFG.ops, shell_quote(dir)))
  io.write(script(journal_ops(read(dir .. "/journal")), string.format("-- seed %d, %d operations\n", CFG.script, CFG.ops)))
  os.execute("rm -rf " .. shell_quote(dir))
  os.exit(0)
end
os.exit(campaign())
