-- scenes/bench/hulls_1k.lua: broad + narrow phase for 1,000 convex hulls of 24 points each, packed in a
-- 10 x 10 x 10 block so that neighbours overlap, drifting without gravity and contact response (world.contact = "none").
-- Run: ./impetus bench scenes/bench/hulls_1k.lua
local impetus = require "impetus"
local quat = impetus.quat

return {
  title = "1,000 hulls in a pile: broad + narrow phase",
  camera = { eye = { 18, 14, 20 }, target = { 4.5, 4, 4.5 } },
  setup = function(world)
    world.gravity = { 0, 0, 0 }
    world.contact = "none" -- detection only
    math.randomseed(3)
    for l = 0, 9 do
      for i = 0, 9 do
        for k = 0, 9 do
          local pts = {}
          for p = 1, 24 do
            local t, ph = math.random() * 2 * math.pi, math.acos(2 * math.random() - 1)
            pts[p] = { 0.55 * math.sin(ph) * math.cos(t), 0.55 * math.cos(ph), 0.55 * math.sin(ph) * math.sin(t) }
          end
          world:hull {
            points = pts, position = { i * 0.95, l * 0.95, k * 0.95 },
            orientation = quat.from_axis_angle({ math.random(), math.random(), math.random() }, math.random()),
            velocity = { (math.random() - 0.5) * 0.01, (math.random() - 0.5) * 0.01, (math.random() - 0.5) * 0.01 },
            angular_velocity = { (math.random() - 0.5) * 0.1, (math.random() - 0.5) * 0.1, (math.random() - 0.5) * 0.1 },
            color = { 0.5 + 0.4 * math.random(), 0.4, 0.7 },
          }
        end
      end
    end
  end,
}
