-- impulse-mode joints (engine/joint.c, S1): point and hinge joints held by pre-stabilization (the
-- predicted joint frame is made exact before the position update) and velocity post-stabilization.
local impetus = require "impetus"
local dt = 1 / 60
local g = 9.81

-- a chain of n box links (1 m x 0.2 x 0.2, 4 kg) hanging from the world at (0, 10, 0), laid out along +x
local function chain(n, kind) return require("mechanisms").box_chain(n, kind, 100) end

local function energy(links)
  local e = 0
  for _, b in ipairs(links) do e = e + b:kinetic_energy() + b.mass * g * b.position[2] end
  return e
end

describe("joints (impulse mode, S1)", function()
  it("point joints of a falling chain coincide to 1e-6 m after every step for 10,000 steps, and the error does not grow", function()
    local w, _, joints = chain(5)
    local first, last = 0, 0
    for s = 1, 10000 do
      w:step(dt)
      local worst = 0
      for _, j in ipairs(joints) do worst = math.max(worst, j.gap) end
      assert(worst < 1e-6, string.format("step %d: joint gap %.3g m", s, worst))
      if s <= 1000 then first = math.max(first, worst) elseif s > 9000 then last = math.max(last, worst) end
    end
    -- no drift: the errors at the end are of the same (round-off) size as at the start
    assert(last < 1e-8, "late gap " .. last)
    assert(last <= 10 * first + 1e-9, string.format("gap grew: %.3g -> %.3g", first, last))
  end)

  it("the chain really swings (the joints are not just freezing it)", function()
    local w, links = chain(3)
    for _ = 1, 30 do w:step(dt) end
    -- half a second after release from horizontal the free end has dropped well below the pivot
    assert(links[3].position[2] < 9.0, "end link y " .. links[3].position[2])
    -- the pivot joint keeps link 1's centre 0.5 m from the anchor
    local p = links[1].position
    local d = math.sqrt(p[1] ^ 2 + (p[2] - 10) ^ 2 + p[3] ^ 2)
    assert(math.abs(d - 0.5) < 1e-6, "link 1 centre at " .. d .. " m from the pivot")
  end)

  it("a hinge keeps its axis and its point, even against an out-of-plane spin", function()
    local w, links, joints = chain(2, "hinge")
    links[2].angular_velocity = { 3, 0, 0 }
    local gap, ax = 0, 0
    for _ = 1, 2000 do
      w:step(dt)
      for _, j in ipairs(joints) do gap = math.max(gap, j.gap); ax = math.max(ax, j.axis_error) end
    end
    assert(gap < 1e-6, "hinge gap " .. gap)
    assert(ax < 1e-6, "hinge axis error " .. ax)
    -- the motion stays in the hinge plane z = 0
    assert(math.abs(links[2].position[3]) < 1e-6, "z " .. links[2].position[3])
    assert(math.abs(links[2].angular_velocity[1]) < 1e-6, "out-of-plane spin " .. links[2].angular_velocity[1])
  end)

  it("a pendulum chain's energy does not grow", function()
    for _, n in ipairs { 1, 2, 3 } do
      local w, links = chain(n)
      local e0 = energy(links)
      local scale = 0
      for _, b in ipairs(links) do scale = scale + b.mass * g * n end -- m g (chain length): the swing's energy
      local top, late = -math.huge, 0
      for s = 1, 2000 do
        w:step(dt)
        local e = energy(links)
        top = math.max(top, e - e0)
        if s > 1500 then late = late + (e - e0) / 500 end
      end
      assert(top < 0.05 * scale, string.format("%d links: energy rose by %.3g J (scale %.3g J)", n, top, scale))
      assert(late < 0.02 * scale, string.format("%d links: late mean energy gain %.3g J", n, late))
    end
  end)

  it("joined bodies do not collide with each other (overlapping links hang still)", function()
    local w = impetus.world {}
    w.sleeping = false
    local a = w:box { size = { 1, 1, 1 }, position = { 0, 5, 0 } }
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 4.6, 0 } } -- overlaps a by 0.6 m
    w:joint { type = "point", a = a, anchor = { 0, 5, 0 } }           -- a pinned at its centre
    local j = w:joint { type = "point", a = b, b = a, anchor = { 0, 5, 0 } }
    for _ = 1, 120 do w:step(dt) end
    assert(j.gap < 1e-6)
    assert(math.abs(b.position[1]) < 1e-6 and math.abs(b.position[2] - 4.6) < 1e-6,
      string.format("pushed apart: %g %g", b.position[1], b.position[2]))
  end)

  it("joints can be created and destroyed from Lua mid-run, and with their bodies, without crashing", function()
    local w, links, joints = chain(4)
    for _ = 1, 30 do w:step(dt) end
    joints[3]:destroy()
    assert.is_false(joints[3]:valid())
    joints[3]:destroy() -- twice is harmless
    local ok, err = pcall(function() return joints[3].gap end)
    assert.is_false(ok)
    assert.truthy(err:find("destroyed", 1, true))
    for _ = 1, 30 do w:step(dt) end
    -- the lower part (links 3, 4) fell away; links 1, 2 still hang
    assert(joints[2].gap < 1e-6 and joints[4].gap < 1e-6)
    assert(links[3].position[2] < links[2].position[2] - 1)
    -- a new joint mid-run, then destroy a body that has a joint
    local j = w:joint { type = "point", a = links[3], b = links[2], anchor = links[3].position }
    for _ = 1, 10 do w:step(dt) end
    assert(j.gap < 1e-6)
    links[4]:destroy()
    assert.is_false(joints[4]:valid())
    for _ = 1, 10 do w:step(dt) end
    assert(j.gap < 1e-6)
    -- many creations and destructions in a loop
    for k = 1, 50 do
      local b = w:sphere { radius = 0.1, position = { k * 0.01, 5, 1 } }
      local jj = w:joint { type = k % 2 == 0 and "hinge" or "point", a = b, anchor = { k * 0.01, 5.2, 1 },
        axis = k % 2 == 0 and { 1, 0, 0 } or nil }
      w:step(dt)
      if k % 3 == 0 then b:destroy() else jj:destroy() end
    end
    w:step(dt)
  end)

  it("Newton's cradle on point joints passes the swing through the row", function()
    local w = impetus.world {}
    w.sleeping = false
    local R, LEN, balls, joints = 0.15, 1.5, {}, {}
    for i = 1, 5 do
      local px = (i - 3) * 2 * R
      local a = i == 1 and -0.6 or 0
      balls[i] = w:sphere { radius = R, position = { px + LEN * math.sin(a), 2 - LEN * math.cos(a), 0 }, density = 7800,
        restitution = 1, friction = 0 }
      joints[i] = w:joint { type = "point", a = balls[i], anchor = { px, 2, 0 } }
    end
    local y1 = balls[1].position[2]
    local v1, top5, gap = 0, -math.huge, 0
    for s = 1, 90 do
      w:step(dt)
      if s <= 36 then v1 = math.max(v1, balls[1].velocity[1]) end
      top5 = math.max(top5, balls[5].position[2])
      for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
    end
    assert(gap < 1e-6, "cradle joint gap " .. gap)
    -- ball 5 rises to (nearly) the height ball 1 fell from, never above it; ball 1 is left (nearly) still
    local rise = y1 - 0.5
    assert(top5 - 0.5 > 0.8 * rise, string.format("ball 5 rose %.3f m of %.3f", top5 - 0.5, rise))
    assert(top5 <= y1 + 1e-3, string.format("ball 5 rose above the start: %.4f > %.4f", top5, y1))
    assert(v1 > 2, "ball 1 swung at " .. v1)
  end)

  it("refuses bad definitions with clear errors naming the field", function()
    local w = impetus.world {}
    local a = w:box { size = { 1, 1, 1 } }
    local function err(def)
      local ok, e = pcall(function() return w:joint(def) end)
      assert.is_false(ok)
      return e
    end
    assert.truthy(err { type = "springy", a = a, anchor = { 0, 0, 0 } }:find("field 'type'", 1, true))
    assert.truthy(err { type = "point", anchor = { 0, 0, 0 } }:find("field 'a'", 1, true))
    assert.truthy(err { type = "point", a = 3, anchor = { 0, 0, 0 } }:find("field 'a' must be a body", 1, true))
    assert.truthy(err { type = "point", a = a, b = a, anchor = { 0, 0, 0 } }:find("two different bodies", 1, true))
    assert.truthy(err { type = "point", a = a }:find("field 'anchor'", 1, true))
    assert.truthy(err { type = "point", a = a, anchor = { 0, 0 / 0, 0 } }:find("anchor", 1, true))
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 } }:find("field 'axis'", 1, true))
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 0, 0 } }:find("non-zero", 1, true))
    assert.truthy(err { type = "rigid", a = a, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 } }:find("field 'axis' is not used", 1, true))
    assert.truthy(err { type = "point", a = a, anchor = { 0, 0, 0 }, colour = 1 }:find("colour", 1, true))
    -- the QP mode takes typed joints as equality rows (qp_spec), but not their limits and motors
    w.contact = "qp"
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 }, limits = { -1, 1 } }:find("field 'limits': the exact mode (\"qp\") cannot hold joint limits", 1, true))
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 }, motor = { speed = 1, max = 1 } }:find("field 'motor': the exact mode (\"qp\") cannot drive joint motors", 1, true))
    assert.are.equal(1, w:joint { a = a, point = { 0, 0, 0 } })
    -- the handle describes itself
    w.contact = "impulse"
    local j = w:joint { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 1, 0 } }
    assert.are.equal("hinge", j.type)
    assert.truthy(tostring(j):find("hinge", 1, true))
  end)
