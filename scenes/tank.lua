-- scenes/tank.lua: a tank on hinged treads driven by gears (S1 Figs. 4 and 7, section VII). A box hull
-- carries three gears on each side turning about its z axis; each tread is one closed loop of 28 box
-- links on hinges, wrapped around the front and back gears. The middle gear is passive, on a twist joint
-- as in S1 (a road wheel: it touches the tread only through contact). As in S1, the front and back gears hold the tread by attachment
-- joints that the script makes and unmakes every step by proximity: a link whose centre lies on the gear's
-- arc is joined to the gear by a ball joint where it is, and a link next to an unattached one is released,
-- so the links leave the gear where the tread runs off it. The player drives the motors of the front and
-- back gears' hinges; differential steering turns the tank (one tread forward, the other back turns it in
-- place). The turret turns on a hinge about y and the gun on a hinge about z, limited to -0.1 .. 0.5 rad.
-- Keys (hold): W / Up forward, S / Down back, A / Left and D / Right turn. Until one is pressed an autopilot
-- drives a demo program.
local impetus = require "impetus"

local PITCH, N_ARC, N_RUN = 0.2, 5, 9           -- link pitch (m); links per half-turn and per straight run
local RT = PITCH / (2 * math.sin(math.pi / (2 * N_ARC))) -- the tread's radius about a gear: N_ARC chords make a half-turn
local RUN = N_RUN * PITCH                       -- the straight runs; the gears are RUN apart
local TREAD_W, SIDE = 0.3, 0.78                 -- tread width; the treads' centre planes at z = -SIDE, +SIDE
local AXLE = RT + 0.06                          -- gear axle height above the ground at rest
local SPEED, TURN = 2.0, 1.4                    -- tread speeds (m/s) for driving and for turning
local TORQUE = 600                              -- the largest drive torque per gear motor (N m)

-- the scene's state in `state`, which the runner keeps across hot reloads (a reload re-runs this file,
-- making new locals), so the tank it drives and the keys held survive the reload
local S = state
S.held = S.held or {}
if S.autopilot == nil then S.autopilot = true end

-- the masses: a light hull (80 kg/m^3 box, ~90 kg with the turret) on heavy treads (5000 kg/m^3 links,
-- 28 x 4 kg a side) and gears (2000 kg/m^3, ~150 kg each). Measured, before the joints took part in the
-- contact sweeps (README, Joints): with a 480 kg hull the gears sank through the tread links and the links
-- into the ground, and the tank barely moved; with them, a 480 kg hull leaves the links ~1 cm deep.

-- a demo drive until the player takes over: {seconds, forward, turn}
local PROGRAM = { { 1, 0, 0 }, { 3, 1, 0 }, { 2.5, 0, 1 }, { 2.5, 1, 0 }, { 2.5, 0, -1 }, { 2, -1, 0 } }

