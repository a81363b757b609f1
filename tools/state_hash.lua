-- tools/state_hash.lua: run fixed scenes headless and print a hash of each final state.
--
--   ./impetus hash                       every scene in scenes/ and the fixed bench scenes, 300 steps each
--   ./impetus hash scenes/ragdoll.lua    one scene (more paths: more scenes)
--   STEPS=600 ./impetus hash ...         another step count
--   ./impetus hash --check               compare with tools/state_hashes.txt (the last recorded
--                                        hashes); lists the scenes that differ, exits 1 if any
--
-- The hash is scripts/impetus/state_hash.lua's: every particle, body, contact point with its warm-start
-- impulses and constraint multiplier, time and step count, numbers by their exact bits ("%a"), so two
-- builds that agree here agree to the last bit. A change meant to move no computation (a pure move of
-- code) must leave every line as it was.
local core = require "impetus.core"
local runner_mod = require "impetus.runner"
local state_hash = require "impetus.state_hash" -- the state and its hash

-- the hash after `steps` steps; a scene that stops on a script error is hashed where it stopped
-- (the error is reported beside the hash, so a change of behaviour there still shows)
local function hash_scene(path, steps)
  math.randomseed(1)
  local r = runner_mod.new(path, { seed = 1 }) -- impetus.random as math.random: the same numbers every run
  r:start()
  if not r.world then return nil, r.error end
  local done = 0
  while done < steps and r:step() do done = done + 1 end
  local h = state_hash.hash(r.world)
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
  { "scenes/bench/particles_10k_pile.lua", 60 },
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