end)

-- joint frames (S1 section III): each type projects the joint state to its allowed set
describe("joint types, limits and motors (impulse mode, S1)", function()
  local function world()
    local w = impetus.world {}
    w.sleeping = false
    return w
  end
  local function vlen(a) return math.sqrt(a[1] ^ 2 + a[2] ^ 2 + a[3] ^ 2) end

  -- two boxes in series from the world, both joints of one type, kicked out of the allowed motion
  local function pair(kind, axis)
    local w = world()
    local a = w:box { size = { 1, 0.2, 0.2 }, position = { 0.5, 5, 0 }, density = 100 }
    local b = w:box { size = { 1, 0.2, 0.2 }, position = { 1.5, 5, 0 }, density = 100 }
    local j1 = w:joint { type = kind, a = a, anchor = { 0, 5, 0 }, axis = axis }
    local j2 = w:joint { type = kind, a = b, b = a, anchor = { 1, 5, 0 }, axis = axis }
    a.velocity, a.angular_velocity = { 0.3, 1, 2 }, { 1, 2, 3 }
    b.velocity, b.angular_velocity = { -1, 0.5, 1 }, { -2, 1, 0.5 }
    return w, a, b, j1, j2
  end

  for _, case in ipairs {
    { "point" }, { "hinge", { 0, 0, 1 } }, { "twist", { 1, 0, 0 } }, { "rigid" },
    { "prismatic", { 1, 0, 0 } }, { "planar", { 0, 0, 1 } },
  } do
    it(case[1] .. " joints keep their constraint to 1e-6 over 3000 steps while the bodies move", function()
      local w, a, b, j1, j2 = pair(case[1], case[2])
      local gap, ax, moved = 0, 0, 0
      local p0 = b.position
      for _ = 1, 3000 do
        w:step(1 / 60)
        for _, j in ipairs { j1, j2 } do gap = math.max(gap, j.gap); ax = math.max(ax, j.axis_error) end
        local p = b.position
        moved = math.max(moved, vlen { p[1] - p0[1], p[2] - p0[2], p[3] - p0[3] }, math.abs(j2.angle or 0))
      end
      assert(gap < 1e-6, case[1] .. " gap " .. gap)
      assert(ax < 1e-6, case[1] .. " orientation error " .. ax)
      if case[1] ~= "rigid" then assert(moved > 0.05, case[1] .. " did not move: " .. moved) end
      if case[1] == "rigid" then -- welded to the world: nothing moves after the first step
        assert(vlen(b.velocity) < 1e-6 and vlen(b.angular_velocity) < 1e-6, "rigid still moving")
      end
      if case[1] == "hinge" or case[1] == "planar" then -- rotation about z only, motion in the plane z = 0
        local wb = b.angular_velocity
        assert(math.abs(wb[1]) < 1e-6 and math.abs(wb[2]) < 1e-6, "spin across the axis")
        assert(math.abs(b.position[3]) < 1e-6 + math.abs(p0[3]), "left the plane")
      end
    end)
  end

  it("a twist joint takes the line through the two centres as its axis by default", function()
    local w = world()
    local a = w:box { size = { 1, 1, 1 }, position = { 0, 5, 0 } }
    w:joint { type = "rigid", a = a, anchor = { 0, 5, 0 } }
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 3.9, 0 } }
    local j = w:joint { type = "twist", a = b, b = a, anchor = { 0, 4.45, 0 } }
    b.angular_velocity = { 1, 2, 0.5 }
    for _ = 1, 60 do w:step(1 / 60) end
    -- only the spin about y (the centres' line) survives
    local om = b.angular_velocity
    assert(math.abs(om[1]) < 1e-6 and math.abs(om[3]) < 1e-6, "spin across the axis")
    assert(math.abs(om[2]) > 0.1, "the twist about the axis was removed")
    assert(j.gap < 1e-6 and j.axis_error < 1e-6)
  end)

  it("a prismatic joint slides freely along its axis with acceleration g cos(angle)", function()
    local w = world()
    local alpha = 0.6 -- axis angle from the vertical
    local b = w:box { size = { 0.3, 0.3, 0.3 }, position = { 0, 5, 0 } }
    local j = w:joint { type = "prismatic", a = b, anchor = { 0, 5, 0 }, axis = { math.sin(alpha), -math.cos(alpha), 0 } }
    local h, n = 1 / 60, 120
    for _ = 1, n do w:step(h) end
    local want = g * math.cos(alpha) * n * h
    assert(math.abs(j.speed - want) < 1e-6 * want, string.format("speed %.9g want %.9g", j.speed, want))
    -- half the gravity impulse before the position update and half after (kick, drift, kick): exact
    -- for a constant force, s = a t^2 / 2 along the axis
    local s = g * math.cos(alpha) * (n * h) ^ 2 / 2
    assert(math.abs(j.position - s) < 1e-6 * s, string.format("position %.9g want %.9g", j.position, s))
    assert(j.gap < 1e-6 and j.axis_error < 1e-6)
  end)

  it("a hinge limit holds the angle in [lo, hi]", function()
    local w = world()
    local rod = w:box { size = { 1, 0.1, 0.1 }, position = { 0.5, 5, 0 }, density = 100 }
    local j = w:joint { type = "hinge", a = rod, anchor = { 0, 5, 0 }, axis = { 0, 0, 1 }, limits = { -0.5, 0.3 } }
    local lo, hi = math.huge, -math.huge
    for _ = 1, 600 do
      w:step(1 / 60)
      lo, hi = math.min(lo, j.angle), math.max(hi, j.angle)
      assert(j.gap < 1e-6 and j.axis_error < 1e-6)
    end
    assert(lo >= -0.5 - 1e-3, "below the limit: " .. lo)
    assert(hi <= 0.3 + 1e-3, "above the limit: " .. hi)
    assert(lo < -0.5 + 1e-3, "never reached the lower limit: " .. lo) -- gravity swings it down onto it
    -- at rest on the limit after the bounce dies out
    assert(math.abs(j.speed) < 1e-3, "still moving at the limit: " .. j.speed)
    -- limits can be read, changed and removed
    assert.are.same({ -0.5, 0.3 }, j.limits)
    j.limits = nil
    for _ = 1, 30 do w:step(1 / 60) end
    assert(j.angle < -0.6, "limit removed, the rod falls further: " .. j.angle)
    local ok, e = pcall(function() j.limits = { 1, 0 } end)
    assert.is_false(ok)
    assert.truthy(e:find("lo <= hi", 1, true))
  end)

  it("a prismatic limit and a point joint's swing cone hold", function()
    local w = world()
    local b = w:box { size = { 0.3, 0.3, 0.3 }, position = { 0, 5, 0 } }
    local j = w:joint { type = "prismatic", a = b, anchor = { 0, 5, 0 }, axis = { 0, -1, 0 }, limits = { -0.1, 0.4 } }
    local top = -math.huge
    for _ = 1, 120 do w:step(1 / 60); top = math.max(top, j.position) end
    assert(top <= 0.4 + 1e-3 and top > 0.4 - 1e-3, "slide limit " .. top)
    local rod = w:box { size = { 0.1, 1, 0.1 }, position = { 3, 4.5, 0 }, density = 100 }
    local cone = w:joint { type = "point", a = rod, anchor = { 3, 5, 0 }, limits = { swing = 0.4 } }
    rod.velocity = { 3, 0, 1 }
    local worst = 0
    for _ = 1, 300 do
      w:step(1 / 60)
      local p = rod.position -- the rod's axis from the anchor: the swing angle from straight down
      local d = { p[1] - 3, p[2] - 5, p[3] }
      worst = math.max(worst, math.acos(-d[2] / vlen(d)))
    end
    assert(worst <= 0.4 + 1e-3, "swing " .. worst)
    assert(worst > 0.39, "never reached the cone " .. worst)
    assert(cone.gap < 1e-6)
    assert.are.equal(0.4, cone.limits.swing)
  end)

  it("a motor with enough torque reaches its speed; a weak one cannot lift its load", function()
    local w = world()
    local wheel = w:sphere { radius = 0.5, position = { 0, 5, 0 }, density = 10 }
    local j = w:joint { type = "hinge", a = wheel, anchor = { 0, 5, 0 }, axis = { 0, 0, 1 }, motor = { speed = 2, max = 100 } }
    w:step(1 / 60)
    assert(math.abs(j.speed - 2) < 1e-6, "motor speed " .. j.speed)
    for _ = 1, 60 do w:step(1 / 60) end
    assert(math.abs(j.speed - 2) < 1e-6, "motor speed later " .. j.speed)
    assert(math.abs(j.angle - 2 * 61 / 60) < 1e-6, "angle " .. j.angle)
    assert.are.same({ speed = 2, max = 100 }, j.motor)
    -- a motor against a limit: held there; reversed, it drives the joint off the limit to the other one
    local disc = w:sphere { radius = 0.5, position = { 0, 8, 0 }, density = 10 }
    local jl = w:joint { type = "hinge", a = disc, anchor = { 0, 8, 0 }, axis = { 0, 0, 1 }, limits = { 0, 0.5 },
      motor = { speed = -1, max = 100 } }
    for _ = 1, 30 do w:step(1 / 60) end
    assert(math.abs(jl.angle) < 1e-6 and math.abs(jl.speed) < 1e-6, "held at the limit: " .. jl.angle)
    jl.motor = { speed = 1, max = 100 }
    for _ = 1, 15 do w:step(1 / 60) end
    assert(math.abs(jl.angle - 0.25) < 1e-6 and math.abs(jl.speed - 1) < 1e-6, "driven off the limit: " .. jl.angle)
    for _ = 1, 30 do w:step(1 / 60) end
    assert(math.abs(jl.angle - 0.5) < 1e-6, "stopped at the upper limit: " .. jl.angle)
    -- a rod on a horizontal hinge at one end, motor pushing up with max torque below m g L/2:
    -- from rest it falls with angular acceleration (max - m g L / 2) / I_pivot
    local L, m, tau = 1, 2, 3
    local rod = w:box { size = { L, 0.1, 0.1 }, position = { 5 + L / 2, 5, 0 }, mass = m }
    local jm = w:joint { type = "hinge", a = rod, anchor = { 5, 5, 0 }, axis = { 0, 0, 1 }, motor = { speed = 5, max = tau } }
    local I = m * (L * L + 0.01) / 12 + m * (L / 2) ^ 2
    local h = 1 / 240
    w:step(h)
    local want = h * (tau - m * g * L / 2) / I
    assert(want < 0)
    assert(math.abs(jm.speed - want) < 1e-6 * math.abs(want), string.format("speed %.9g want %.9g", jm.speed, want))
    for _ = 1, 60 do w:step(h) end
    assert(jm.angle < -0.05, "the weak motor lifted the rod: " .. jm.angle)
    jm.motor = nil
    assert.is_nil(jm.motor)
    local ok, e = pcall(function() jm.motor = { speed = 1, max = -1 } end)
    assert.is_false(ok)
    assert.truthy(e:find("max >= 0", 1, true))
  end)

  it("a closed four-bar linkage keeps its loop closed and moves with one degree of freedom", function()
    local w = world()
    -- ground A0 = (0, 0), B0 = (2, 0); crank A0-A1 (length 1), coupler A1-B1, rocker B0-B1 (length 1.5)
    local A0, B0, A1, B1 = { 0, 5 }, { 2, 5 }, { 0, 6 }, { 2, 6.5 }
    local function link(p, q)
      local dx, dy = q[1] - p[1], q[2] - p[2]
      local len = math.sqrt(dx * dx + dy * dy)
      return w:box { size = { len, 0.1, 0.1 }, position = { (p[1] + q[1]) / 2, (p[2] + q[2]) / 2, 0 }, axis = { 0, 0, 1 },
        angle = math.atan(dy, dx), density = 100 }, len
    end
    local crank, l1 = link(A0, A1)
    local coupler, l2 = link(A1, B1)
    local rocker, l3 = link(B0, B1)
    local z = { 0, 0, 1 }
    local js = {
      w:joint { type = "hinge", a = crank, anchor = { A0[1], A0[2], 0 }, axis = z },
      w:joint { type = "hinge", a = coupler, b = crank, anchor = { A1[1], A1[2], 0 }, axis = z },
      w:joint { type = "hinge", a = rocker, b = coupler, anchor = { B1[1], B1[2], 0 }, axis = z },
      w:joint { type = "hinge", a = rocker, anchor = { B0[1], B0[2], 0 }, axis = z },
    }
    local function energy()
      local e = 0
      for _, b in ipairs { crank, coupler, rocker } do e = e + b:kinetic_energy() + b.mass * g * b.position[2] end
      return e
    end
    local e0, top, late, amin, amax = energy(), -math.huge, 0, math.huge, -math.huge
    local scale = (crank.mass + coupler.mass + rocker.mass) * g -- J per metre of height: the swing's energy scale
    for s = 1, 2000 do
      w:step(1 / 60)
      if s > 1500 then late = late + (energy() - e0) / 500 end
      for _, j in ipairs(js) do assert(j.gap < 1e-6 and j.axis_error < 1e-6, "loop open: " .. j.gap) end
      top = math.max(top, energy() - e0)
      -- one degree of freedom: the rocker tip B1 is where the crank angle puts it (circle intersection)
      local a = js[1].angle + math.pi / 2
      local ax, ay = A0[1] + l1 * math.cos(a), A0[2] + l1 * math.sin(a)
      local dx, dy = B0[1] - ax, B0[2] - ay
      local d = math.sqrt(dx * dx + dy * dy)
      local along = (l2 * l2 - l3 * l3 + d * d) / (2 * d)
      local off = math.sqrt(math.max(0, l2 * l2 - along * along))
      local mx, my = ax + along * dx / d, ay + along * dy / d
      local c1 = { mx - off * dy / d, my + off * dx / d }
      local c2 = { mx + off * dy / d, my - off * dx / d }
      local rp, rq = rocker.position, B0
      local tip = { 2 * rp[1] - rq[1], 2 * rp[2] - rq[2] } -- the rocker's far end
      local err = math.min(math.sqrt((tip[1] - c1[1]) ^ 2 + (tip[2] - c1[2]) ^ 2), math.sqrt((tip[1] - c2[1]) ^ 2 + (tip[2] - c2[2]) ^ 2))
      assert(err < 1e-5, "rocker off the one-DOF path by " .. err)
      amin, amax = math.min(amin, js[1].angle), math.max(amax, js[1].angle)
      assert(math.abs(crank.position[3]) < 1e-9 and math.abs(rocker.position[3]) < 1e-9)
    end
    assert(amax - amin > 0.5, "the linkage hardly moved: " .. (amax - amin))
    -- no energy gain: bounded fluctuation (S1's stagger is not exactly conservative), no upward drift
    assert(top < 0.05 * scale, "energy rose by " .. top)
    assert(late < 0.01 * scale, "late mean energy gain " .. late)
  end)

  it("the 50-link capsule chain released horizontal at dt 1/60 survives 1000 steps with gaps below 1 cm", function()
    local w = world()
    local prev, joints = nil, {}
    for i = 1, 50 do
      local b = w:capsule { radius = 0.05, length = 0.3, position = { (i - 0.5) * 0.4, 10, 0 }, axis = { 0, 0, 1 },
        angle = math.pi / 2, density = 100 }
      joints[i] = w:joint { type = "point", a = b, b = prev, anchor = { (i - 1) * 0.4, 10, 0 } }
      prev = b
    end
    local worst = 0
    for _ = 1, 1000 do
      w:step(1 / 60)
      for _, j in ipairs(joints) do
        local gp = j.gap
        assert(gp == gp, "NaN gap")
        worst = math.max(worst, gp)
      end
    end
    assert(worst < 0.01, "largest gap " .. worst)
  end)

  it("a free 20-link chain spun and whipped in 3D at dt 1/60 holds its joints to 1e-6 m and keeps its momentum", function()
    -- no gravity, no world joint: the tips turn ~0.5 rad a step, where S1's directions now cannot reach
    -- the predicted constraints and the fallback (Newton along the constraint normals) solves nearly
    -- every step (measured: 597 of 600). Its impulses are equal and opposite pairs, so P stays what it
    -- was (L does not: they are not through one point; measured, it loses 15 % here, see joint.c).
    -- S1's directions rebuilt at the prediction as the fallback blew this chain up at step 223.
    local w = impetus.world { gravity = { 0, 0, 0 } }
    w.sleeping = false
    local links, joints, prev = {}, {}, nil
    for i = 1, 20 do
      local b = w:capsule { radius = 0.05, length = 0.3, position = { (i - 0.5) * 0.4, 0, 0 }, axis = { 0, 0, 1 },
        angle = math.pi / 2, density = 1000, group = 2, mask = 1 }
      if prev then joints[#joints + 1] = w:joint { type = "point", a = b, b = prev, anchor = { (i - 1) * 0.4, 0, 0 } } end
      links[i], prev = b, b
    end
    for i, b in ipairs(links) do b.velocity = { 0, (i - 10.5) * 0.4 * 6 + (i % 3) * 2, 0.1 * (i % 2) } end
    local function totals()
      local P = { 0, 0, 0 }
      for _, b in ipairs(links) do
        local p = b.momentum
        for k = 1, 3 do P[k] = P[k] + p[k] end
      end
      return P
    end
    local P0 = totals()
    local worst = 0
    for _ = 1, 600 do
      assert(w:step(dt))
      for _, j in ipairs(joints) do worst = math.max(worst, j.gap) end
    end
    local P1 = totals()
    local pn = math.sqrt(P0[1] ^ 2 + P0[2] ^ 2 + P0[3] ^ 2)
    for k = 1, 3 do
      assert(math.abs(P1[k] - P0[k]) < 1e-10 * pn, string.format("P[%d] %.17g -> %.17g", k, P0[k], P1[k]))
    end
    assert(worst < 1e-6, "largest gap " .. worst)
  end)

  it("jointed bodies sleep as one island and wake together", function()
    local w = impetus.world {}
    local a = w:box { size = { 0.2, 1, 0.2 }, position = { 0, 4.5, 0 } }
    local b = w:box { size = { 0.2, 1, 0.2 }, position = { 0, 3.5, 0 } }
    w:joint { type = "point", a = a, anchor = { 0, 5, 0 } }
    local j = w:joint { type = "hinge", a = b, b = a, anchor = { 0, 4, 0 }, axis = { 0, 0, 1 } }
    for _ = 1, 120 do w:step(1 / 60) end
    assert.is_true(a.asleep and b.asleep, "a hanging chain at rest sleeps")
    assert(j.gap < 1e-6)
    b.velocity = { 0.01, 0, 0 } -- a (slow) push on one wakes both at the next step
    w:step(1 / 60)
    assert.is_false(a.asleep)
    assert.is_false(b.asleep)
    for _ = 1, 600 do w:step(1 / 60) end
    assert.is_true(a.asleep and b.asleep, "asleep again")
    j:destroy() -- destroying a joint wakes its partners
    assert.is_false(b.asleep)
    w:step(1 / 60)
    assert(b.position[2] < 3.5, "b falls once its joint is gone")
  end)

  it("joint handles report their bodies and refuse bad limits and motors", function()
    local w = world()
    local a = w:box { size = { 1, 1, 1 } }
    local b = w:box { size = { 1, 1, 1 }, position = { 1, 0, 0 } }
    local j = w:joint { type = "hinge", a = a, b = b, anchor = { 0.5, 0, 0 }, axis = { 0, 1, 0 } }
    assert.are.equal(a, j.a)
    assert.are.equal(b, j.b)
    assert.is_nil(w:joint { type = "point", a = a, anchor = { 0, 0, 0 } }.b)
    local function err(def)
      local ok, e = pcall(function() return w:joint(def) end)
      assert.is_false(ok)
      return e
    end
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 1, 0 }, limits = { 1, 0 } }
      :find("field 'limits' must be {lo, hi} with lo <= hi", 1, true))
    assert.truthy(err { type = "rigid", a = a, anchor = { 0, 0, 0 }, limits = { 0, 1 } }:find("field 'limits'", 1, true))
    assert.truthy(err { type = "point", a = a, anchor = { 0, 0, 0 }, limits = { swing = -1 } }:find("swing", 1, true))
    assert.truthy(err { type = "planar", a = a, anchor = { 0, 0, 0 }, axis = { 0, 1, 0 }, motor = { speed = 1, max = 1 } }
      :find("field 'motor'", 1, true))
    assert.truthy(err { type = "prismatic", a = a, anchor = { 0, 0, 0 }, axis = { 0, 1, 0 }, motor = { speed = 0 / 0, max = 1 } }
      :find("field 'motor'", 1, true))
    assert.truthy(err { type = "prismatic", a = a, anchor = { 0, 0, 0 } }:find("field 'axis'", 1, true))
    assert.truthy(err { type = "twist", a = a, b = b, anchor = { 0, 0, 0 }, limits = "x" }:find("field 'limits'", 1, true))
    -- finite but huge numbers (|axis| overflows, a motor that would make the state non-finite) are refused
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 0, 1e200 } }:find("field 'axis'", 1, true))
    assert.truthy(err { type = "point", a = a, anchor = { 1e300, 0, 0 } }:find("field 'anchor'", 1, true))
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 1, 0 }, motor = { speed = 1e300, max = 1e300 } }
      :find("field 'motor'", 1, true))
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 1, 0 }, limits = { 1e300, 1e300 } }
      :find("field 'limits'", 1, true))
    assert.has_error(function() j.limits = { -1e300, 0 } end)
    assert.is_nil(j.position) -- a hinge has an angle, not a slide
    assert.are.equal(0, j.angle)
  end)

  it("a limit range away from the pose is reached at most 0.25 rad a step, without opening the joint", function()
    local w = world()
    w.gravity = { 0, 0, 0 }
    local arm = w:box { size = { 1, 0.1, 0.1 }, position = { 0.5, 0, 0 } }
    local j = w:joint { type = "hinge", a = arm, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 }, limits = { 20, 21 } }
    local last, worst = 0, 0
    for _ = 1, 120 do
      assert(w:step(1 / 60))
      assert(j.angle - last <= 0.25 + 1e-9, "turned " .. (j.angle - last) .. " rad in a step")
      last, worst = j.angle, math.max(worst, j.gap)
    end
    assert(worst < 1e-6, "gap " .. worst)
    assert(j.angle >= 20 - 1e-3 and j.angle <= 21 + 1e-3, "the angle came into its range: " .. j.angle)
  end)
