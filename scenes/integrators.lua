-- scenes/integrators.lua: one system, three integrators side by side. Each column is an elastic
-- pendulum (a particle on an undamped spring from a fixed pivot) with the same start, stepped with
-- Euler, midpoint and RK4 at the same dt. Its total energy should stay constant: the plot shows
-- Euler gaining energy, midpoint drifting slowly, and RK4 holding it.
local ui = require "impetus.ui"

local METHODS = {
  { name = "euler", color = { 1.0, 0.45, 0.35, 1 }, x = -3 },
  { name = "midpoint", color = { 1.0, 0.85, 0.3, 1 }, x = 0 },
  { name = "rk4", color = { 0.4, 0.85, 1.0, 1 }, x = 3 },
}
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
-- S.systems: one world per method; the first is the scene's own world
local HISTORY = 600  -- samples kept for the plot

local function build(world, m)
  world.integrator = m.name
  world.gravity = { 0, -9.81, 0 }
  local pivot = world:particle { position = { m.x, 3.5, 0 }, fixed = true, radius = 0.06, color = { 0.8, 0.8, 0.8, 1 } }
  local bob = world:particle { position = { m.x + 1.2, 3.2, 0.3 }, mass = 1, radius = 0.15, color = m.color }
  world:spring(pivot, bob, { ks = 40, kd = 0, rest = 1.2 })
  return { world = world, method = m, energy = {}, bob = bob }
end

return {
  title = "Euler, midpoint and RK4 side by side",
  dt = 1 / 60,
  camera = { eye = { 0, 2.2, 9.5 }, target = { 0, 2, 0 } },

  setup = function(world)
    S.systems = {}
    for i, m in ipairs(METHODS) do
      S.systems[i] = build(i == 1 and world or require("impetus").world(), m)
    end
  end,

  -- the scene's own world is stepped by the runner; the other two step here, in lockstep.
  -- Energies are sampled first, when all three worlds are at the same time.
  update = function(world, dt)
    for i, s in ipairs(S.systems) do
      local hist = s.energy
      hist[#hist + 1] = s.world:energy()
      if #hist > HISTORY then table.remove(hist, 1) end
      if i > 1 then s.world:step(dt) end
    end
  end,

  draw = function(world, gfx)
    local series = {}
    for i, s in ipairs(S.systems) do
      local e = s.world:energy()
      local hist = s.energy
      if i > 1 then gfx.world(s.world) end
      local x, y = gfx.project({ s.method.x, 4.1, 0 })
      if x then
        local label = string.format("%s  E = %.3f J", s.method.name, e)
        gfx.text(x - gfx.text_width(label) / 2, y, label, s.method.color)
      end
      series[i] = { values = hist, color = s.method.color, label = s.method.name }
    end
    local w, h = gfx.size()
    local half = (w - 48) / 2
    ui.plot(gfx, 16, h - 190, half, 170, series, "total energy (J), last " .. HISTORY .. " steps")
    ui.plot(gfx, 32 + half, h - 190, half, 170, { series[2], series[3] }, "midpoint and RK4 only")
  end,
}
