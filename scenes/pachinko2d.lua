-- scenes/pachinko2d.lua: a 2D scene with the orthographic camera. Balls (particles that collide with
-- each other: world.particle_collisions) drop from the top, bounce off static pegs and tilted bars,
-- meet a turning paddle (kinematic: it pushes and nothing pushes it), push two free crates and pile up
-- on the floor. Space pauses, the wheel zooms, dragging pans. Keys: B drops a burst of balls, M switches the bodies' contact mode (impulse /
-- exact), I the integrator (RK4 / implicit).
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)

local function drop(world, n)
  for _ = 1, n do
    world:particle {
      position = { (math.random() - 0.5) * 6, 11 + math.random() * 2, 0 },
      velocity = { (math.random() - 0.5) * 0.5, 0, 0 },
      radius = 0.12, mass = 0.05, restitution = 0.4, friction = 0.3,
      color = { 0.5 + 0.5 * math.random(), 0.4 + 0.4 * math.random(), 0.2, 1 },
    }
  end
end

return {
  title = "Pachinko (2D camera)",
  keys = { { "b", "drop a burst of balls" }, { "m", "contact mode impulse / exact" }, { "i", "integrator RK4 / implicit" } },
  camera = { mode = "2d", center = { 0, 6 }, height = 14 },

  setup = function(world)
    world.particle_collisions = true
    world.planar = true
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
    -- a paddle turning at 1.5 rad/s about its centre, and two crates on the floor the balls push
    S.paddle = world:box { kinematic = true, position = { 0, 9.6, 0 }, size = { 2.4, 0.16, 0.6 }, angular_velocity = { 0, 0, 1.5 },
                           color = { 0.8, 0.35, 0.3 } }
    for k = -1, 1, 2 do
      world:box { position = { 4.2 * k, 0.35, 0 }, size = { 0.7, 0.7, 0.6 }, density = 150, friction = 0.3, color = { 0.35, 0.55, 0.8 } }
    end
    drop(world, 60)
  end,

  update = function(world, dt)
    if world.particle_count < 400 and math.random() < 0.25 then drop(world, 1) end
  end,

  keypressed = function(world, key)
    if key == "b" then drop(world, 40) end
    if key == "m" then world.contact = world.contact == "impulse" and "qp" or "impulse" end
    if key == "i" then world.integrator = world.integrator == "rk4" and "implicit" or "rk4" end
  end,

  draw = function(world, gfx)
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("%d balls   contact %s   integrator %s   B: more balls   M: contact   I: integrator",
      world.particle_count, world.contact, world.integrator), { 0.85, 0.85, 0.85, 1 })
  end,
}
