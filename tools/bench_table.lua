-- tools/bench_table.lua: every benchmark scene in scenes/bench/ in one table (run by `./impetus bench` with no
-- scene, from the checkout's root, after the release build).
--
--   lua5.4 tools/bench_table.lua [--steps N] [--host PATH]
--
-- Each scene runs in its own host process (`impetus --bench scene --steps N`), so one scene's memory and
-- caches do not weigh on the next. N is the scene's own: the `--steps N` of its "Run:" comment line, or the
-- host's default of 300; --steps overrides every scene's. The columns are the host's --bench figures: the
-- median wall time of a step, then the per-stage means (ms/step): particle integration (forces, solves and
-- the implicit matrix included), particle collisions, rigid bodies (solver and integration), broad + narrow
-- phase. Where bench/peers/peers is built (make -C bench/peers, needs libode-dev and libbullet-dev), the
-- scenes the peer benchmark also builds get a row with every body awake, as the peers run them, with ODE
-- QuickStep's and Bullet's median ms/step from the same run (pile_1000: "pile", pyramid_20: "pyramid",
-- capsule_chain_core: "chain").
local HOST_DEFAULT_STEPS = 300
local PEER_SCENE = { pile_1000 = "pile", pyramid_20 = "pyramid", capsule_chain_core = "chain" }
local PEERS = "bench/peers/peers"

local steps_override, host = nil, "build/release/bin/impetus"
local i = 1
while arg[i] do
  local a = arg[i]
  if a == "--steps" then
    steps_override = math.tointeger(tonumber(arg[i + 1] or ""))
    if not steps_override or steps_override < 1 then error("bench_table: --steps needs a whole number >= 1", 0) end
    i = i + 1
  elseif a == "--host" then
    host = arg[i + 1] or error("bench_table: --host needs a path", 0)
    i = i + 1
  else
    error("bench_table: unknown argument " .. a .. " (usage: bench_table.lua [--steps N] [--host PATH])", 0)
  end
  i = i + 1
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function read_all(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok, code
end

-- the scenes, sorted by name
local scenes = {}
for path in read_all("ls scenes/bench/*.lua 2>/dev/null"):gmatch("[^\n]+") do scenes[#scenes + 1] = path end
if #scenes == 0 then error("bench_table: no scenes in scenes/bench/ (run from the checkout's root)", 0) end

-- the steps a scene's "Run:" line asks for (the line may wrap onto the next comment line)
local function scene_steps(path)
  local f = assert(io.open(path, "r"))
  local head = {}
  for line in f:lines() do
    if not line:match("^%-%-") then break end
    head[#head + 1] = line
  end
  f:close()
  local text = table.concat(head, "\n")
  local run = text:match("Run:(.*)")
  return run and math.tointeger(tonumber(run:match("%-%-steps%s+(%d+)"))) or HOST_DEFAULT_STEPS
end

-- one --bench run: the median and the stage means, or nil and the error text
local function bench(path, steps, awake)
  local out, ok = read_all(string.format("%s%s --bench %s --steps %d 2>&1", awake and "IMPETUS_SLEEP=0 " or "",
    shell_quote(host), shell_quote(path), steps))
  local median = tonumber(out:match(": ([%d.]+) ms/step"))
  if not ok or not median then return nil, (out:gsub("\n+$", "")) end
  local r = { median = median, steps = steps }
  r.integrate, r.collide = out:match("profile %(mean ms%): integrate ([%d.]+)%s+collide ([%d.]+)")
  r.bodies, r.contacts = out:match("bodies %(mean ms%): integrate ([%d.]+)%s+broad %+ narrow phase ([%d.]+)")
  return r
end

-- the peers' medians by peer scene and engine, when the peer program is built
local peers = {}
local have_peers = io.open(PEERS, "r")
if have_peers then
  have_peers:close()
  local wanted = {}
  for _, p in pairs(PEER_SCENE) do wanted[p] = true end
  for scene in pairs(wanted) do
    local out = read_all(shell_quote(PEERS) .. " " .. scene .. " 2>/dev/null")
    for engine, name, ms in out:gmatch("(%S+) (%S+): ([%d.]+) ms/step") do
      peers[name] = peers[name] or {}
      peers[name][engine] = tonumber(ms)
    end
  end
end

local function cell(v) return v and string.format("%.3f", tonumber(v)) or "-" end

local header = string.format("%-26s %6s %10s %10s %10s %10s %10s", "scene", "steps", "median", "particles",
  "p.collide", "bodies", "broad+nar")
if have_peers then header = header .. string.format(" %10s %10s", "ODE", "Bullet") end
print("ms/step (median of the steps; stages: mean)   " .. os.date("!%Y-%m-%d %H:%M UTC"))
print(header)
local failed = 0
-- a scene the peers also run gets a second row with sleeping off (IMPETUS_SLEEP=0), as the peers run it, and
-- their medians go on that row
local rows = {}
for _, path in ipairs(scenes) do
  local name = path:match("([^/]+)%.lua$")
  rows[#rows + 1] = { path = path, name = name }
  if PEER_SCENE[name] then rows[#rows + 1] = { path = path, name = name .. " awake", awake = true, peer = PEER_SCENE[name] } end
end
for _, row in ipairs(rows) do
  local r, err = bench(row.path, steps_override or scene_steps(row.path), row.awake)
  if not r then
    failed = failed + 1
    print(string.format("%-26s failed: %s", row.name, err))
  else
    local line = string.format("%-26s %6d %10s %10s %10s %10s %10s", row.name, r.steps, cell(r.median), cell(r.integrate),
      cell(r.collide), cell(r.bodies), cell(r.contacts))
    if have_peers then
      local p = peers[row.peer or ""] or {}
      line = line .. string.format(" %10s %10s", cell(p.ode or p.ode_quick), cell(p.bullet))
    end
    print(line)
  end
  io.stdout:flush()
end
if not have_peers then print("(ODE and Bullet columns: build bench/peers with make -C bench/peers)") end
os.exit(failed == 0 and 0 or 1)
