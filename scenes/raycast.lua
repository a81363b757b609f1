-- scenes/raycast.lua: queries. A fan of rays sweeps over spinning kinematic bodies of every shape
-- and marks where each ray hits, with the surface normal. Contact begin/end events are counted as
-- two spheres pass through each other.
local impetus = require "impetus"
local quat = impetus.quat

local events = { begin = 0, ["end"] = 0 }

return {
  title = "Raycasts and contact events",
  camera = { eye = { 0, 9, 11 }, target = { 0, 0.5, 0 } },
  setup = function(world)
    world.gravity = { 0, 0, 0 }
    events.begin, events["end"] = 0, 0
    local spin = function(x, z) return { 0.3 * x, 0.6, 0.3 * z } end
    world:box { kinematic = true, size = { 1.2, 1.2, 1.2 }, position = { -3, 0.8, 0 }, angular_velocity = spin(1, 0.5), color = { 0.9, 0.5, 0.2 } }
    world:sphere { kinematic = true, radius = 0.7, position = { -1, 0.8, -1.5 }, velocity = { 0, 0, 0.6 }, color = { 0.3, 0.7, 0.9 } }
    world:capsule { kinematic = true, radius = 0.35, length = 1.4, position = { 1, 0.8, 0 }, angular_velocity = spin(-1, 1), color = { 0.5, 0.85, 0.4 } }
    local pts = {}
    for i = 1, 30 do
      local t, p = i * 2.4, math.acos(1 - 2 * (i - 0.5) / 30)
      pts[i] = { 0.8 * math.sin(p) * math.cos(t), 0.6 * math.cos(p), 0.8 * math.sin(p) * math.sin(t) }
    end
    world:hull { kinematic = true, points = pts, position = { 3, 0.8, 0 }, angular_velocity = spin(0.5, -1), color = { 0.85, 0.4, 0.75 } }
    -- a dynamic sphere (kinematic bodies only meet dynamic ones): it swings through the blue one
    world:sphere { radius = 0.5, position = { -1, 0.8, 1.5 }, velocity = { 0, 0, -0.6 }, color = { 0.95, 0.8, 0.3 } }
  end,
  update = function(world, dt)
    -- the two spheres swing back and forth through each other: begin and end events
    for _, b in ipairs(world:bodies()) do
      local z, vz = b.position[3], b.velocity[3]
      if (z > 1.6 and vz > 0) or (z < -1.6 and vz < 0) then b.velocity = { 0, 0, -vz } end
    end
    local ev = world:contact_events()
    events.begin, events["end"] = events.begin + #ev.begin, events["end"] + #ev["end"]
  end,
  draw = function(world, gfx)
    local origin = { 0, 0.8, 6 }
    local hits = 0
    for i = -20, 20 do
      local a = i / 20 * 0.9 + 0.25 * math.sin(world.time)
      local to = { origin[1] + 12 * math.sin(a), origin[2], origin[3] - 12 * math.cos(a) }
      local hit = world:raycast(origin, to)
      if hit then
        hits = hits + 1
        gfx.line(origin, hit.point, { 1, 1, 1, 0.35 })
        local p, n = hit.point, hit.normal
        gfx.line(p, { p[1] + 0.4 * n[1], p[2] + 0.4 * n[2], p[3] + 0.4 * n[3] }, { 1, 0.3, 0.2, 1 })
        gfx.sphere(p, 0.04, { 1, 0.9, 0.2 })
      else
        gfx.line(origin, to, { 1, 1, 1, 0.1 })
      end
    end
    gfx.text(10, 80, string.format("rays hitting: %d / 41    contact events: %d begin, %d end", hits, events.begin,
      events["end"]), { 1, 1, 1, 0.85 })
  end,
}
