-- scenes/chain.lua: a chain of 200 rods (201 particles, 5 m), pinned at one end and released
-- straight at 45 degrees below the horizontal: it falls, swings and whips. The rods hold their
-- length to ~1e-5 of a link with no stiff springs; incomplete-Cholesky CG solves the 200
-- multipliers in one or two iterations.
-- A chain is stiff in another way: its tension T carries transverse waves of frequency up to
-- ~2 sqrt(T / (m l)), so RK4's step must stay below ~2.8 / that (~1/200 s hanging here): dt = 1/480.
-- Released from the horizontal, the whip's tension needs ~1/1000 s.
-- Keys: K kicks the free end. Drag any link with the mouse.
local N, L = 200, 0.025
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)

return {
  title = "Chain of 200 rods",
  keys = { { "k", "kick the free end" } },
  dt = 1 / 480,
  camera = { mode = "2d", center = { 0.3, 1 }, height = 7 },
  grid = false,

  setup = function(world)
    world.integrator = "rk4"
    S.links = {}
    local top, c = { -2, 3.5, 0 }, math.sqrt(0.5)
    local prev = world:particle { position = top, fixed = true, radius = 0.06, color = { 0.7, 0.7, 0.7, 1 } }
    for i = 1, N do
      local t = i / N
      local p = world:particle { position = { top[1] + i * L * c, top[2] - i * L * c, 0 }, mass = 0.02, radius = 0.02,
        color = { 1.0 - 0.6 * t, 0.55 + 0.3 * t, 0.25 + 0.7 * t, 1 } }
      world:rod(prev, p, { color = { 0.8, 0.82, 0.86, 1 } })
      S.links[i], prev = p, p
    end
  end,

  keypressed = function(world, key)
    if key == "k" then
      -- the kick across the last link: along it the rod, which holds its length, would answer at
      -- once with a tension spike that RK4 at this step cannot follow
      local last, before = S.links[N], S.links[N - 1]
      local v, a, b = last.velocity, last.position, before.position
      local d = { a[1] - b[1], a[2] - b[2] }
      local len = math.sqrt(d[1] * d[1] + d[2] * d[2])
      local k = { 6, 6 }
      local along = (k[1] * d[1] + k[2] * d[2]) / (len * len)
      last.velocity = { v[1] + k[1] - along * d[1], v[2] + k[2] - along * d[2], 0 }
    end
  end,

  draw = function(world, gfx)
    local _, h = gfx.size()
    local p = world:profile()
    gfx.text(16, h - 30, string.format("K: kick the end   largest |C| %.1e m (rod length %.3f m)   CG iterations per solve %.2f   solve %.3f ms/step",
      world:constraint_error(), L, p.cg_iterations / math.max(1, p.cg_solves), p.constraints), { 0.85, 0.85, 0.85, 1 })
  end,
}
