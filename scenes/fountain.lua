-- scenes/fountain.lua: a particle fountain. Particles are born at a nozzle with a random spread,
-- arc under gravity, bounce on the ground with restitution and friction, and are recycled.
local rate = 400          -- particles per second
local life = 4.0          -- seconds before a particle is recycled
local max_particles = 2000

local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
-- S.born: particle -> birth time; S.queue: the particles in birth order; S.carry: births owed (< 1)

local function hue(t)
  local r = 0.5 + 0.5 * math.sin(t)
  local g = 0.5 + 0.5 * math.sin(t + 2.1)
  local b = 0.5 + 0.5 * math.sin(t + 4.2)
  return { 0.3 + 0.7 * r, 0.3 + 0.7 * g, 0.3 + 0.7 * b, 1 }
end

return {
  title = "Fountain",
  camera = { eye = { 7, 5, 9 }, target = { 0, 2, 0 } },

  setup = function(world)
    S.born, S.queue, S.carry = {}, {}, 0
    world.gravity = { 0, -9.81, 0 }
    world.drag = 0.003
    world:plane { point = { 0, 0, 0 }, normal = { 0, 1, 0 }, restitution = 0.45, friction = 0.3 }
    world:sphere { static = true, position = { 1.7, 0.5, 0 }, radius = 0.5, restitution = 0.6 }
  end,

  update = function(world, dt)
    local now = world.time
    -- retire the oldest particles
    while #S.queue > 0 and (now - S.born[S.queue[1]] > life or #S.queue >= max_particles) do
      local p = table.remove(S.queue, 1)
      S.born[p] = nil
      p:destroy()
    end
    S.carry = S.carry + rate * dt
    while S.carry >= 1 do
      S.carry = S.carry - 1
      local a, s = math.random() * 2 * math.pi, 0.6 + 0.4 * math.random()
      local p = world:particle {
        position = { 0, 0.3, 0 },
        velocity = { math.cos(a) * 1.6 * s, 7.5 + math.random(), math.sin(a) * 1.6 * s },
        radius = 0.05, mass = 0.01, color = hue(now * 0.7),
      }
      S.born[p] = now
      S.queue[#S.queue + 1] = p
    end
  end,
}
