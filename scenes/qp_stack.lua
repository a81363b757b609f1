-- scenes/qp_stack.lua: S2's overbalanced stack of bricks, the same scene in both contact modes side by
-- side. Each brick juts out past the one below until the stack's centre of mass passes the edge of the
-- bottom brick, so it topples as one. Left (the scene's world): world.contact = "qp", the contact
-- forces found by the LCP in every derivative evaluation (RK4), impacts cut by time of impact and
-- resolved as simultaneous impulses. Right (a second world stepped in lockstep): world.contact =
-- "impulse", S1's sequential impulses with shock propagation.
-- Keys: F switches friction between 0.5 and 0 for the next restart; R restarts both.
local impetus = require "impetus"

local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.mu = S.mu or 0.5 -- both stacks' friction (F toggles it for the next restart)
-- S.other: the impulse-mode world of the right-hand stack, stepped in update
local OFFSET = 7       -- x offset of the right-hand stack

local function build(world, mode, x0)
  world.contact = mode
  world:body { static = true, shapes = { { type = "plane" } } }
  local h, overhang = 0.4, 0.3
  for i = 0, 6 do
    local color = mode == "qp" and { 0.75 - 0.05 * i, 0.35 + 0.05 * i, 0.25 } or { 0.25, 0.45 + 0.05 * i, 0.75 - 0.05 * i }
    world:box { size = { 1.6, h, 0.8 }, position = { x0 + i * overhang, h / 2 + i * h, 0 }, mass = 2,
      friction = S.mu, static_friction = S.mu, restitution = 0, color = color }
  end
end

return {
  title = "Overbalanced stack of bricks: exact contact (left), impulses (right)",
  keys = { { "f", "friction on / off" } },
  camera = { eye = { 4, 3, 13 }, target = { 4, 1.2, 0 } },
  debug = { contacts = true },
  setup = function(world)
    world.friction = S.mu      -- the qp mode's Coulomb coefficient
    world.restitution = 0
    build(world, "qp", 0)
    S.other = impetus.world()
    build(S.other, "impulse", OFFSET)
  end,
  update = function(world, dt) S.other:step(dt) end,
  keypressed = function(world, key)
    if key == "f" then S.mu = (S.mu > 0) and 0 or 0.5 end
  end,
  draw = function(world, gfx)
    gfx.world(S.other)
    local st = world:contact_stats()
    gfx.text(10, 80, string.format("left: qp (friction %.1f, impacts %d, LCP solves %d)   right: impulse   " ..
      "t = %.2f s   F: friction %.1f after R", world.friction, st.impacts, st.solves, world.time, S.mu), { 1, 1, 1, 0.85 })
  end,
}
