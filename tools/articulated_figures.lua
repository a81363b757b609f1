-- tools/articulated_figures.lua: the figures docs/joints.md quotes for spec/articulated_spec.lua and the
-- articulated scenes, reproduced (the spec asserts bounds; this prints the numbers).
--   LUA_PATH='scripts/?.lua;scripts/?/init.lua;spec/support/?.lua;;' LUA_CPATH='build/release/lib/?.so;;' \
--     lua5.4 tools/articulated_figures.lua
local impetus = require "impetus"
local mech = require "mechanisms"
local clock = impetus.core.clock
local dt, g = 1 / 60, 9.81

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

-- the four-bar swinging from 1.2 rad, 2000 steps
do
  local w, m = mech.four_bar(1.2)
  local prev, gap, ax, err, lo, hi, times = {}, 0, 0, 0, math.huge, -math.huge, {}
  for s = 1, 2000 do
    local t0 = clock()
    w:step(dt)
    times[s] = (clock() - t0) * 1e3
    for _, j in ipairs(m.joints) do gap = math.max(gap, j.gap); ax = math.max(ax, j.axis_error) end
    local e, t2 = mech.four_bar_error(m, prev)
    err, lo, hi = math.max(err, e), math.min(lo, t2), math.max(hi, t2)
  end
  print(string.format("four-bar, 2000 steps at 1/60: largest gap %.2g m, axis error %.2g, off the closed form %.2g rad, " ..
    "crank range %.2f rad, %.3f ms/step", gap, ax, err, hi - lo, median(times)))
end

-- the same with a motor on the crank: 3 rad/s, 2000 N m
do
  local w, m = mech.four_bar(1.2, { speed = 3, max = 2000 })
  local lo, hi, turned, last = math.huge, -math.huge, 0, mech.angle_z(m.crank)
  for _ = 1, 300 do
    w:step(dt)
    local om = m.crank.angular_velocity[3]
    lo, hi = math.min(lo, om), math.max(hi, om)
    local t = mech.angle_z(m.crank)
    turned, last = turned + mech.wrap(t - last), t
  end
  print(string.format("four-bar with a crank motor (3 rad/s, 2000 N m), 300 steps: crank speed %.9f .. %.9f rad/s, " ..
    "turned %.9f rad (15 at the speed)", lo, hi, turned))
end

-- a 2-link arm with a motor on the shoulder: 2 rad/s, 5000 N m
do
  local w = impetus.world {}
  w.sleeping = false
  local l1 = w:box { size = { 1, 0.1, 0.1 }, position = { 0.5, 5, 0 }, density = 500 }
  local l2 = w:box { size = { 1, 0.1, 0.1 }, position = { 1.5, 5, 0 }, density = 500 }
  local shoulder = w:joint { type = "hinge", a = l1, anchor = { 0, 5, 0 }, axis = { 0, 0, 1 }, motor = { speed = 2, max = 5000 } }
  w:joint { type = "hinge", a = l2, b = l1, anchor = { 1, 5, 0 }, axis = { 0, 0, 1 } }
  local lo, hi = math.huge, -math.huge
  for _ = 1, 300 do
    w:step(dt)
    lo, hi = math.min(lo, shoulder.speed), math.max(hi, shoulder.speed)
  end
  print(string.format("2-link arm with a shoulder motor (2 rad/s, 5000 N m), 300 steps: shoulder speed %.9f .. %.9f rad/s", lo, hi))
end

-- a 5-link point chain, 10,000 steps: the largest gap of each 1000
do
  local w, _, joints = mech.box_chain(5)
  local block, t0 = {}, clock()
  for s = 1, 10000 do
    w:step(dt)
    local k = (s - 1) // 1000 + 1
    for _, j in ipairs(joints) do block[k] = math.max(block[k] or 0, j.gap) end
  end
  local out = {}
  for k = 1, 10 do out[k] = string.format("%.1g", block[k]) end
  print(string.format("5-link box chain, 10,000 steps at 1/60 (%.3f ms/step): largest gap per 1000 steps %s m",
    (clock() - t0) / 10, table.concat(out, " ")))
end

-- a 3-link chain's energy: the largest rise above E0 and the end, as fractions of M g L
for _, kind in ipairs { "point", "hinge" } do
  for _, hz in ipairs { 60, 120, 240 } do
    local w, links = mech.box_chain(3, kind)
    local M = 0
    for _, b in ipairs(links) do M = M + b.mass end
    local scale, e0, top, e = M * g * 3, mech.energy(links), -math.huge, 0
    for _ = 1, 2000 * hz // 60 do
      w:step(1 / hz)
      e = mech.energy(links) - e0
      top = math.max(top, e)
    end
    print(string.format("3-link %s chain, 33 s at 1/%d: largest rise %.2f %% of M g L, at the end %.1f %%", kind, hz,
      100 * top / scale, 100 * e / scale))
  end
