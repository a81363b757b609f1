-- scenes/pyramid.lua: a pyramid of 210 boxes (base 20) standing on the ground under the impulse contact
-- mode: warm-started impulses with friction, resolved level by level in the contact graph with shock
-- propagation, so it stands without creeping. Space fires a heavy ball at it; F2 shows the contacts.
return {
  title = "Pyramid of 210 boxes (impulse contact)",
  keys = { { "space / f", "fire a heavy ball" } },
  camera = { eye = { 14, 12, 30 }, target = { 0, 8, 0 } },
  setup = function(world)
    world:plane { friction = 0.6 }
    for row = 0, 19 do
      for k = 0, 19 - row do
        world:box { size = { 1, 1, 1 }, friction = 0.6, position = { k - (19 - row) / 2, row + 0.5, 0 },
                    color = { 0.85, 0.5 + 0.02 * row, 0.3 } }
      end
    end
  end,
  keypressed = function(world, key)
    if key == "space" or key == "f" then
      world:sphere { radius = 0.6, mass = 3000, position = { 0, 4, 20 }, velocity = { 0, 2, -30 }, bullet = true,
                     color = { 0.9, 0.2, 0.2 } }
    end
  end,
  draw = function(world, gfx)
    gfx.text(10, 80, string.format("%d bodies, %d touching pairs (space: fire a ball)", world.body_count, world.manifold_count))
  end,
}
