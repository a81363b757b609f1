-- fuzz_prelude.lua: the runtime of a fuzzed operation list. tools/fuzz.lua runs its generated
-- operations on it, and every script the minimizer writes starts with a copy of this file, so a
-- reproduction runs the same checks as the campaign that found it. Needs `require "impetus"`.
--
-- Globals the operations use: W (worlds), H (handles by kind: p particles, s springs, bh
-- behaviours, f fields, c colliders, k constraints, b bodies, cl cloths, hr hairs, j joints,
-- qj QP joint indices), CB(kind) (a callback), PRESOLVE(...) (a pre_solve callback), STEP(world, dt),
-- ARM(n), ACCEPT_NOT(what, fn), MUT(list, k, v), SCENE(source, steps, advance, restart).
--
-- A failure prints a line "FUZZ-FAIL <kind>: <detail>" and the run goes on; RUN exits with status 3
-- at the end when there was one:
--   unclean     an operation raised an error that is not a clean Lua error of the API (an internal
--               error of the Lua layer, a non-string error object, "attempt to ...", out of memory)
--   nan         a step returned and left a non-finite position, velocity or body state (the NaN
--               guard let it through)
--   undo        a step whose script callback failed left the world different from before it
--   undo-drift  the run with its callback-failed steps differs, at the end, from the same run
--               without them (a cache the failed step touched was not restored)
--   accepted    an operation with an argument the documentation refuses returned without error
impetus = require "impetus"

FUZZ = { calls = 0, arm = nil, in_step = false, op = 0, stepno = 0, failed = {}, callbacks = 0 }

local journal_path = os.getenv("FUZZ_JOURNAL")
-- FUZZ_NO_UNDO=1 (tools/fuzz.lua --no-undo) leaves out the undo and undo-drift checks (and the second
-- run FUZZ_DRIFT makes for a run with failed steps): a campaign that looks only for crashes, hangs,
-- unclean errors and non-finite state runs faster without them
local check_undo = os.getenv("FUZZ_NO_UNDO") == nil

-- a failure is printed and the run goes on (so that a later failure can still be reached); RUN
-- exits with status 3 at the end when there was one. A campaign's child replaces FUZZ_SOFT to
-- keep a copy of its journal with each.
function FUZZ_SOFT(kind, detail)
  FUZZ.failures = (FUZZ.failures or 0) + 1
  io.stdout:write(string.format("FUZZ-FAIL %s: %s\n", kind, (tostring(detail):gsub("\n", "\\n"))))
  io.stdout:flush()
end

function FUZZ_FAIL(kind, detail)
  if kind ~= "generator" then return FUZZ_SOFT(kind, detail) end
  io.stdout:write(string.format("FUZZ-FAIL %s: %s\n", kind, (tostring(detail):gsub("\n", "\\n"))))
  io.stdout:flush()
  os.exit(3)
end

function FUZZ_RESET()
  W = { impetus.world() }
  H = { p = {}, s = {}, bh = {}, f = {}, c = {}, k = {}, b = {}, cl = {}, hr = {}, j = {}, qj = {} }
  FUZZ.calls, FUZZ.arm, FUZZ.in_step, FUZZ.op, FUZZ.stepno = 0, nil, false, 0, 0
  FUZZ.callbacks, FUZZ.outside, FUZZ.changed_outside = 0, nil, false
  collectgarbage()
end

-- ARM(n): the n-th script callback called inside a step from now raises an error (once)
function ARM(n)
  if FUZZ.replaying then return end -- FUZZ_DRIFT's run without the armed failures
  FUZZ.arm = n
end

local function armed_failure()
  if FUZZ.in_step and FUZZ.arm then
    FUZZ.arm = FUZZ.arm - 1
    if FUZZ.arm <= 0 then
      FUZZ.arm = nil
      FUZZ.tripped = true
      error("fuzz: armed callback failure")
    end
  end
end

local GARBAGE = { "abc", {}, true, 0 / 0, 1 / 0, -1 / 0, 1e308, -1e308, math.mininteger, print }

