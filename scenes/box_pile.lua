-- scenes/box_pile.lua: 1000 boxes (10 x 10 x 10, 0.2 m gaps) dropped on the ground: the peer
-- benchmark's pile (bench/peers) as a scene. The columns land, stand, and fall asleep (grey when F5
-- shows velocities). Space drops a heavy ball on them.
return {
  title = "1000-box pile",
  keys = { { "space", "drop a heavy ball" } },
  camera = { eye = { 22, 16, 26 }, target = { 0, 4, 0 } },
  setup = function(world)
    world:plane { friction = 0.6 }
    for layer = 0, 9 do
      for i = 0, 9 do
        for k = 0, 9 do
          world:box { size = { 1, 1, 1 }, friction = 0.6, position = { (i - 4.5) * 1.2, 0.7 + layer * 1.2, (k - 4.5) * 1.2 },
                      color = { 0.45 + 0.05 * layer, 0.45, 0.3 + 0.05 * i } }
        end
      end
    end
  end,
  keypressed = function(world, key)
    if key == "space" then
      world:sphere { radius = 1.2, mass = 20000, position = { 0, 25, 0 }, velocity = { 0, -10, 0 }, color = { 0.9, 0.2, 0.2 } }
    end
  end,
  draw = function(world, gfx)
    local awake = 0
    for _, b in ipairs(world:bodies()) do if not b.asleep then awake = awake + 1 end end
    gfx.text(10, 80, string.format("%d of %d bodies awake, %d touching pairs", awake, world.body_count, world.manifold_count))
  end,
}
