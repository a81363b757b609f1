-- scenes/wrecking_wall.lua: a brick wall hit by a heavy ball. The bricks rest in running bond with
-- friction 0.7; a 3000 kg ball (a bullet: swept against the static world) flies into it at 16 m/s.
-- Collisions, then contacts with shock propagation: the wall stands until hit, then bricks tumble
-- and come to rest (and sleep). R restarts.
return {
  title = "Wall hit by a heavy ball",
  camera = { eye = { 14, 6, 14 }, target = { 0, 2, 0 } },
  setup = function(world)
    world:plane { friction = 0.7 }
    local bw, bh, bd = 1.0, 0.5, 0.5
    for row = 0, 9 do
      local shift = (row % 2) * bw / 2
      for k = -4, 4 do
        local x = k * bw + shift
        if math.abs(x) <= 4.6 then
          world:box { size = { bw * 0.98, bh, bd }, position = { x, bh / 2 + row * bh, 0 }, friction = 0.7, density = 600,
                      color = { 0.7 + 0.05 * (row % 3), 0.35, 0.25 } }
        end
      end
    end
    world:sphere { radius = 0.8, mass = 3000, position = { 0.3, 2.6, 9 }, velocity = { 0, 1.2, -16 }, bullet = true,
                   friction = 0.4, color = { 0.25, 0.25, 0.3 } }
  end,
}