-- the tread's joint points, in the tank's frame (x forward, y up, about the axle line): the top run from
-- back to front, the front half-turn, the bottom run from front to back, the back half-turn
local function tread_points()
  local pts, d = {}, math.pi / N_ARC
  for i = 0, N_RUN - 1 do pts[#pts + 1] = { -RUN / 2 + i * PITCH, RT } end
  for k = 0, N_ARC - 1 do pts[#pts + 1] = { RUN / 2 + RT * math.sin(k * d), RT * math.cos(k * d) } end
  for i = 0, N_RUN - 1 do pts[#pts + 1] = { RUN / 2 - i * PITCH, -RT } end
  for k = 0, N_ARC - 1 do pts[#pts + 1] = { -RUN / 2 - RT * math.sin(k * d), -RT * math.cos(k * d) } end
  return pts
end

local function build(world, at)
  local t = { gears = {}, axles = {}, treads = {}, attach = {}, joints = {} }
  local y0 = at[2] + AXLE
  local function P(x, y, z) return { at[1] + x, y0 + y, at[3] + z } end
  t.hull = world:box { size = { RUN + 0.5, 0.45, 2 * SIDE - TREAD_W - 0.1 }, position = P(0, 0.32, 0), density = 80,
    color = { 0.35, 0.45, 0.3 } }
  t.turret = world:box { size = { 0.9, 0.3, 0.8 }, position = P(-0.1, 0.7, 0), density = 80, color = { 0.3, 0.4, 0.27 } }
  t.joints[#t.joints + 1] = world:joint { type = "hinge", a = t.turret, b = t.hull, anchor = P(-0.1, 0.55, 0), axis = { 0, 1, 0 } }
  t.gun = world:capsule { radius = 0.06, length = 1.0, position = P(0.85, 0.72, 0), axis = { 0, 0, 1 }, angle = -math.pi / 2,
    density = 200, color = { 0.25, 0.3, 0.22 } }
  t.joints[#t.joints + 1] = world:joint { type = "hinge", a = t.gun, b = t.turret, anchor = P(0.35, 0.72, 0), axis = { 0, 0, 1 },
    limits = { -0.1, 0.5 } }
  local pts = tread_points()
  for s, z in ipairs { -SIDE, SIDE } do
    -- gears: back, middle, front; spheres a little inside the tread's inner face
    t.gears[s], t.axles[s] = {}, {}
    for g, x in ipairs { -RUN / 2, 0, RUN / 2 } do
      local gear = world:sphere { radius = RT - 0.06, position = P(x, 0, z), density = 2000, friction = 0.9,
        color = g == 2 and { 0.5, 0.5, 0.5 } or { 0.75, 0.6, 0.2 } }
      -- the front and back gears carry motors (speed set every step by the drive); the middle one is passive
      -- (S1: "the middle gear ... is passively connected to the tank with a simple twist joint")
      local j = world:joint { type = g == 2 and "twist" or "hinge", a = gear, b = t.hull, anchor = P(x, 0, z),
        axis = { 0, 0, 1 }, motor = g ~= 2 and { speed = 0, max = TORQUE } or nil }
      t.joints[#t.joints + 1] = j
      t.gears[s][g], t.axles[s][g] = gear, j
    end
    -- the tread: link i from point i to point i + 1, hinged to link i - 1 at point i (a closed loop)
    local links = {}
    for i = 1, #pts do
      local a, b = pts[i], pts[i % #pts + 1]
      links[i] = world:box { size = { PITCH - 0.02, 0.05, TREAD_W }, position = P((a[1] + b[1]) / 2, (a[2] + b[2]) / 2, z),
        axis = { 0, 0, 1 }, angle = math.atan(b[2] - a[2], b[1] - a[1]), density = 5000, friction = 1.0,
        color = { 0.2, 0.2, 0.22 } }
    end
    for i = 1, #pts do
      t.joints[#t.joints + 1] = world:joint { type = "hinge", a = links[i], b = links[(i - 2) % #pts + 1],
        anchor = P(pts[i][1], pts[i][2], z), axis = { 0, 0, 1 } }
    end
    t.treads[s] = links
    t.attach[s] = { [1] = {}, [3] = {} }
  end
  return t
end

-- a point p's offset from body b's centre, in b's frame
local function local_offset(b, p)
  local R, c = b.rotation, b.position
  local d = { p[1] - c[1], p[2] - c[2], p[3] - c[3] }
  return { R[1][1] * d[1] + R[2][1] * d[2] + R[3][1] * d[3], R[1][2] * d[1] + R[2][2] * d[2] + R[3][2] * d[3],
           R[1][3] * d[1] + R[2][3] * d[2] + R[3][3] * d[3] }
end

-- S1 section VII: attachment joints between the driven gears and the tread links on their arcs, made and
-- unmade every step. A link is engaged when its centre is within the arc's chord distance of the gear's axle
-- (RT cos(pi / 2 N_ARC) on the arc; the nearest link of a straight run is ~RT / cos(..) away) and lies
-- on the gear's outer side; a link next to a disengaged one is released too.
local function update_attachments(world, t)
  local near = RT * math.cos(math.pi / (2 * N_ARC)) + 0.01
  for s = 1, 2 do
    local links = t.treads[s]
    local n = #links
    for _, g in ipairs { 1, 3 } do
      local gear, att = t.gears[s][g], t.attach[s][g]
      local engaged = {}
      for i, l in ipairs(links) do
        local o = local_offset(t.hull, l.position)
        local c = local_offset(t.hull, gear.position)
        local dx, dy = o[1] - c[1], o[2] - c[2]
        local outer = (g == 3 and dx > -0.02) or (g == 1 and dx < 0.02)
        engaged[i] = outer and dx * dx + dy * dy < near * near
      end
      for i = 1, n do
        local keep = engaged[i] and engaged[(i - 2) % n + 1] and engaged[i % n + 1]
        local j = att[i]
        if keep and not (j and j:valid()) then
          att[i] = world:joint { type = "point", a = links[i], b = gear, anchor = links[i].position }
        elseif not keep and j then
          if j:valid() then j:destroy() end
          att[i] = nil
        end
      end
    end
  end
end

-- the drive: the motors of the front and back gears (hinge motors: the gear's spin relative to the hull
-- about the axle is driven to `speed` with at most TORQUE), from the held keys. With no key held the
-- motors hold the gears still: a parked tank's brake.
local function drive(t, time)
  local fwd = ((S.held.w or S.held.up) and 1 or 0) - ((S.held.s or S.held.down) and 1 or 0)
  local turn = ((S.held.a or S.held.left) and 1 or 0) - ((S.held.d or S.held.right) and 1 or 0)
  if S.autopilot then
    local total = 0
    for _, p in ipairs(PROGRAM) do total = total + p[1] end
    local tt = time % total
    for _, p in ipairs(PROGRAM) do
      if tt < p[1] then fwd, turn = p[2], p[3] break end
      tt = tt - p[1]
    end
  end
  for s = 1, 2 do
    -- side 1 is z = -SIDE, the tank's left: turning left (turn > 0) slows it and speeds the right
    local v = SPEED * fwd + (s == 1 and -1 or 1) * TURN * turn
    for _, g in ipairs { 1, 3 } do
      t.axles[s][g].motor = { speed = -v / RT, max = TORQUE } -- rolling forward (+x) spins the gears about -z
    end
  end
end

return {
  title = "Tank on hinged treads driven by gears (S1 Figs. 4, 7)",
  keys = { { "w / s / a / d", "hold: drive forward / back, turn left / right" },
           { "up / down / left / right", "the same as W / S / A / D" } },
  camera = { eye = { 3.5, 3.6, 7.5 }, target = { 2, 0.4, 0 } },
  setup = function(world)
    S.held, S.autopilot = {}, true
    world.sleeping = false
    world:plane { friction = 0.9, restitution = 0 }
    -- something to drive over and into: a low ramp, a plank bump, a stack of crates
    world:box { static = true, size = { 2, 0.3, 3 }, position = { 6, 0.15, 0 } }
    world:box { static = true, size = { 1.5, 0.3, 3 }, position = { 4.3, 0.0, 0 }, axis = { 0, 0, 1 }, angle = 0.2 }
    for k = 0, 2 do
      for m = 0, 2 - k do
        world:box { size = { 0.5, 0.5, 0.5 }, position = { -4, 0.25 + 0.5 * k, -1 + 0.55 * m + 0.27 * k }, density = 100,
          color = { 0.7, 0.5, 0.3 } }
      end
    end
    S.tank = build(world, { 0, 0, 0 })
  end,
  update = function(world, dt)
    if not S.tank then return end
    update_attachments(world, S.tank)
    drive(S.tank, world.time)
  end,
  keypressed = function(world, key)
    S.held[key] = true
    local k = key
    if k == "w" or k == "a" or k == "s" or k == "d" or k == "up" or k == "down" or k == "left" or k == "right" then
      S.autopilot = false
    end
  end,
  keyreleased = function(world, key) S.held[key] = nil end,
  draw = function(world, gfx)
    if not S.tank then return end
    local gap, n = 0, 0
    for _, j in ipairs(S.tank.joints) do if j:valid() then gap = math.max(gap, j.gap) end end
    for s = 1, 2 do for _, att in pairs(S.tank.attach[s]) do for _ in pairs(att) do n = n + 1 end end end
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("%d attachment joints   largest joint gap %.1e m   %s", n, gap,
      S.autopilot and "autopilot: hold W/A/S/D or the arrows to drive" or "hold W/A/S/D or the arrows to drive"),
      { 0.9, 0.9, 0.9, 1 })
  end,
}
