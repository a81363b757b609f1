-- scenes/pachinko2d.lua: a 2D scene with the orthographic camera. Balls drop from the top, bounce
-- off static pegs and tilted bars in the x-y plane, and pile up on the floor. Space pauses,
-- the wheel zooms, dragging pans. Keys: B drops a burst of balls.
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)

local function drop(world, n)
  for _ = 1, n do
    world:particle {
      position = { (math.random() - 0.5) * 6, 11 + math.random() * 2, 0 },
      velocity = { (math.random() - 0.5) * 0.5, 0, 0 },
      radius = 0.12, mass = 0.05,
      color = { 0.5 + 0.5 * math.random(), 0.4 + 0.4 * math.random(), 0.2, 1 },
    }
  end
end

return {
  title = "Pachinko (2D camera)",
  keys = { { "b", "drop a burst of balls" } },
  camera = { mode = "2d", center = { 0, 6 }, height = 14 },

  setup = function(world)
    world:plane { point = { 0, 0, 0 }, normal = { 0, 1, 0 }, restitution = 0.3, friction = 0.4 }
    world:plane { point = { -6, 0, 0 }, normal = { 1, 0, 0 }, restitution = 0.5 }
    world:plane { point = { 6, 0, 0 }, normal = { -1, 0, 0 }, restitution = 0.5 }
    S.pegs = {}
    for row = 0, 4 do
      for col = -3, 3 do
        local x = col * 1.5 + (row % 2) * 0.75
        if math.abs(x) < 5.5 then
          S.pegs[#S.pegs + 1] = world:sphere { static = true, position = { x, 4 + row * 1.3, 0 }, radius = 0.2, restitution = 0.6 }
        end
      end
    end
    world:box { static = true, position = { -3, 2.2, 0 }, size = { 3, 0.2, 1 }, angle = -0.35, restitution = 0.3 }
    world:box { static = true, position = { 3, 2.2, 0 }, size = { 3, 0.2, 1 }, angle = 0.35, restitution = 0.3 }
    drop(world, 60)
  end,

  update = function(world, dt)
    if world.particle_count < 400 and math.random() < 0.25 then drop(world, 1) end
  end,

  keypressed = function(world, key)
    if key == "b" then drop(world, 40) end
  end,
}
