-- scenes/bodies.lua: rigid bodies of every shape falling onto each other and the ground, resting with
-- friction (impulse contact); contacts are drawn, F2 toggles contact points and normals.
local impetus = require "impetus"
local quat = impetus.quat

return {
  title = "Rigid bodies and contacts",
  camera = { eye = { 7, 5, 9 }, target = { 0, 1, 0 } },
  debug = { contacts = true, centers = true }, -- F2 / F4 toggle them
  setup = function(world)
    world.gravity = { 0, -2, 0 }
    world:plane {}
    world:mesh { vertices = { { -4, 0.01, -4 }, { 4, 0.01, -4 }, { 0, 0.8, -3 } }, triangles = { { 1, 3, 2 } },
      color = { 0.5, 0.5, 0.55 } }
    world:box { size = { 1, 1, 1 }, position = { -2.2, 1, 0 }, orientation = quat.from_axis_angle({ 1, 1, 0 }, 0.6),
      angular_velocity = { 0, 1, 0 }, color = { 0.9, 0.5, 0.2 } }
    world:sphere { radius = 0.5, position = { -0.8, 2, 0.5 }, color = { 0.3, 0.7, 0.9 } }
    world:capsule { radius = 0.3, length = 1.2, position = { 0.6, 1.5, -0.4 }, angle = 1.2, axis = { 0, 0, 1 },
      angular_velocity = { 0.5, 0, 0.5 }, color = { 0.5, 0.85, 0.4 } }
    local pts = {}
    math.randomseed(4)
    for i = 1, 40 do
      local t, p = math.random() * 2 * math.pi, math.acos(2 * math.random() - 1)
      pts[i] = { 0.7 * math.sin(p) * math.cos(t), 0.5 * math.cos(p), 0.6 * math.sin(p) * math.sin(t) }
    end
    world:hull { points = pts, position = { 2.2, 1.2, 0.3 }, angular_velocity = { 1, 0.3, 0 }, color = { 0.85, 0.4, 0.75 } }
    world:body { position = { 0, 3, 1.8 }, angular_velocity = { 0, 0.7, 0.4 }, color = { 0.95, 0.8, 0.3 }, shapes = {
      { type = "box", size = { 1.6, 0.2, 0.2 } },
      { type = "sphere", radius = 0.25, position = { 0.8, 0, 0 } },
      { type = "sphere", radius = 0.25, position = { -0.8, 0, 0 } } } }
  end,
  keypressed = function(world, key) end,
  draw = function(world, gfx)
    local n = 0
    for _, c in ipairs(world:contacts()) do n = n + #c.points end
    gfx.text(10, 80, string.format("bodies %d   touching pairs %d   contact points %d", world.body_count,
      world.manifold_count, n), { 1, 1, 1, 0.8 })
  end,
}