-- CB(kind [, n]): a callback for world:field, behaviours, constraints and curves. Every kind is a
-- pure function of its arguments and of the armed countdown, so a replay calls it identically.
--   "ok"       returns small finite numbers (a field's force, C and gradients, a curve point)
--   "garbage"  returns values of the wrong type, NaN, inf or huge numbers, or nothing
--   "fail"     always raises an error      "errobj"  raises a table as the error object
--   "locked"   changes the world from inside its step (must be refused)
--   "gc"       runs a full garbage collection inside the step (at its first call in each step; a
--              basic incremental step at the others: a field is called for every particle in every
--              evaluation, and a full collection each time made a cloth's step take seconds)
function CB(kind, n)
  FUZZ.callbacks = FUZZ.callbacks + 1
  n = n or 1
  local g = GARBAGE[(n - 1) % #GARBAGE + 1]
  if kind == "ok" then
    return function(...)
      FUZZ.calls = FUZZ.calls + 1
      armed_failure()
      local a = ...
      if type(a) == "table" then -- a constraint C(x1, ...) or behaviour: C, gradients
        local c = (a[1] or 0) * 0.1
        local grads = {}
        for i = 1, select("#", ...) do grads[i] = { 0.1, 0, 0 } end
        return c, table.unpack(grads)
      elseif type(a) == "number" and select("#", ...) == 1 then -- a curve x(u)
        return { math.cos(a), math.sin(a), 0 }
      end
      return 0.5, -1, 0.25 -- a field's force
    end
  elseif kind == "garbage" then
    return function(...)
      FUZZ.calls = FUZZ.calls + 1
      armed_failure()
      if n % 3 == 0 then return end
      if n % 3 == 1 then return g, g, g, g end
      return { g, g, g }, { g }, g
    end
  elseif kind == "fail" then
    return function() FUZZ.calls = FUZZ.calls + 1 error("fuzz: callback failure " .. n) end
  elseif kind == "errobj" then
    return function() FUZZ.calls = FUZZ.calls + 1 error({ n }) end
  elseif kind == "locked" then
    local last_step = nil
    return function()
      FUZZ.calls = FUZZ.calls + 1
      armed_failure()
      local w = W[(n - 1) % #W + 1]
      if w then
        -- another world than the one stepping takes the change: a failed step's undo cannot take
        -- that back, so the drift check must not count on it
        if w ~= FUZZ.stepping then FUZZ.outside = FUZZ.stepno end
        -- another world takes the change once per outer step, not at each of the many force
        -- evaluations of an adaptive step (12,000 a step for a cloth: a particle made at each, or a
        -- step of that world at each, is slow work, not a hang, and would stall the watchdog); the
        -- stepping world itself is asked at every call, and refuses at once
        if last_step ~= FUZZ.stepno or w == FUZZ.stepping then
          last_step = FUZZ.stepno
          if n % 2 == 0 then w:particle {} else w:step(1 / 60) end
        end
      end
      return 0, 0, 0
    end
  elseif kind == "gc" then
    local last_step = nil
    return function()
      FUZZ.calls = FUZZ.calls + 1
      armed_failure()
      if last_step ~= FUZZ.stepno then
        last_step = FUZZ.stepno
        collectgarbage()
      else
        collectgarbage("step", 0)
      end
      return 0, 0, 0
    end
  end
  error("CB: unknown kind " .. tostring(kind))
end

-- the world's state as a string of exact bits (tools/state_hash.lua's picture of the state)
local function put(buf, x)
  local t = type(x)
  if t == "number" then buf[#buf + 1] = string.format("%a", x)
  elseif t == "table" then for i = 1, #x do put(buf, x[i]) end
  elseif t == "boolean" then buf[#buf + 1] = tostring(x) end
end

local function lua_state(w)
  local buf = {}
  put(buf, w.time) put(buf, w.steps)
  for _, p in ipairs(w:particles()) do
    put(buf, p.position) put(buf, p.velocity)
    if p.on_curve then put(buf, p.u) put(buf, p.udot) end
  end
  put(buf, w:body_state())
  for _, c in ipairs(w:contacts()) do
    put(buf, c.normal) put(buf, c.age)
    for _, pt in ipairs(c.points) do put(buf, pt.point) put(buf, pt.depth) put(buf, pt.impulse) put(buf, pt.friction) end
  end
  for _, c in ipairs(w:constraints()) do put(buf, c.lambda) end
  return table.concat(buf, " ")
end

-- where two states differ: the first differing byte after the snapshot's header (whose checksum
-- differs whenever anything does) and the last section tag before it
function FUZZ_DIFF(a, b)
  local i = a:sub(1, 7) == "IMPSNAP" and b:sub(1, 7) == "IMPSNAP" and 49 or 1 -- (snapshot.c's 48-byte header)
  while i <= #a and a:sub(i, i) == b:sub(i, i) do i = i + 1 end
  if a:sub(1, 7) ~= "IMPSNAP" then return string.format("byte %d of %d and %d: %q", i, #a, #b, a:sub(i, i + 30)) end
  local tag = "?"
  for t in a:sub(49, i):gmatch("%u%u%u%u") do tag = t end
  return string.format("byte %d of %d and %d, in section %s", i, #a, #b, tag)
end

-- the world's whole state: its snapshot's bytes (every object, setting, contact and cache a later
-- step reads), made in C, so a world of thousands of particles costs no more than a copy; the
-- picture above where a snapshot cannot be taken. (Within one run: the same world before and after
-- a failed step.)
function FUZZ_STATE(w)
  local ok, snap = pcall(w.snapshot, w)
  if not ok then return lua_state(w) end
  local bytes = snap:encode()
  snap:release()
  return bytes
end

local function finite(x) return x == x and x ~= 1 / 0 and x ~= -1 / 0 end

local function check_finite(w)
  for i, p in ipairs(w:particles()) do
    for _, key in ipairs { "position", "velocity" } do
      local v = p[key]
      for k = 1, 3 do
        if not finite(v[k]) then
          return FUZZ_FAIL("nan", string.format("particle %d %s[%d] = %s after a step", i, key, k, tostring(v[k])))
        end
      end
    end
  end
  for i, x in ipairs(w:body_state()) do
    if not finite(x) then return FUZZ_FAIL("nan", string.format("body state entry %d = %s after a step", i, tostring(x))) end
  end
end

-- STEP(world, dt): world:step with the step oracles: a callback failure leaves the world as it
-- was; a step that returns leaves finite state
function STEP(w, dt)
  FUZZ.stepno = FUZZ.stepno + 1
  if FUZZ.replaying and FUZZ.failed[FUZZ.stepno] then
    error("fuzz: this step failed in the first run", 0) -- and ends its operation as it did there
  end
  local before = check_undo and FUZZ.callbacks > 0 and type(w) == "userdata" and pcall(FUZZ_STATE, w) and FUZZ_STATE(w) or nil
  FUZZ.in_step, FUZZ.tripped, FUZZ.stepping = true, false, w
  local ok, a, b = pcall(w.step, w, dt)
  FUZZ.in_step, FUZZ.stepping = false, nil
  if not ok then
    if before and type(a) == "string" and a:find("a script callback failed", 1, true) then
      local after = FUZZ_STATE(w)
      if after ~= before then
        FUZZ_FAIL("undo", "the world changed across a failed step: " .. FUZZ_DIFF(before, after))
      end
      if FUZZ.tripped then FUZZ.failed[FUZZ.stepno] = true end
      if FUZZ.outside == FUZZ.stepno then FUZZ.changed_outside = true end -- (FUZZ_DRIFT)
    end
    error(a, 0)
  end
  check_finite(w)
  return a, b
end

-- PRESOLVE(n, enabled, friction, restitution, tangent_velocity): a world.pre_solve callback that reads
-- the contact and writes the values given (hostile ones make the binding raise, which fails the step),
-- by n: every contact, those whose shape indices sum to an odd number, or none; it fails when armed,
-- like CB's, and is otherwise a pure function of the contact (a replay calls it identically)
function PRESOLVE(n, enabled, friction, restitution, tangent_velocity)
  FUZZ.callbacks = FUZZ.callbacks + 1
  return function(world, c)
    FUZZ.calls = FUZZ.calls + 1
    armed_failure()
    local _ = c.a, c.b, c.normal, c.points
    local odd = ((math.tointeger(c.shape_a) or 1) + (math.tointeger(c.shape_b) or 1)) % 2 == 1
    if n % 3 == 0 or (n % 3 == 1 and not odd) then return end
    c.enabled, c.friction, c.restitution, c.tangent_velocity = enabled, friction, restitution, tangent_velocity
    if n % 5 == 0 then return GARBAGE[(n - 1) % #GARBAGE + 1] end -- a return value pre_solve ignores
  end
end

-- MUT(list, k, v): list with entry k set to v (a hostile state vector for set_body_state)
function MUT(list, k, v)
  if type(list) == "table" and math.type(k) == "integer" and k >= 1 and k <= #list + 1 then list[k] = v end
  return list
end

-- SCENE(source, steps, advance, restart): a scene file run headless by impetus.runner, as the host
-- runs it (tools/fuzz_scene.lua writes these operations); the runner reports a script error in
-- runner.error and must not raise one
function SCENE(src, steps, advance, restart)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(src)
  f:close()
  local ok, err = pcall(function()
    local r = impetus.runner(path)
    r:start()
    for _ = 1, steps do if not r:step() then break end end
    r:advance(advance)
    if restart then r:restart() r:step() end
    if r.error ~= nil and type(r.error) ~= "string" then FUZZ_FAIL("unclean", "runner.error is a " .. type(r.error)) end
  end)
  os.remove(path)
  if not ok then error(err, 0) end
end

-- ACCEPT_NOT(what, fn): fn passes an argument the documentation refuses; returning is a failure
function ACCEPT_NOT(what, fn)
  local ok, err = pcall(fn)
  if ok then return FUZZ_FAIL("accepted", what) end
  error(err, 0) -- the operation's own check looks at the error
end

-- the error of an operation is clean when it is a string raised by the API with no internal
-- source position (the engine's errors come from C, the Lua layer's name their function)
function FUZZ_CLEAN(err)
  if type(err) == "table" and math.type(err[1]) == "integer" then return true end -- CB("errobj")'s own
  if type(err) ~= "string" then return false, "a " .. type(err) .. " error object" end
  local first = err:match("^[^\n]*")
  -- a field called as a method (h:particles() on a handle whose particles is a list) is the
  -- script's own mistake, which Lua itself reports
  if first:match("attempt to call a %a+ value %(method '[%w_]+'%)$") and not first:find("impetus/", 1, true) then return true end
  if first:find("attempt to ", 1, true) or first:find("stack overflow", 1, true)
    or first:find("not enough memory", 1, true) or first:find("(null)", 1, true) then
    return false, first
  end
  -- a position in the Lua layer (scripts/impetus/*.lua) or in the fuzzer's own code is an
  -- internal error, unless it is the API's own argument check ("impetus.x: ...")
  local where, rest = first:match("^([^:]+%.lua:%d+): (.*)$")
  if where and not rest:match("^impetus[%.%w_]*:") and not rest:match("^[%w_]+[:%.][%w_]+")
    and not rest:match("^fuzz: ") then -- a failure of the script's own callback, passed on
    return false, first
  end
  return true
end

-- FUZZ_OP(i, fn): operation i, protected; an error must be clean
function FUZZ_OP(i, fn)
  FUZZ.op = i
  local ok, err = pcall(fn)
  if not ok then
    local clean, why = FUZZ_CLEAN(err)
    if not clean then FUZZ_FAIL("unclean", "operation " .. i .. ": " .. why) end
  end
end

local function run_ops(ops, skip)
  for i, fn in ipairs(ops) do
    if not (skip and skip[i]) then
      if FUZZ_PROGRESS then FUZZ_PROGRESS(i) end
      if journal_path then -- progress for the watchdog of tools/fuzz.lua
        local f = io.open(journal_path, "w")
        f:write(i, "\n")
        f:close()
      end
      FUZZ_OP(i, fn)
    end
  end
end

-- what every world the operations made (W[1] .. W[8]) shows at the end, one string each: the
-- picture of lua_state, since two runs compare (a snapshot's bytes hold the padding of the structures
-- it copies, which two processes may fill differently)
local function final_state()
  local s = {}
  for i = 1, 8 do
    s[i] = type(W[i]) == "userdata" and pcall(lua_state, W[i]) and lua_state(W[i]) or ""
  end
  return s
end

-- FUZZ_DRIFT(ops): the differential check of undo. ops run again from the start with ARM doing
-- nothing, and each step that failed by an armed callback in the first run skipped (it raises
-- as it did, so its operation ends at the same place): a failed step that left the world exactly
-- as it was makes no difference to anything after it.
function FUZZ_DRIFT(ops)
  -- a failed step whose callback changed another world: the run without it differs there by design
  if not check_undo or next(FUZZ.failed) == nil or FUZZ.changed_outside then return end
  local with_failures = final_state()
  local failed = FUZZ.failed
  FUZZ_RESET()
  FUZZ.failed, FUZZ.replaying = failed, true
  run_ops(ops)
  FUZZ.replaying = false
  local without = final_state()
  for i = 1, 8 do
    if without[i] ~= with_failures[i] then
      FUZZ_FAIL("undo-drift", string.format("the run with its failed steps differs from the run without them in W[%d] at %s",
        i, FUZZ_DIFF(with_failures[i], without[i])))
      break
    end
  end
end

-- RUN(ops): every operation protected, then the differential check of undo
function RUN(ops)
  FUZZ_RESET()
  FUZZ.failed = {}
  run_ops(ops)
  FUZZ_DRIFT(ops)
  if (FUZZ.failures or 0) > 0 then os.exit(3) end
  print("FUZZ-OK " .. #ops .. " operations")
end

FUZZ_RESET()