end)

-- churn helpers: random limits and motors on a joint definition (each with probability p), and no NaN
-- in any live body or joint after a step
local function random_extras(def, kind, p)
  local coordinate = kind == "hinge" or kind == "twist" or kind == "prismatic"
  if coordinate and math.random() < p then def.limits = { -math.random(), math.random() } end
  if coordinate and math.random() < p then def.motor = { speed = math.random() * 4 - 2, max = math.random() * 5 } end
end

local function assert_finite(step, bodies, joints)
  for _, b in ipairs(bodies) do
    if b:valid() then
      local p = b.position
      assert(p[1] == p[1] and p[2] == p[2] and p[3] == p[3], "NaN position at step " .. step)
    end
  end
  for _, j in ipairs(joints) do
    if j:valid() then local gp = j.gap; assert(gp == gp, "NaN gap") end
  end
end

describe("joints under churn", function()
  it("joints of every type created and destroyed at random, with their bodies, never crash or go NaN", function()
    math.randomseed(7)
    local w = impetus.world {}
    local bodies, joints = {}, {}
    local kinds = { "point", "hinge", "twist", "rigid", "prismatic", "planar" }
    local ground = w:box { size = { 20, 1, 20 }, position = { 0, -0.5, 0 }, static = true }
    assert(ground)
    for step = 1, 400 do
      if #bodies < 12 or math.random() < 0.3 then
        local p = { math.random() * 4 - 2, 1 + math.random() * 3, math.random() * 4 - 2 }
        local b = math.random() < 0.5 and w:box { size = { 0.3, 0.2, 0.4 }, position = p }
          or w:capsule { radius = 0.1, length = 0.3, position = p }
        if math.random() < 0.1 then b.kinematic = true; b.velocity = { 0.1, 0, 0 } end
        bodies[#bodies + 1] = b
      end
      if math.random() < 0.5 and #bodies >= 2 then
        local a, b = bodies[math.random(#bodies)], bodies[math.random(#bodies)]
        if a ~= b and a:valid() and b:valid() then
          local kind = kinds[math.random(#kinds)]
          local def = { type = kind, a = a, b = math.random() < 0.2 and nil or b, anchor = a.position }
          if kind ~= "rigid" and (kind ~= "point" or math.random() < 0.5) then def.axis = { math.random() - 0.5, math.random() + 0.1, math.random() - 0.5 } end
          random_extras(def, kind, 0.5)
          if kind == "point" and math.random() < 0.3 then def.limits = { swing = 0.2 + math.random() } end
          local ok, j = pcall(function() return w:joint(def) end)
          if ok then joints[#joints + 1] = j end
        end
      end
      if math.random() < 0.1 and #joints > 0 then table.remove(joints, math.random(#joints)):destroy() end
      if math.random() < 0.05 and #bodies > 0 then table.remove(bodies, math.random(#bodies)):destroy() end
      w:step(1 / 60)
      assert_finite(step, bodies, joints)
    end
  end)
end)

describe("hub bodies (a body with 8 or more joints is a node of the sparse solve)", function()
  it("joints of every type gathered on a few hubs, created and destroyed at random with their bodies, never crash or go NaN", function()
    math.randomseed(11)
    local w = impetus.world {}
    w:box { size = { 20, 1, 20 }, position = { 0, -0.5, 0 }, static = true }
    local kinds = { "point", "hinge", "twist", "rigid", "prismatic", "planar" }
    local hubs, bodies, joints, most = {}, {}, {}, 0
    local function new_hub()
      local hb = w:sphere { radius = 0.3, position = { math.random() * 4 - 2, 3 + math.random(), math.random() * 4 - 2 } }
      if math.random() < 0.15 then hb.kinematic = true; hb.angular_velocity = { 0, 1, 0 } end
      return hb
    end
    for step = 1, 250 do
      while #hubs < 2 do hubs[#hubs + 1] = new_hub() end
      if #bodies < 30 or math.random() < 0.3 then
        local hb = hubs[math.random(#hubs)]
        local c = hb.position
        bodies[#bodies + 1] = w:box { size = { 0.1, 0.1, 0.1 }, position = { c[1] + math.random() - 0.5, c[2] - 0.6, c[3] + math.random() - 0.5 } }
      end
      for _ = 1, 2 do
        local hb = hubs[math.random(#hubs)]
        local b = math.random() < 0.9 and bodies[math.random(#bodies)] or hubs[math.random(#hubs)]
        if b ~= hb and b:valid() and hb:valid() then
          local kind = kinds[math.random(#kinds)]
          local def = { type = kind, a = b, b = math.random() < 0.1 and nil or hb, anchor = b.position }
          if kind ~= "rigid" and kind ~= "point" then def.axis = { math.random() - 0.5, math.random() + 0.1, math.random() - 0.5 } end
          random_extras(def, kind, 0.4)
          local ok, j = pcall(function() return w:joint(def) end)
          if ok then joints[#joints + 1] = j end
        end
      end
      -- (about 40 joints live: many more on 30 bodies over-constrain everything and the solve gets slow)
      if (math.random() < 0.3 or #joints > 40) and #joints > 0 then table.remove(joints, math.random(#joints)):destroy() end
      if math.random() < 0.05 and #bodies > 0 then table.remove(bodies, math.random(#bodies)):destroy() end
      if math.random() < 0.01 then table.remove(hubs, math.random(#hubs)):destroy() end
      local live = 0
      for _, j in ipairs(joints) do if j:valid() then live = live + 1 end end
      most = math.max(most, live)
      w:step(1 / 60)
      assert_finite(step, bodies, joints)
    end
    assert(most >= 30, "the hubs never gathered many joints: " .. most)
  end)

  it("40 bobs on a hub swing as 4 do (one dense block) and as the compound pendulum's elliptic integral says", function()
    local h = 1 / 240
    local mech = require "mechanisms"
    local t40, gap40, drift40, m, hubs40 = mech.hub_star(40, h)
    local t4, gap4, _, _, hubs4 = mech.hub_star(4, h)
    assert(hubs40 == 1 and hubs4 == 0, "hub nodes " .. hubs40 .. " and " .. hubs4)
    local tq = mech.hub_star_quarter(m)
    assert(math.abs(t40 - t4) < 1e-9, string.format("hub node %.12f s vs dense block %.12f s", t40, t4))
    assert(math.abs(t40 / tq - 1) < 5e-3, string.format("quarter period %.6f s, elliptic integral %.6f s", t40, tq)) -- measured -0.29 %
    assert(gap40 < 1e-6 and gap4 < 1e-6, "gaps " .. gap40 .. " " .. gap4)
    assert(drift40 < 1e-9, "the hub moved " .. drift40 .. " m")
  end)

  it("a hub pinned to the world at its centre, with spokes of every length and mass, keeps zero relative velocity", function()
    -- the pin's only moving side is the hub: its block is complete only after the hub is eliminated
    local w = impetus.world {}
    w.sleeping = false
    local hub = w:sphere { radius = 0.3, position = { 0, 5, 0 } }
    local pin = w:joint { type = "point", a = hub, anchor = { 0, 5, 0 } } -- the first joint (index order)
    local links = {}
    for i = 1, 12 do
      local a = 2 * math.pi * i / 12
      local dir = { math.cos(a), 0.3 * math.sin(3 * a), math.sin(a) }
      local r = 0.6 + 0.1 * i
      local b = w:box { size = { 0.1, 0.1, 0.1 }, density = 200 * i, group = 2, mask = 1, position = { r * dir[1], 5 + r * dir[2], r * dir[3] } }
      local at = { 0.3 * dir[1], 5 + 0.3 * dir[2], 0.3 * dir[3] }
      links[#links + 1] = { w:joint { type = i % 3 == 0 and "hinge" or "point", a = b, b = hub, anchor = at, axis = { -dir[3], 0, dir[1] } }, b, at }
    end
    local joints = { pin }
    for _, l in ipairs(links) do joints[#joints + 1] = l[1] end
    local function lever(body, p)
      local R, c = body.rotation, body.center_of_mass
      local d = { p[1] - c[1], p[2] - c[2], p[3] - c[3] }
      return { R[1][1] * d[1] + R[2][1] * d[2] + R[3][1] * d[3], R[1][2] * d[1] + R[2][2] * d[2] + R[3][2] * d[3], R[1][3] * d[1] + R[2][3] * d[2] + R[3][3] * d[3] }
    end
    local function vel(body, l)
      local R, v, om = body.rotation, body.velocity, body.angular_velocity
      local r = {}
      for i = 1, 3 do r[i] = R[i][1] * l[1] + R[i][2] * l[2] + R[i][3] * l[3] end
      return { v[1] + om[2] * r[3] - om[3] * r[2], v[2] + om[3] * r[1] - om[1] * r[3], v[3] + om[1] * r[2] - om[2] * r[1] }
    end
    local ends = {}
    for _, l in ipairs(links) do ends[#ends + 1] = { l[2], lever(l[2], l[3]), lever(hub, l[3]) } end
    local pinl = lever(hub, { 0, 5, 0 })
    local urel, gap = 0, 0
    for _ = 1, 300 do
      w:step(1 / 60)
      for _, e in ipairs(ends) do
        local va, vb = vel(e[1], e[2]), vel(hub, e[3])
        urel = math.max(urel, math.sqrt((va[1] - vb[1]) ^ 2 + (va[2] - vb[2]) ^ 2 + (va[3] - vb[3]) ^ 2))
      end
      local vp = vel(hub, pinl)
      urel = math.max(urel, math.sqrt(vp[1] ^ 2 + vp[2] ^ 2 + vp[3] ^ 2))
      for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
    end
    assert(w.joint_hubs == 1, "hub nodes " .. w.joint_hubs)
    assert(gap < 1e-6, "gap " .. gap) -- measured 7.3e-10 m
    -- measured 2.3e-7 m/s, the same to 8 digits as with the hub solved as a dense block of 13 joints
    assert(urel < 1e-5, "relative velocity " .. urel .. " m/s")
  end)

  it("two spinning hubs joined to each other keep the joints, the momentum and zero relative velocity", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    w.sleeping = false
    local bodies, joints, ends = {}, {}, {}
    local hubs = {}
    -- a joint's articulation point in each body's frame, to read its relative velocity after a step
    local function track(j, a, b, anchor)
      local e = { j = j }
      for k, body in ipairs { a, b } do
        local R, c = body.rotation, body.center_of_mass
        local d = { anchor[1] - c[1], anchor[2] - c[2], anchor[3] - c[3] }
        e[k] = { body = body, l = { R[1][1] * d[1] + R[2][1] * d[2] + R[3][1] * d[3], R[1][2] * d[1] + R[2][2] * d[2] + R[3][2] * d[3],
          R[1][3] * d[1] + R[2][3] * d[2] + R[3][3] * d[3] } }
      end
      ends[#ends + 1] = e
      return j
    end
    local function point_velocity(s)
      local R, v, om = s.body.rotation, s.body.velocity, s.body.angular_velocity
      local r = {}
      for i = 1, 3 do r[i] = R[i][1] * s.l[1] + R[i][2] * s.l[2] + R[i][3] * s.l[3] end
      return { v[1] + om[2] * r[3] - om[3] * r[2], v[2] + om[3] * r[1] - om[1] * r[3], v[3] + om[1] * r[2] - om[2] * r[1] }
    end
    for side = 1, 2 do
      local cx = side == 1 and -1 or 1
      local hub = w:sphere { radius = 0.4, position = { cx, 0, 0 } }
      hubs[side], bodies[#bodies + 1] = hub, hub
      for i = 1, 10 do
        local a = 2 * math.pi * i / 10 + side
        local dir = { math.cos(a), math.sin(a) * 0.6, math.sin(a) * 0.8 }
        local b = w:box { size = { 0.1, 0.1, 0.1 }, density = 300 + 70 * i, group = 2, mask = 1,
          position = { cx + 1.2 * dir[1], 1.2 * dir[2], 1.2 * dir[3] } }
        bodies[#bodies + 1] = b
        local anchor = { cx + 0.4 * dir[1], 0.4 * dir[2], 0.4 * dir[3] }
        joints[#joints + 1] = track(w:joint { type = "point", a = b, b = hub, anchor = anchor }, b, hub, anchor)
      end
    end
    joints[#joints + 1] = track(w:joint { type = "point", a = hubs[2], b = hubs[1], anchor = { 0, 0, 0 } }, hubs[2], hubs[1], { 0, 0, 0 }) -- both ends hubs
    hubs[1].angular_velocity = { 0, 3, 1 }
    hubs[2].angular_velocity = { 2, -1, 0 }
    hubs[2].velocity = { 0, 0.5, 0 }
    local function momentum()
      local P = { 0, 0, 0 }
      for _, b in ipairs(bodies) do
        local v = b.velocity
        for k = 1, 3 do P[k] = P[k] + b.mass * v[k] end
      end
      return P
    end
    local P0, gap, urel = momentum(), 0, 0
    for _ = 1, 600 do
      w:step(1 / 60)
      for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
      -- post-stabilization after the position update: the two points of every joint move together
      for _, e in ipairs(ends) do
        local va, vb = point_velocity(e[1]), point_velocity(e[2])
        urel = math.max(urel, math.sqrt((va[1] - vb[1]) ^ 2 + (va[2] - vb[2]) ^ 2 + (va[3] - vb[3]) ^ 2))
      end
    end
    local P1 = momentum()
    assert(w.joint_hubs == 2, "hub nodes " .. w.joint_hubs)
    assert(gap < 1e-6, "gap " .. gap) -- measured 2.8e-11 m
    -- measured 6.7e-8 m/s (the solve's 1e-9 relative shift on velocities of tens of m/s), as with the two
    -- hubs solved as dense blocks; with the hubs' rows of W G off by 10 %: 8.8e-3 m/s
    assert(urel < 1e-6, "relative velocity " .. urel .. " m/s")
    for k = 1, 3 do assert(math.abs(P1[k] - P0[k]) < 1e-9, string.format("P[%d] %.12g -> %.12g", k, P0[k], P1[k])) end
  end)
end)

describe("joints with contacts (S1 section VI)", function()
  it("40 pendulums on one hub crowd together under it and the joints hold", function()
    local w = impetus.world {}
    w.sleeping = false
    local hub = w:sphere { radius = 0.5, position = { 0, 10, 0 } }
    local js = { w:joint { type = "point", a = hub, anchor = { 0, 10, 0 } } }
    for i = 1, 40 do
      local a = 2 * math.pi * i / 40
      local b = w:box { size = { 0.2, 0.2, 0.2 }, position = { 2 * math.cos(a), 10, 2 * math.sin(a) } }
      js[#js + 1] = w:joint { type = "point", a = b, b = hub, anchor = { 0.5 * math.cos(a), 10, 0.5 * math.sin(a) } }
    end
    for _ = 1, 300 do -- the 40 boxes swing down onto a 0.5 m circle (3.1 m round, 8 m of boxes): they collide
      w:step(1 / 60)
      for _, j in ipairs(js) do assert(j.gap < 1e-6, "gap " .. j.gap) end
    end
  end)

  it("a hinged pair resting on the ground settles, joints held level by level with the contacts", function()
    local w = impetus.world {}
    w.sleeping = false
    w:box { size = { 20, 1, 20 }, position = { 0, -0.5, 0 }, static = true }
    local a = w:box { size = { 1, 0.4, 1 }, position = { -0.5, 0.2, 0 } }
    local b = w:box { size = { 1, 0.4, 1 }, position = { 0.5, 0.2, 0 } }
    local j = w:joint { type = "hinge", a = b, b = a, anchor = { 0, 0.4, 0 }, axis = { 0, 0, 1 } }
    -- and a welded stack: c on the ground, d welded on top of it, pushed sideways
    local c = w:box { size = { 1, 1, 1 }, position = { 5, 0.5, 0 } }
    local d = w:box { size = { 0.5, 0.5, 0.5 }, position = { 5, 1.25, 0 } }
    local weld = w:joint { type = "rigid", a = d, b = c, anchor = { 5, 1, 0 } }
    d.velocity = { 1, 0, 0 }
    for _ = 1, 240 do
      w:step(1 / 60)
      assert(j.gap < 1e-6 and j.axis_error < 1e-6, "hinge " .. j.gap)
      assert(weld.gap < 1e-6 and weld.axis_error < 1e-6, "weld " .. weld.gap .. " " .. weld.axis_error)
    end
    for _, body in ipairs { a, b, c, d } do
      local v, om = body.velocity, body.angular_velocity
      assert(math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) < 1e-3, "still moving")
      assert(math.sqrt(om[1] ^ 2 + om[2] ^ 2 + om[3] ^ 2) < 1e-3, "still turning")
    end
    -- resting on the ground (within the 2 mm contact slop), not sunk, not tipped
    assert(math.abs(a.position[2] - 0.2) < 3e-3 and math.abs(b.position[2] - 0.2) < 3e-3, "pair height")
    assert(math.abs(c.position[2] - 0.5) < 3e-3, "stack base height " .. c.position[2])
    assert(math.abs(d.position[2] - 1.25) < 3e-3, "welded top height " .. d.position[2])
    assert(math.abs(j.angle) < 1e-3, "the hinge folded: " .. j.angle)
  end)
end)
