-- the QP mode's heap of 20 random boxes dropped on the floor (spec/qp_spec.lua, spec/figures/qp_heap.lua):
-- heap(seed, dense_max) runs 300 steps of 1/60 s and returns the world, its boxes, the lowest point any box
-- reached and the deepest penetration of any pair that was not overlapping from the start
local impetus = require "impetus"

return function(seed, dense_max)
  local quat = impetus.quat
  local w = impetus.world {}
  w.contact = "qp"
  w.friction, w.restitution = 0.4, 0.2
  w.qp_dense_max = dense_max
  w:body { static = true, shapes = { { type = "plane" } } }
  local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
  local bs = {}
  for i = 1, 20 do
    bs[i] = w:box { size = { 0.6 + 0.4 * rnd(), 0.3 + 0.3 * rnd(), 0.5 + 0.3 * rnd() }, position = { rnd() - 0.5, 0.5 + 0.7 * i, rnd() - 0.5 },
      orientation = quat.from_axis_angle({ rnd() - 0.5, rnd() - 0.5, rnd() - 0.5 }, 3 * rnd()), mass = 0.5 + rnd() }
  end
  local lowest, deepest = math.huge, 0
  for i = 1, 300 do
    local ok, msg = w:step(1 / 60)
    assert(ok, msg)
    for _, b in ipairs(bs) do lowest = math.min(lowest, b:aabb()[2]) end
    -- every pair's depth, box on box and box on floor, after the step; pairs that overlap from
    -- the start (the boxes are placed overlapping) and never let go are left out
    for _, c in ipairs(w:contacts()) do
      if c.age < i - 1 then for _, p in ipairs(c.points) do deepest = math.max(deepest, p.depth) end end
    end
  end
  return w, bs, lowest, deepest
end
