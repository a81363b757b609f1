-- scenes/flag.lua: a flag on a pole in a gusty wind. The wind is a Lua force field: the air drags
-- each particle towards the wind's velocity, which gusts in time and carries travelling waves
-- across the flag. Fields have no Jacobian, so the implicit integrator takes the wind as an
-- explicit force at the start of each step; the stiff cloth forces are implicit.
-- Keys: up / down change the wind speed, C calms it.
local drag = 0.004              -- N s/m per particle: air drag towards the wind velocity
local ROWS, COLS, W, H = 20, 30, 1.5, 1.0
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.speed = S.speed or 6          -- the wind, m/s

local function wind(x, y, z, t)
  local gust = 1 + 0.35 * math.sin(0.9 * t) + 0.15 * math.sin(2.3 * t + 1.3)
  -- lateral waves travelling downwind: the flag ripples along its length
  local wave = math.sin(5 * x - 11 * t + 2 * y) + 0.6 * math.sin(8.3 * x - 17 * t - 3 * y)
  return S.speed * gust, 0.2 * S.speed * math.sin(3 * x - 5 * t), 1.1 * S.speed * gust * wave
end

return {
  title = "Flag in a Lua wind field (implicit)",
  keys = { { "up / down", "wind stronger / weaker" }, { "c", "calm" } },
  camera = { eye = { 2.6, 2.6, 2.4 }, target = { 0.75, 2.4, 0 } },
  setup = function(world)
    world.integrator = "implicit"
    S.flag = world:cloth {
      rows = ROWS, cols = COLS, width = W, height = H, normal = { 0, 0, 1 },
      position = { W / 2, 3.15 - H / 2, 0 }, pin = "left", mass = 0.15, radius = 0.01,
      stretch = 1500, shear = 40, bend = 2e-4, damping = 0.005,
      color = { 0.80, 0.12, 0.14 }, back_color = { 0.95, 0.92, 0.85 },
    }
    world:field(function(x, y, z, vx, vy, vz, t)
      local wx, wy, wz = wind(x, y, z, t)
      return drag * (wx - vx), drag * (wy - vy), drag * (wz - vz)
    end)
  end,
  keypressed = function(world, key)
    if key == "up" then S.speed = math.min(S.speed + 1, 20) end
    if key == "down" then S.speed = math.max(S.speed - 1, 0) end
    if key == "c" then S.speed = 0 end
  end,
  draw = function(world, gfx)
    gfx.box({ -0.02, 1.6, 0 }, { 0.015, 1.6, 0.015 }, { 0.55, 0.45, 0.35, 1 })
    gfx.sphere({ -0.02, 3.22, 0 }, 0.04, { 0.85, 0.75, 0.3, 1 })
    local _, h = gfx.size()
    local p = world:profile()
    gfx.text(16, h - 50, string.format("wind %.0f m/s   %d particles   CG %d iterations", S.speed, world.particle_count,
      p.cg_iterations), { 0.85, 0.85, 0.85, 1 })
    gfx.text(16, h - 30, "Up / Down: wind speed   C: calm", { 0.8, 0.8, 0.8, 1 })
  end,
}
