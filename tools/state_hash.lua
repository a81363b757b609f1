-- tools/state_hash.lua: run fixed scenes headless and print a hash of each final state.
--
--   ./impetus hash                       every scene in scenes/ and the fixed bench scenes, 300 steps each
--   ./impetus hash scenes/ragdoll.lua    one scene (more paths: more scenes)
--   STEPS=600 ./impetus hash ...         another step count
--   ./impetus hash --check               compare with tools/state_hashes.txt (the last recorded
--                                        hashes); lists the scenes that differ, exits 1 if any
--
-- The hash covers what the next step starts from and what a script can read: every particle's
-- position and velocity (and a curve particle's u, u'), every body's state vector x q P L, the
-- touching pairs with their points, depths and the impulses the contact solver kept (its warm
-- start), every constraint's multipliers, time and step count. Numbers enter
-- by their exact bits ("%a"), so two builds that agree here agree to the last bit. A change meant
-- to move no computation (a pure move of code) must leave every line as it was.
local core = require "impetus.core"
local runner_mod = require "impetus.runner"

-- FNV-1a, 64 bits (Lua integers wrap on overflow, as the algorithm wants)
local function fnv(h, s)
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end

local function put(buf, x)
  local t = type(x)
  if t == "number" then buf[#buf + 1] = string.format("%a", x)
  elseif t == "table" then for i = 1, #x do put(buf, x[i]) end
  elseif t == "boolean" then buf[#buf + 1] = tostring(x)
  elseif t ~= "nil" then buf[#buf + 1] = tostring(x) end
end

local function state_string(world)
  local buf = {}
  put(buf, world.time)
  put(buf, world.steps)
  for _, p in ipairs(world:particles()) do
    put(buf, p.position)
    put(buf, p.velocity)
    if p.on_curve then put(buf, p.u) put(buf, p.udot) end
  end
  put(buf, world:body_state())
  for _, c in ipairs(world:contacts()) do
    put(buf, c.normal)
    put(buf, c.age)
    for _, pt in ipairs(c.points) do
      put(buf, pt.point) put(buf, pt.depth) put(buf, pt.impulse) put(buf, pt.friction)
    end
  end
  for _, c in ipairs(world:constraints()) do put(buf, c.lambda) end
  return table.concat(buf, " ")
end

-- the hash after `steps` steps; a scene that stops on a script error is hashed where it stopped
-- (the error is reported beside the hash, so a change of behaviour there still shows)
local function hash_scene(path, steps)
  math.randomseed(1)
  local r = runner_mod.new(path)
  r:start()
  if not r.world then return nil, r.error end
  local done = 0
  while done < steps and r:step() do done = done + 1 end
  local h = string.format("%016x", fnv(0xcbf29ce484222325, state_string(r.world)))
  if r.error then h = h .. string.format("  (stopped at step %d: %s)", done, tostring(r.error):gsub("\n.*", "")) end
  return h
end

local function scenes_in(dir)
  local list = {}
  local p = io.popen("ls " .. dir .. "/*.lua 2>/dev/null")
  for line in p:lines() do list[#list + 1] = line end
  p:close()
  return list
end

-- the bench scenes that are small enough to run in the test budget, with their step counts
local BENCH = {
  { "scenes/bench/pile_1000.lua", 120 },
  { "scenes/bench/pyramid_20.lua", 200 },
  { "scenes/bench/capsule_chain_core.lua", 300 },
  { "scenes/bench/qp_stack10.lua", 200 },
  { "scenes/bench/cloth_32.lua", 100 },
  { "scenes/bench/hub_100.lua", 200 },
  { "scenes/bench/hulls_1k.lua", 20 },
  { "scenes/bench/springs_10k.lua", 50 },
}

local args = { ... }
local check = false
if args[1] == "--check" then check = true table.remove(args, 1) end
local default_steps = tonumber(os.getenv("STEPS") or "") or 300
local jobs = {}
if #args > 0 then
  for _, a in ipairs(args) do jobs[#jobs + 1] = { a, default_steps } end
else
  for _, s in ipairs(scenes_in("scenes")) do jobs[#jobs + 1] = { s, default_steps } end
  for _, b in ipairs(BENCH) do jobs[#jobs + 1] = b end
end

local recorded = {}
if check then
  local f = assert(io.open("tools/state_hashes.txt"), "no tools/state_hashes.txt to check against")
  for line in f:lines() do
    local path, steps, rest = line:match("^(%S+)%s+(%d+)%s+(.*)$")
    if path then recorded[path .. "@" .. steps] = rest end
  end
  f:close()
end

local failed = 0
for _, job in ipairs(jobs) do
  local h, err = hash_scene(job[1], job[2])
  local line = string.format("%-40s %5d  %s", job[1], job[2], h or ("error: " .. tostring(err):gsub("\n.*", "")))
  if check then
    local want = recorded[job[1] .. "@" .. job[2]]
    if want ~= (h or "") then
      failed = failed + 1
      print(line .. "\n" .. string.rep(" ", 48) .. "recorded: " .. tostring(want))
    end
  else
    if not h then failed = failed + 1 end
    print(line)
  end
end
if check then print(failed == 0 and "all hashes as recorded" or (failed .. " scene(s) differ from tools/state_hashes.txt")) end
os.exit(failed == 0 and 0 or 1)
