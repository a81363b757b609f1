-- scenes/pendulums.lua: S3's "things to try at home": a double and a triple pendulum built from
-- rods (Lagrange-multiplier constraints), released from the horizontal. Both are chaotic; the
-- trails show the last bob's path, the numbers their energy, which RK4 holds to ~1e-6 J.
-- Keys: K kicks the last bobs.
local TRAIL = 500 -- trail points, one every 4 steps: the last ~4 s
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.steps = S.steps or 0 -- steps taken, for a trail point every 4

local function pendulum(world, origin, n, link, color)
  local pivot = world:particle { position = origin, fixed = true, radius = 0.05, color = { 0.7, 0.7, 0.7, 1 } }
  local s = { bobs = {}, trail = {}, color = color, origin = origin }
  local prev = pivot
  for i = 1, n do
    local bob = world:particle { position = { origin[1] + i * link, origin[2], 0 }, radius = 0.09, color = color }
    world:rod(prev, bob, { color = { 0.85, 0.88, 0.92, 1 } })
    s.bobs[i], prev = bob, bob
  end
  return s
end

local function energy(world, s)
  local e, g = 0, world.gravity
  for _, p in ipairs(s.bobs) do
    local x, v = p.position, p.velocity
    e = e + 0.5 * p.mass * (v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) - p.mass * (g[1] * x[1] + g[2] * x[2] + g[3] * x[3])
  end
  return e
end

return {
  title = "Double and triple pendulum (rods)",
  keys = { { "k", "kick the pendulums" } },
  dt = 1 / 480, -- chaotic whips: fast links want a small step
  camera = { mode = "2d", center = { 0, 0.3 }, height = 6.5 },
  grid = false,

  setup = function(world)
    world.integrator = "rk4"
    S.systems = {
      pendulum(world, { -2.6, 1.2, 0 }, 2, 0.9, { 1.0, 0.6, 0.3, 1 }),
      pendulum(world, { 1.0, 1.2, 0 }, 3, 0.6, { 0.4, 0.8, 1.0, 1 }),
    }
    for _, s in ipairs(S.systems) do s.e0 = energy(world, s) end
  end,

  update = function(world)
    S.steps = S.steps + 1
    if S.steps % 4 ~= 0 then return end
    for _, s in ipairs(S.systems) do
      local x = s.bobs[#s.bobs].position
      s.trail[#s.trail + 1] = x
      if #s.trail > TRAIL then table.remove(s.trail, 1) end
    end
  end,

  keypressed = function(world, key)
    if key == "k" then
      for _, s in ipairs(S.systems) do
        local last = s.bobs[#s.bobs]
        local v = last.velocity
        last.velocity = { v[1] + 2, v[2] + 1, 0 }
        s.e0 = energy(world, s)
      end
    end
  end,

  draw = function(world, gfx)
    for _, s in ipairs(S.systems) do
      local n = #s.trail
      for i = 2, n do
        local a = (i / n) ^ 2
        gfx.line(s.trail[i - 1], s.trail[i], { s.color[1], s.color[2], s.color[3], a })
      end
      local px, py = gfx.project({ s.origin[1], s.origin[2] + 0.55, 0 })
      local e = energy(world, s)
      local label = string.format("%d links   E - E0 = %.2e J", #s.bobs, e - s.e0)
      if px then gfx.text(px - 80, py, label, s.color) end
    end
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("K: kick   drag a bob with the mouse   largest |C| %.1e m   CG iterations per step %d",
      world:constraint_error(), world:profile().cg_iterations), { 0.85, 0.85, 0.85, 1 })
  end,
}
