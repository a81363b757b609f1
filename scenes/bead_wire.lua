-- scenes/bead_wire.lua: S3's bead on a wire, three ways, side by side.
--   left    the built-in circular wire: an implicit constraint held by a Lagrange multiplier (eq. 11)
--   middle  the same circle as a curve x(u): the bead is simulated in its angle u (S3 section 5)
--   right   a wire the script invents: a rounded square |x/a|^4 + |y/b|^4 = 1, given as C alone
--           (the engine differentiates it numerically)
-- The arrows are the constraint forces. The plot shows how far each bead is off its wire.
-- Keys: F toggles the drift feedback (ks, kd) and shows S3's outward spiral without it.
local ui = require "impetus.ui"

local R = 1.4
local LEFT, MID, RIGHT = { -3.6, 2.6, 0 }, { 0, 2.6, 0 }, { 3.6, 2.6, 0 }
local A, B = 1.5, 1.2 -- the rounded square's half sizes
local COLORS = { { 1.0, 0.55, 0.3, 1 }, { 0.35, 0.8, 1.0, 1 }, { 0.6, 1.0, 0.45, 1 } }
local HISTORY = 600
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.beads, S.drift = S.beads or {}, S.drift or {}
if S.feedback == nil then S.feedback = true end

-- the script's wire: C(x) = (dx/a)^4 + (dy/b)^4 - 1 around RIGHT
local function square_C(x)
  local dx, dy = (x[1] - RIGHT[1]) / A, (x[2] - RIGHT[2]) / B
  return dx ^ 4 + dy ^ 4 - 1
end

-- a point on it at angle t, for drawing: (|cos t|^(1/2) sgn cos t a, |sin t|^(1/2) sgn sin t b)
local function square_point(t)
  local c, s = math.cos(t), math.sin(t)
  local function root(v) return (v < 0 and -1 or 1) * math.abs(v) ^ 0.5 end
  return { RIGHT[1] + A * root(c), RIGHT[2] + B * root(s), 0 }
end

local function off_wire(i)
  local x = S.beads[i].position
  if i == 1 then return math.abs(math.sqrt((x[1] - LEFT[1]) ^ 2 + (x[2] - LEFT[2]) ^ 2) - R) end
  if i == 2 then return math.abs(math.sqrt((x[1] - MID[1]) ^ 2 + (x[2] - MID[2]) ^ 2) - R) end
  -- distance to the rounded square ~ |C| / |grad C|
  local dx, dy = (x[1] - RIGHT[1]) / A, (x[2] - RIGHT[2]) / B
  local g = math.sqrt((4 * dx ^ 3 / A) ^ 2 + (4 * dy ^ 3 / B) ^ 2)
  return math.abs(square_C(x)) / math.max(g, 1e-9)
end

local function set_feedback(world, on)
  S.feedback = on
  world.constraint_ks, world.constraint_kd = on and 100 or 0, on and 20 or 0
end

return {
  title = "Bead on a wire: implicit, parametric, and a wire of your own",
  keys = { { "f", "feedback on / off" } },
  dt = 1 / 120,
  camera = { mode = "2d", center = { 0, 1.6 }, height = 7.5 },
  grid = false,

  setup = function(world)
    world.integrator = "rk4"
    S.drift = { {}, {}, {} }
    set_feedback(world, true)
    local th = math.rad(100) -- from the bottom, counter-clockwise: a little above the side
    local start = function(c) return { c[1] + R * math.sin(th), c[2] - R * math.cos(th), 0 } end
    S.beads[1] = world:particle { position = start(LEFT), radius = 0.12, color = COLORS[1] }
    S.wire = world:wire(S.beads[1], { center = LEFT, radius = R, color = { 0.9, 0.75, 0.4, 1 } })
    S.beads[2] = world:curve_particle {
      curve = function(u) return { MID[1] + R * math.sin(u), MID[2] - R * math.cos(u), 0 },
        { R * math.cos(u), R * math.sin(u), 0 }, { -R * math.sin(u), R * math.cos(u), 0 } end,
      u = th, range = { 0, 2 * math.pi }, radius = 0.12, color = COLORS[2],
    }
    S.beads[3] = world:particle { position = { RIGHT[1] + A, RIGHT[2] + 0.4, 0 }, radius = 0.12, color = COLORS[3] }
    -- start exactly on the wire: solve (x/a)^4 = 1 - (y/b)^4 for x
    local y = 0.4 / B
    S.beads[3].position = { RIGHT[1] + A * (1 - y ^ 4) ^ 0.25, RIGHT[2] + 0.4, 0 }
    S.script_wire = world:constraint { particles = { S.beads[3] }, C = square_C }
  end,

  update = function(world)
    for i = 1, 3 do
      local h = S.drift[i]
      h[#h + 1] = math.log(off_wire(i) + 1e-16, 10)
      if #h > HISTORY then table.remove(h, 1) end
    end
  end,

  keypressed = function(world, key)
    if key == "f" then set_feedback(world, not S.feedback) end
  end,

  draw = function(world, gfx)
    -- the script's wire, the constraint forces as arrows (1 N = 0.08 m)
    local prev = square_point(0)
    for k = 1, 128 do
      local p = square_point(2 * math.pi * k / 128)
      gfx.line(prev, p, { 0.6, 0.8, 0.5, 1 })
      prev = p
    end
    local forces = { S.wire.force, nil, S.script_wire.force }
    for i, f in pairs(forces) do
      local x = S.beads[i].position
      gfx.line(x, { x[1] + 0.08 * f[1], x[2] + 0.08 * f[2], 0 }, { 1, 1, 1, 1 })
    end
    local labels = { "implicit wire (multiplier)", "curve x(u) (Lagrangian)", "script wire, C only" }
    for i, c in ipairs({ LEFT, MID, RIGHT }) do
      local px, py = gfx.project({ c[1], c[2] + 1.9, 0 })
      if px then gfx.text(px - gfx.text_width(labels[i]) / 2, py, labels[i], COLORS[i]) end
    end
    local w, h = gfx.size()
    local series = {}
    for i = 1, 3 do series[i] = { values = S.drift[i], color = COLORS[i], label = labels[i] } end
    ui.plot(gfx, 16, h - 200, w - 32, 150, series, "log10 distance off the wire (m)")
    gfx.text(16, h - 34, string.format("F: feedback %s (ks = %g, kd = %g)   energy %.6f J   drag a bead with the mouse",
      S.feedback and "on" or "OFF", world.constraint_ks, world.constraint_kd, world:energy()), { 0.85, 0.85, 0.85, 1 })
  end,
}
