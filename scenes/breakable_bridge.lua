-- scenes/breakable_bridge.lua: a breakable rope bridge. Twelve planks hang between two anchors on ball
-- joints in a planar world (each joint a pin: the bridge is a chain of pins, whose joint forces are
-- determined; hinges would close redundant loops across the bridge's width). The joints break at
-- 8000 N in the middle to 9200 N at the anchors (break_force); every joint shows the force it carries
-- (joint.force), white at rest and red near the break. A crate twice as heavy as the last falls on the
-- bridge every 2.5 s (10 kg, 20 kg, 40 kg, ...) until a joint gives: world:broken_joints() lists each.
-- Keys: B drops the next crate now.
local N, PLANK, SPAN_FRACTION, HEIGHT, BREAK = 12, 0.5, 0.92, 3, 8000

local S = state -- the runner keeps it across hot reloads
S.joints, S.broken, S.next_mass = S.joints or {}, S.broken or {}, S.next_mass or 10

-- the plank ends on a circular arc through two anchors D = SPAN_FRACTION N PLANK apart, whose chords are
-- each a plank long: N asin(PLANK / 2R) = asin(D / 2R) (bisection on R: < 0 at R = D/2, > 0 as R grows)
local function arc_points()
  local D = SPAN_FRACTION * N * PLANK
  local function f(R) return N * math.asin(PLANK / (2 * R)) - math.asin(D / (2 * R)) end
  local lo, hi = D / 2, 1e3
  for _ = 1, 200 do
    local mid = 0.5 * (lo + hi)
    if f(mid) < 0 then lo = mid else hi = mid end
  end
  local R = 0.5 * (lo + hi)
  local phi = math.asin(D / (2 * R))
  local cy = HEIGHT + R * math.cos(phi)
  local pts, step = {}, 2 * phi / N
  for k = 0, N do
    local a = -phi + k * step
    pts[k + 1] = { R * math.sin(a), cy - R * math.cos(a), 0 }
  end
  return pts
end

-- joint k's break force: the weakest in the middle
local function strength(k) return BREAK * (1 + 0.025 * math.abs(k - (N + 2) / 2)) end

local function drop(world)
  world:box { size = { 0.4, 0.4, 0.4 }, mass = S.next_mass, position = { 0.3 * math.sin(world.time), HEIGHT + 2, 0 },
    color = { 0.85, 0.55, 0.25 } }
  S.next_mass = S.next_mass * 2
end

return {
  title = "A breakable rope bridge: joint forces and break_force",
  camera = { eye = { 0, 3, 8 }, target = { 0, 2, 0 } },
  setup = function(world)
    S.joints, S.broken, S.next_mass, S.next_drop = {}, {}, 10, 1
    world.planar = true
    world:plane { restitution = 0 }
    local pts = arc_points()
    local prev
    for k = 1, N do
      local a, b = pts[k], pts[k + 1]
      local mid = { 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]), 0 }
      local angle = math.atan(b[2] - a[2], b[1] - a[1])
      local plank = world:box { size = { PLANK * 0.96, 0.06, 1 }, mass = 4, position = mid, axis = { 0, 0, 1 }, angle = angle,
        color = { 0.6, 0.45, 0.3 } }
      S.joints[#S.joints + 1] = world:joint { type = "point", a = plank, b = prev, anchor = a, break_force = strength(k) }
      prev = plank
    end
    S.joints[#S.joints + 1] = world:joint { type = "point", a = prev, anchor = pts[N + 1], break_force = strength(N + 1) }
  end,
  update = function(world, dt)
    for _, e in ipairs(world:broken_joints()) do
      local f = e.force
      S.broken[#S.broken + 1] = string.format("t = %.2f s: a joint broke at %.0f N", world.time, math.sqrt(f[1] ^ 2 + f[2] ^ 2 + f[3] ^ 2))
    end
    if world.time >= S.next_drop then
      S.next_drop = S.next_drop + 2.5
      drop(world)
    end
  end,
  keypressed = function(world, key)
    if key == "b" then drop(world) end
  end,
  draw = function(world, gfx)
    for _, j in ipairs(S.joints) do
      if j:valid() then
        local f = j.force
        local load = math.min(1, math.sqrt(f[1] ^ 2 + f[2] ^ 2 + f[3] ^ 2) / BREAK)
        local p = j.a.position
        gfx.sphere(p, 0.05, { 1, 1 - load, 1 - load })
      end
    end
    gfx.text(10, 80, string.format("next crate: %d kg    break_force %d N    B drops one now", S.next_mass, BREAK), { 1, 1, 1, 0.85 })
    for i, line in ipairs(S.broken) do
      if i > 8 then break end
      gfx.text(10, 80 + 20 * i, line, { 1, 0.6, 0.5, 0.9 })
    end
  end,
}
