-- tools/impulse_figures.lua: the accuracy figures of the impulse contact mode (docs/impulse.md), measured.
-- spec/impulse_spec.lua asserts a bound on each; this prints the numbers themselves. From the checkout's root:
--   LUA_PATH='scripts/?.lua;scripts/?/init.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 tools/impulse_figures.lua
local impetus = require "impetus"
local dt, g = 1 / 60, 9.81

local function len(v) return math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) end

-- 1. a ball dropped from 2 m onto a dead plane: the top of its first rebound against e^2 h0
do
  local out = {}
  for _, e in ipairs { 0.5, 0.8 } do
    local w = impetus.world {}
    w:plane { restitution = 0 }
    local b = w:sphere { radius = 0.1, position = { 0, 2.1, 0 }, restitution = e }
    local top, up = 0, false
    for _ = 1, 240 do
      w:step(dt)
      if b.velocity[2] > 0 then up = true end
      if up then top = math.max(top, b.position[2] - 0.1) end
      if up and b.velocity[2] < 0 then break end
    end
    out[#out + 1] = string.format("e = %.1f: %.3f m (e^2 h0 = %.3f m)", e, top, e * e * 2)
  end
  print("ball dropped 2 m, first rebound: " .. table.concat(out, "; "))
end

-- 2. a row of five touching equal balls, e = 1, no gravity, the first at 2 m/s: one step
do
  local w = impetus.world { gravity = { 0, 0, 0 } }
  local balls, v = {}, {}
  for i = 1, 5 do balls[i] = w:sphere { radius = 0.5, position = { i - 1, 0, 0 }, restitution = 1, friction = 0 } end
  w:collide()
  balls[1].velocity = { 2, 0, 0 }
  w:step(dt)
  for i = 1, 5 do v[i] = string.format("%.3g", balls[i].velocity[1]) end
  print("row of 5 touching balls, e = 1, the first at 2 m/s, after one step: (" .. table.concat(v, ", ") .. ") m/s")
end

-- a static incline at angle th about z, and its surface normal
local function incline(th, mu)
  local w = impetus.world {}
  w.sleeping = false
  w:box { static = true, size = { 40, 1, 4 }, axis = { 0, 0, 1 }, angle = th, friction = mu }
  return w, { -math.sin(th), math.cos(th), 0 }
end

-- acceleration along the slope between t = 0.5 s and 1.5 s
local function slope_accel(w, b)
  for _ = 1, 30 do w:step(dt) end
  local s0, t0 = len(b.velocity), w.time
  for _ = 1, 60 do w:step(dt) end
  return (len(b.velocity) - s0) / (w.time - t0)
end

-- 3. a unit box on an incline, mu = 0.5 (tan theta = mu at 26.6 degrees)
do
  local out = {}
  for _, deg in ipairs { 15, 25, 30, 40 } do
    local th = math.rad(deg)
    local w, n = incline(th, 0.5)
    local b = w:box { size = { 1, 1, 1 }, axis = { 0, 0, 1 }, angle = th, position = { n[1], n[2], 0 }, friction = 0.5 }
    local a = slope_accel(w, b)
    local expect = math.max(0, g * (math.sin(th) - 0.5 * math.cos(th)))
    out[#out + 1] = string.format("%d deg a = %.4f (expected %.4f, |diff| %.1e)", deg, a, expect, math.abs(a - expect))
  end
  print("box on an incline, mu = 0.5: " .. table.concat(out, "; ") .. " m/s^2")
end

-- 4. a ball rolling down 20 degrees (mu 0.8): 5/7 g sin(theta)
do
  local th = math.rad(20)
  local w, n = incline(th, 0.8)
  local b = w:sphere { radius = 0.3, position = { 0.8 * n[1], 0.8 * n[2], 0 }, friction = 0.8 }
  print(string.format("ball rolling down 20 degrees: a = %.4f m/s^2, 5/7 g sin = %.4f m/s^2", slope_accel(w, b),
    5 / 7 * g * math.sin(th)))
end

-- 5. a stack of 10 unit boxes on the ground: drift over 10 s after 1 s of settling, with and without sleeping
do
  local out = {}
  for _, sleeping in ipairs { true, false } do
    local w = impetus.world {}
    w.sleeping = sleeping
    w:plane {}
    local bs = {}
    for i = 1, 10 do bs[i] = w:box { size = { 1, 1, 1 }, position = { 0, i - 0.5, 0 }, friction = 0.6 } end
    for _ = 1, 60 do w:step(dt) end
    local p0 = {}
    for i = 1, 10 do p0[i] = bs[i].position end
    for _ = 1, 600 do w:step(dt) end
    local drift = 0
    for i = 1, 10 do
      local p = bs[i].position
      drift = math.max(drift, len { p[1] - p0[i][1], p[2] - p0[i][2], p[3] - p0[i][3] })
    end
    out[#out + 1] = string.format("%s: largest drift %.1e m, top box %.2f mm below 9.5 m%s",
      sleeping and "sleeping" or "no sleeping", drift, (9.5 - bs[10].position[2]) * 1e3,
      bs[10].asleep and " (asleep)" or "")
  end
  print("10-box stack, 10 s after settling: " .. table.concat(out, "; "))
end

-- 6. the base-20 pyramid (210 unit boxes), 1000 steps, every body awake
do
  local w = impetus.world {}
  w.sleeping = false
  w:plane {}
  local bs, p0 = {}, {}
  for row = 0, 19 do
    for k = 0, 19 - row do
      bs[#bs + 1] = w:box { size = { 1, 1, 1 }, position = { k - (19 - row) / 2, row + 0.5, 0 }, friction = 0.6 }
      p0[#bs] = bs[#bs].position
    end
  end
  for _ = 1, 1000 do w:step(dt) end
  local slide = 0
  for i, b in ipairs(bs) do
    local p = b.position
    slide = math.max(slide, math.sqrt((p[1] - p0[i][1]) ^ 2 + (p[3] - p0[i][3]) ^ 2))
  end
  print(string.format("base-20 pyramid, 1000 steps, no sleeping: top drop %.2f cm, largest sideways slide %.2f cm",
    (p0[#bs][2] - bs[#bs].position[2]) * 100, slide * 100))
end

-- 7. a bullet sphere (r = 0.1 m) at 100 m/s onto a 10 cm thick static box
do
  local w = impetus.world {}
  w:body { static = true, position = { 0, -0.05, 0 }, shapes = { { type = "box", size = { 10, 0.1, 10 } } } }
  local s = w:sphere { radius = 0.1, position = { 0, 2, 0 }, velocity = { 0, -100, 0 }, bullet = true }
  local lowest = math.huge
  for _ = 1, 120 do
    w:step(dt)
    lowest = math.min(lowest, s.position[2])
  end
  print(string.format("bullet sphere (r = 0.1 m) at 100 m/s onto a 10 cm box: lowest centre %.3f m, at rest at %.3f m " ..
    "(the box's top is y = 0)", lowest, s.position[2]))
end