end

-- the hinge limit and the swing cone of the falling chain of the spec
do
  local w = impetus.world {}
  w.sleeping = false
  local l = {}
  for i = 1, 3 do l[i] = w:box { size = { 1, 0.1, 0.1 }, position = { i - 0.5, 10, 0 }, density = 500 } end
  local z = { 0, 0, 1 }
  w:joint { type = "hinge", a = l[1], anchor = { 0, 10, 0 }, axis = z }
  w:joint { type = "hinge", a = l[2], b = l[1], anchor = { 1, 10, 0 }, axis = z, limits = { -0.3, 0.3 } }
  w:joint { type = "point", a = l[3], b = l[2], anchor = { 2, 10, 0 }, axis = { 1, 0, 0 }, limits = { swing = 0.4 } }
  l[3].angular_velocity = { 0, 3, 0 }
  local lo, hi, swing, at = 0, 0, 0, 0
  for s = 1, 600 do
    w:step(dt)
    local rel = mech.wrap(mech.angle_z(l[2]) - mech.angle_z(l[1]))
    lo, hi = math.min(lo, rel), math.max(hi, rel)
    local sw = mech.x_angle(l[3], l[2])
    if sw > swing then swing, at = sw, s end
  end
  print(string.format("limits in a falling chain: hinge [-0.3, 0.3] -> %.4f .. %.4f rad; swing cone 0.4 -> largest %.4f rad (step %d)",
    lo, hi, swing, at))
end

-- a 0.4 m box (64 kg) set on a 0.3 x 0.07 x 0.3 m plate (6.3 kg) welded to the world
do
  local w = impetus.world {}
  w.sleeping = false
  local plate = w:box { size = { 0.3, 0.07, 0.3 }, position = { 0, 2, 0 } }
  w:joint { type = "rigid", a = plate, anchor = { 0, 2, 0 } }
  local box = w:box { size = { 0.4, 0.4, 0.4 }, position = { 0.05, 2.24, 0.05 } }
  local deepest, y20 = 0, 0
  for s = 1, 120 do
    w:step(dt)
    for _, c in ipairs(w:contacts()) do
      for _, p in ipairs(c.points) do deepest = math.max(deepest, p.depth) end
    end
    if s == 20 then y20 = box.position[2] end
  end
  print(string.format("box on a welded plate: its centre at %.4f m after 20 steps, %.4f m after 120 (rest 2.235), " ..
    "deepest contact %.4f m", y20, box.position[2], deepest))
end

-- one doll of scenes/ragdoll.lua dropped 2.8 m onto a dead floor (the spec's case): the largest energy above E0
do
  local w, _, parts, M = mech.dropped_ragdoll()
  local e0, top, vmax = mech.energy(parts), -math.huge, 0
  for _ = 1, 600 do
    w:step(dt)
    top = math.max(top, mech.energy(parts) - e0)
    for _, b in ipairs(parts) do
      local v = b.velocity
      vmax = math.max(vmax, math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2))
    end
  end
  print(string.format("a doll dropped 2.8 m on a dead floor, 600 steps: largest energy above E0 %.3g J (M g h = %.0f J), " ..
    "fastest part %.2f m/s, lost %.0f J by the end", top, M * g * 2.8, vmax, e0 - mech.energy(parts)))
end

-- a sleeping box while a ball elsewhere keeps sliding (a live contact)
do
  local w = impetus.world {}
  w:plane { restitution = 0, friction = 0.5 }
  local box = w:box { size = { 0.4, 0.4, 0.4 }, position = { 0, 0.2, 0 } }
  local ball = w:sphere { radius = 0.2, position = { 5, 0.2, 0 }, friction = 0.5 }
  for s = 1, 600 do
    if s > 30 then ball.velocity = { 1, ball.velocity[2], 0 } end
    w:step(dt)
  end
  print(string.format("a sleeping box beside a sliding ball, 600 steps: asleep %s, centre at y = %.4f m (rest 0.1986)",
    tostring(box.asleep), box.position[2]))
end

-- the scenes: median ms/step over 600 steps as the host runs them
for _, name in ipairs { "ragdoll", "rope_bridge", "net", "tank" } do
  local r = impetus.runner("scenes/" .. name .. ".lua")
  r:start()
  local times = {}
  for s = 1, 600 do
    local t0 = clock()
    r:step()
    times[s] = (clock() - t0) * 1e3
  end
  local asleep = 0
  for _, b in ipairs(r.world:bodies()) do if b.asleep then asleep = asleep + 1 end end
  print(string.format("scenes/%s.lua: %d bodies (%d asleep after 600 steps), %.3f ms/step (median of 600)%s", name,
    r.world.body_count, asleep, median(times), r.error and ("  error: " .. r.error) or ""))
end
