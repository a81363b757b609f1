-- fuzz_scene.lua: the fuzzer's operation on scene files: a scene with hostile settings (dt, title,
-- camera, background, grid, debug) and callbacks that fail or return garbage, run headless by
-- impetus.runner (start, step, advance, restart), as the host does, through the prelude's SCENE. A
-- runner reports a script error in runner.error; any error it raises must still be clean.
local M = {}

local SETTINGS = {
  dt = { "1/60", "1/240", "0", "-1", "(0/0)", "1e-300", "1e308", '"abc"', "{}", "true" },
  title = { '"fuzz"', "{}", "42", "true", '""', "print" },
  background = { "{0.1, 0.1, 0.1}", '"red"', "{}", "{(0/0), 0, 0}", "{1, 2}", "7" },
  grid = { "true", "false", '"yes"', "{}", "0" },
  debug = { "{contacts = true}", "{}", "true", '"all"', "{aabbs = 1}" },
  camera = { "{eye = {6, 4, 10}, target = {0, 1, 0}}", "{eye = {0, 0, 0}, target = {0, 0, 0}}",
    "{mode = '2d', center = {0, 5}, height = 10}", "{mode = '2d', height = 0}", "{mode = '2d', height = -1e308}",
    "{eye = {(0/0), 0, 0}}", '"top"', "{}", "{mode = 'fisheye'}" },
}
local SETTING_NAMES = { "dt", "title", "background", "grid", "debug", "camera" }

local SETUPS = {
  "function(world) world:particle{position = {0, 1, 0}} world:plane{} end",
  "function(world) world:box{size = {1, 1, 1}, position = {0, 2, 0}} world:box{static = true, size = {10, 1, 10}} end",
  "function(world) error('setup fails') end",
  "function(world) return 42 end",
  "function(world) world.contact = 'qp' world:sphere{radius = 0.5, position = {0, 1, 0}} end",
  "function(world) world:field(function() error('field fails') end) world:particle{} end",
  "42",
}
local UPDATES = {
  "function(world, dt) end", "function(world, dt) error('update fails') end",
  "function(world, dt) world:step(dt) end", "function(world, dt) return {} end", "'update'",
  "function(world, dt) collectgarbage() end",
}

-- an operation: the source of a scene file (as a long string) given to a runner, stepped
function M.generate(r)
  local parts = {}
  for _, name in ipairs(SETTING_NAMES) do
    if r.chance(0.4) then parts[#parts + 1] = name .. " = " .. r.pick(SETTINGS[name]) end
  end
  parts[#parts + 1] = "setup = " .. r.pick(SETUPS)
  if r.chance(0.6) then parts[#parts + 1] = "update = " .. r.pick(UPDATES) end
  if r.chance(0.2) then parts[#parts + 1] = "on_reload = function(world) error('reload fails') end" end
  local scene = "return { " .. table.concat(parts, ", ") .. " }"
  local steps = r.int(1, 30)
  local advance = r.pick { "1/60", "0.5", "0", "-1", "(0/0)", "1e308", "1e-300" }
  return string.format("SCENE(%q, %d, %s, %s)", scene, steps, advance, r.chance(0.3) and "true" or "false")
end

return M
