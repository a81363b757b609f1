-- scenes/crate_rope.lua: a crate hanging on a rope of particles. Twenty particles joined by rods (S3's
-- constraints) hang from a fixed point; the last one is sewn to a corner of a 3 kg crate
-- (particle:attach), so the rope carries the crate and the crate pulls the rope. Balls thrown at the
-- crate set it swinging and turning. Keys: Space throws a ball, C cuts the rope.
local S = state
local N, SEG = 20, 0.12

return {
  title = "A crate hanging on a particle rope",
  keys = { { "space", "throw a ball at the crate" }, { "c", "cut the rope" } },
  camera = { eye = { 4.5, 2.5, 5.5 }, target = { 0, 2.2, 0 } },
  setup = function(world)
    world:plane { friction = 0.6, restitution = 0.2 }
    S.rope = {}
    for k = 0, N do
      S.rope[k] = world:particle { position = { 0, 4.8 - k * SEG, 0 }, mass = 0.1, radius = 0.03, fixed = k == 0,
        color = { 0.85, 0.75, 0.45 } }
      if k > 0 then world:rod(S.rope[k - 1], S.rope[k]) end
    end
    local top = 4.8 - N * SEG
    S.crate = world:box { size = { 0.6, 0.5, 0.6 }, mass = 3, position = { 0.1, top - 0.25, 0.1 }, linear_damping = 0.1, angular_damping = 0.3, color = { 0.65, 0.45, 0.25 } }
    S.rope[N]:attach(S.crate, { 0, top, 0 }) -- a point of its top face, off its centre
  end,
  keypressed = function(world, key)
    if key == "space" then
      local c = S.crate.position
      world:sphere { radius = 0.12, mass = 1.5, position = { c[1] - 3, c[2] + 0.3, c[3] + 1 }, velocity = { 9, 0.5, -3 }, color = { 0.8, 0.3, 0.3 } }
    end
    if key == "c" and S.rope[N]:valid() then S.rope[N]:detach() end
  end,
  draw = function(world, gfx)
    for k = 1, N do
      if S.rope[k]:valid() and S.rope[k - 1]:valid() then gfx.line(S.rope[k - 1].position, S.rope[k].position, { 0.85, 0.75, 0.45 }) end
    end
    local _, h = gfx.size()
    local a = S.rope[N]:valid() and S.rope[N]:attachment()
    local pull = a and -a.impulse[2] / (1 / 60) or 0
    gfx.text(16, h - 30, string.format("rope's pull on the crate %.1f N (crate's weight %.1f N)   Space: throw a ball   C: cut",
      -pull, 3 * 9.81), { 0.85, 0.85, 0.85, 1 })
  end,
}
