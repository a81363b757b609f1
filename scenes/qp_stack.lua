-- scenes/qp_stack.lua: S2's overbalanced stack of bricks under exact contact forces (world.contact = "qp").
-- Each brick juts out past the one below until the stack's centre of mass passes the edge of the
-- bottom brick: it topples as one, the contact forces found by the LCP in every derivative
-- evaluation (RK4), impacts cut by time of impact and resolved as simultaneous impulses.
-- Keys: M switches the contact mode live (qp / impulse; impulse is free flight until that mode lands),
-- R restarts in the chosen mode; F toggles friction (mu = 0.5 / 0).
local mode, mu = "qp", 0.5

return {
  title = "Overbalanced stack of bricks (exact contact, S2)",
  camera = { eye = { 3, 3, 9 }, target = { 0.8, 1.5, 0 } },
  debug = { contacts = true },
  setup = function(world)
    world.contact = mode
    world.friction = mu
    world.restitution = 0
    world:body { static = true, shapes = { { type = "plane" } } }
    local h, overhang = 0.4, 0.3
    for i = 0, 6 do
      world:box { size = { 1.6, h, 0.8 }, position = { i * overhang, h / 2 + i * h, 0 }, mass = 2,
        color = { 0.75 - 0.05 * i, 0.35 + 0.05 * i, 0.25 } }
    end
  end,
  keypressed = function(world, key)
    if key == "m" then mode = (mode == "qp") and "impulse" or "qp"; world.contact = mode end
    if key == "f" then mu = (mu > 0) and 0 or 0.5; world.friction = mu end
  end,
  draw = function(world, gfx)
    local st = world:contact_stats()
    gfx.text(10, 80, string.format("contact %s   friction %.1f   impacts %d   LCP solves %d   t = %.2f s",
      world.contact, world.friction, st.impacts, st.solves, world.time), { 1, 1, 1, 0.85 })
  end,
}
