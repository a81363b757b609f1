-- scenes/net.lua: a net of rigid bodies catching boxes (after S1 Fig. 2, a lattice of rigid bodies full of
-- closed loops). Each knot is a rigid ball; a ball joint halfway between two neighbouring knots joins them
-- (a massless string of fixed length through a common point: each knot is a pendulum about it), so every
-- square of four knots is a closed loop: 30 knots, 59 joints. The net hangs like a sling between
-- two bars: the knots at both ends of every row along x are joined to the world by hinges about z (ball
-- joints there would let the whole sling swing sideways about the bars like a hammock). It is built already
-- sagging: the rows along x lie on a circular arc whose chords are exactly one knot long (the rows along z
-- are straight), so every joint starts closed.
-- The knots are heavy (3000 kg/m^3, 17 kg) and the boxes light (100 kg/m^3): measured, light knots let
-- heavy boxes through (1 kg knots under 79-234 kg boxes, still so with the joints in the contact sweeps:
-- README, Joints), and capsule crosses in place of balls let boxes tunnel between thin arms.
-- Keys: B drops a box, M drops five.
local NX, NZ, H, R = 6, 5, 0.36, 0.11 -- knots along x and z, knot pitch (m), knot radius
local KNOT_DENSITY, BOX_DENSITY = 3000, 100
local SPAN_FRACTION, HEIGHT = 0.75, 2.6
-- the scene's state in `state`, which the runner keeps across hot reloads (which re-run this file)
local S = state
S.joints, S.boxes, S.drops, S.knots, S.ends = S.joints or {}, S.boxes or {}, S.drops or 0, S.knots or {}, S.ends or {}

-- NX + 1 points on an arc through (-D/2, HEIGHT) and (D/2, HEIGHT), D = SPAN_FRACTION NX H, with chords of
-- length H: 2 R sin(phi) = D and 2 R sin(phi / NX) = H, bisection on the half angle phi
local function arc_points()
  local D = SPAN_FRACTION * NX * H
  local lo, hi = 1e-6, math.pi / 2
  for _ = 1, 100 do
    local phi = 0.5 * (lo + hi)
    if D / math.sin(phi) * math.sin(phi / NX) > H then hi = phi else lo = phi end
  end
  local phi = 0.5 * (lo + hi)
  local rad = D / (2 * math.sin(phi))
  local cy = HEIGHT + rad * math.cos(phi)
  local pts = {}
  for k = 0, NX do
    local a = -phi + 2 * phi * k / NX
    pts[k + 1] = { rad * math.sin(a), cy - rad * math.cos(a) }
  end
  return pts
end

local function drop_box(world)
  S.drops = S.drops + 1
  local s = 0.32 + 0.07 * (S.drops % 3)
  S.boxes[#S.boxes + 1] = world:box { size = { s, s * 0.8, s }, density = BOX_DENSITY, friction = 0.6,
    position = { 0.5 * (((S.drops * 0.618) % 1) - 0.5) * NX * H, HEIGHT + 2.5, 0.25 * (((S.drops * 0.382) % 1) - 0.5) * NZ * H },
    axis = { 1, 1, 0.3 }, angle = 0.7 * S.drops, color = { 0.3 + 0.15 * (S.drops % 4), 0.55, 0.85 } }
end

return {
  title = "A net of rigid bodies catching boxes (S1 Fig. 2)",
  keys = { { "b", "drop a box" }, { "m", "drop five boxes" } },
  camera = { eye = { 1.9, 3.4, 2.8 }, target = { 0, 1.9, 0 } },
  setup = function(world)
    S.joints, S.boxes, S.drops, S.knots, S.ends = {}, {}, 0, {}, {}
    world:plane { friction = 0.6, restitution = 0 }
    local pts = arc_points()
    for k = 1, NX do
      local a, b = pts[k], pts[k + 1]
      local ang = math.atan(b[2] - a[2], b[1] - a[1])
      S.knots[k] = {}
      for j = 1, NZ do
        local z = (j - (NZ + 1) / 2) * H
        S.knots[k][j] = world:sphere { position = { (a[1] + b[1]) / 2, (a[2] + b[2]) / 2, z }, axis = { 0, 0, 1 }, angle = ang,
          radius = R, density = KNOT_DENSITY, friction = 0.8, color = { 0.85, 0.8, 0.6 } }
      end
    end
    -- along x: knot k's -x tip is knot k - 1's +x tip (pts[k]); the row's two ends to the world
    for j = 1, NZ do
      local z = (j - (NZ + 1) / 2) * H
      for k = 1, NX + 1 do
        local to_world = k == 1 or k == NX + 1
        S.joints[#S.joints + 1] = world:joint { type = to_world and "hinge" or "point",
          a = S.knots[k] and S.knots[k][j] or S.knots[k - 1][j], b = not to_world and S.knots[k - 1][j] or nil,
          anchor = { pts[k][1], pts[k][2], z }, axis = to_world and { 0, 0, 1 } or nil }
      end
    end
    -- along z: neighbouring knots of a column share the tip between them
    for k = 1, NX do
      local c = { (pts[k][1] + pts[k + 1][1]) / 2, (pts[k][2] + pts[k + 1][2]) / 2 }
      for j = 1, NZ - 1 do
        S.joints[#S.joints + 1] = world:joint { type = "point", a = S.knots[k][j + 1], b = S.knots[k][j],
          anchor = { c[1], c[2], (j + 0.5 - (NZ + 1) / 2) * H } }
      end
    end
    for j = 1, NZ do
      local z = (j - (NZ + 1) / 2) * H
      S.ends[j] = { { pts[1][1], pts[1][2], z }, { pts[NX + 1][1], pts[NX + 1][2], z } }
    end
    -- the two bars the net hangs from
    for _, p in ipairs { pts[1], pts[NX + 1] } do
      world:box { static = true, size = { 0.1, 0.1, NZ * H + 0.4 }, position = { p[1] + (p[1] < 0 and -0.06 or 0.06), p[2], 0 } }
    end
    for _ = 1, 3 do drop_box(world) end
  end,
  keypressed = function(world, key)
    if key == "b" then drop_box(world)
    elseif key == "m" then for _ = 1, 5 do drop_box(world) end end
  end,
  draw = function(world, gfx)
    -- the strings: between neighbouring knots (through their shared joint point), and to the bars
    local c = { 0.75, 0.7, 0.5, 1 }
    for k = 1, NX do
      for j = 1, NZ do
        local p = S.knots[k][j].position
        if k < NX then gfx.line(p, S.knots[k + 1][j].position, c) end
        if j < NZ then gfx.line(p, S.knots[k][j + 1].position, c) end
      end
    end
    for j = 1, NZ do
      gfx.line(S.ends[j][1], S.knots[1][j].position, c)
      gfx.line(S.ends[j][2], S.knots[NX][j].position, c)
    end
    local gap = 0
    for _, j in ipairs(S.joints) do gap = math.max(gap, j.gap) end
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("%d knots, %d joints, %d boxes   largest joint gap %.1e m   B: drop a box   M: five",
      NX * NZ, #S.joints, #S.boxes, gap), { 0.9, 0.9, 0.9, 1 })
  end,
}
