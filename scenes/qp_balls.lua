-- scenes/qp_balls.lua: S2's simultaneous collisions (world.contact = "qp", section 8).
-- Front: three equal balls on a frictionless floor, the first rolling into the other two, which
-- touch (Fig. 11): with e = 1 the simultaneous model gives (-v/3, 2v/3, 2v/3), not Newton's cradle.
-- Back: a heavy ball (9 m) falling onto a light ball (m) that rests on the floor (Fig. 12): one
-- simultaneous solve stops both at once when e = 0 (propagation would take many rounds).
-- Keys: E switches the restitution between 1 and 0 and restarts the throw (R).
local e = 1

return {
  title = "Simultaneous collisions (S2 Figs. 11 and 12)",
  keys = { { "e", "restitution 1 / 0" } },
  camera = { eye = { 1.5, 3, 9 }, target = { 1.5, 1, -1 } },
  debug = { contacts = true, velocities = true },
  setup = function(world)
    world.contact = "qp"
    world.restitution = e
    world.friction = 0
    world:body { static = true, shapes = { { type = "plane" } } }
    local r = 0.4
    world:sphere { radius = r, position = { -2, r, 0 }, velocity = { 3, 0, 0 }, mass = 1, color = { 0.9, 0.4, 0.3 } }
    world:sphere { radius = r, position = { 1, r, 0 }, mass = 1, color = { 0.3, 0.7, 0.9 } }
    world:sphere { radius = r, position = { 1 + 2 * r, r, 0 }, mass = 1, color = { 0.3, 0.9, 0.5 } }
    world:sphere { radius = r, position = { 1, r, -2.5 }, mass = 1, color = { 0.8, 0.8, 0.3 } }
    world:sphere { radius = r, position = { 1, 2.5, -2.5 }, mass = 9, color = { 0.6, 0.4, 0.8 } }
  end,
  keypressed = function(world, key)
    if key == "e" then e = 1 - e; world.restitution = e end
  end,
  draw = function(world, gfx)
    local s = string.format("restitution %.0f   impacts %d   ", world.restitution, world:contact_stats().impacts)
    for i, b in ipairs(world:bodies()) do
      if not b.static then s = s .. string.format("v%d = (%.2f, %.2f)  ", i - 1, b.velocity[1], b.velocity[2]) end
    end
    gfx.text(10, 80, s, { 1, 1, 1, 0.85 })
  end,
}
