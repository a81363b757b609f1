-- Game physics: sensors, contact modification before the solver (pre_solve), joint forces and breaking,
-- queries. Every case asserts a number a closed form gives: the steps at which a ball moving at a known
-- speed enters and leaves a zone, the momentum a sensor must leave untouched, m g in a rope at rest.
local impetus = require "impetus"

local function run(w, n, dt)
  for _ = 1, n do w:step(dt or 0.01) end
end

describe("sensors", function()
  -- a ball of radius 0.25 at 10 m/s along x through a sensor box spanning x = 2 .. 3, no gravity: with
  -- dt = 0.01 its centre is at 0.1 k after step k, so it overlaps (|x - 2.5| < 0.75) after steps 18 .. 32
  local function zone_world(mode, as_body)
    local w = impetus.world { gravity = { 0, 0, 0 } }
    w.contact = mode
    local zone
    if as_body then
      zone = w:body { static = true, position = { 2.5, 0, 0 }, shapes = { { type = "box", size = { 1, 4, 4 }, sensor = true } } }
    else
      zone = w:box { static = true, position = { 2.5, 0, 0 }, size = { 1, 4, 4 }, sensor = true }
    end
    local ball = w:sphere { radius = 0.25, mass = 2, position = { 0, 0, 0 }, velocity = { 10, 0, 0 } }
    return w, zone, ball
  end

  for _, mode in ipairs { "impulse", "qp" } do
    for _, as_body in ipairs { false, true } do
      local what = (as_body and "a static body's sensor shape" or "a sensor collider") .. " in the " .. mode .. " mode"
      it(what .. " reports begin after step 18 and end after step 33, and applies no impulse", function()
        local w, zone, ball = zone_world(mode, as_body)
        local began, ended = {}, {}
        for k = 1, 40 do
          w:step(0.01)
          local ev = w:contact_events()
          assert.are.equal(0, #ev.begin) -- a sensor makes no contact
          for _, e in ipairs(ev.sensor_begin) do
            assert.are.equal(zone, e.sensor)
            assert.are.equal(ball, e.other)
            began[#began + 1] = k
          end
          for _, e in ipairs(ev.sensor_end) do
            assert.are.equal(ball, e.other)
            ended[#ended + 1] = k
          end
          local inside = w:overlaps(zone)
          if k >= 18 and k <= 32 then
            assert.are.equal(1, #inside)
            assert.are.equal(ball, inside[1].body)
            assert.are.equal(1, inside[1].shape)
          else
            assert.are.equal(0, #inside)
          end
          -- momentum 2 kg * 10 m/s along x, to 1e-12
          local p = ball.momentum
          assert.is_true(math.abs(p[1] - 20) < 1e-12 and math.abs(p[2]) < 1e-12 and math.abs(p[3]) < 1e-12)
          assert.are.equal(0, #w:contacts())
        end
        assert.are.same({ 18 }, began)
        assert.are.same({ 33 }, ended)
      end)
    end
  end

  it("on a falling body, passes through the ground and keeps m g t of momentum", function()
    local w = impetus.world {}
    w:box { static = true, position = { 0, -0.5, 0 }, size = { 10, 1, 10 } }
    local probe = w:body { mass = 1, position = { 0, 0.5, 0 }, shapes = { { type = "sphere", radius = 0.2, sensor = true } } }
    local touched = 0
    for _ = 1, 60 do
      w:step(1 / 60)
      touched = touched + #w:contact_events().sensor_begin
    end
    assert.are.equal(1, touched) -- it entered the ground box once
    assert.is_true(math.abs(probe.momentum[2] + 9.81) < 1e-12) -- 1 kg * 9.81 m/s^2 * 1 s
    assert.is_true(probe.position[2] < -4)
  end)

  it("a sensor shape of a compound body detects, its solid shape collides", function()
    local w = impetus.world {}
    w:box { static = true, position = { 0, -0.5, 0 }, size = { 10, 1, 10 } }
    local player = w:body { mass = 1, position = { 0, 0.3, 0 }, shapes = {
      { type = "box", size = { 0.5, 0.5, 0.5 } },
      { type = "sphere", radius = 0.6, sensor = true } } }
    local coin = w:sphere { static = true, position = { 0.55, 0.3, 0 }, radius = 0.1 }
    run(w, 60, 1 / 60)
    assert.is_true(math.abs(player.position[2] - 0.25) < 2e-3) -- the box rests on the ground
    local inside = w:overlaps(player, 2)
    local found = {}
    for _, s in ipairs(inside) do found[s.body or s.collider] = true end
    assert.is_true(found[coin] == true)
    local ok, err = pcall(w.overlaps, w, player, 1)
    assert.is_false(ok)
    assert.matches("shape 1 of the body is not a sensor", err)
  end)

  it("two sensors do not detect each other; a bullet is not stopped by a sensor", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local a = w:box { static = true, position = { 0, 0, 0 }, size = { 1, 1, 1 }, sensor = true }
    local b = w:body { position = { 0.2, 0, 0 }, shapes = { { type = "sphere", radius = 0.5, sensor = true } } }
    run(w, 3)
    assert.are.equal(0, #w:overlaps(a))
    local bullet = w:sphere { radius = 0.05, position = { -5, 0, 0 }, velocity = { 400, 0, 0 }, bullet = true }
    run(w, 3)
    assert.is_true(math.abs(bullet.velocity[1] - 400) < 1e-9)
    assert.is_true(bullet.position[1] > 5)
    assert.is_true(b:valid())
  end)

  it("particles pass through a sensor collider", function()
    local w = impetus.world {}
    w:box { static = true, position = { 0, 0, 0 }, size = { 2, 0.2, 2 }, sensor = true }
    local p = w:particle { position = { 0, 1, 0 }, mass = 1 }
    run(w, 100)
    assert.is_true(p.position[2] < -2)
  end)

  -- two touching particles (world.particle_collisions) are in a pair contact, whose stage also makes rows
  -- for the colliders near them: a sensor must not be one of them
  it("particles in contact with each other pass through a sensor collider as if it were not there", function()
    local function fall(sensor)
      local w = impetus.world {}
      w.particle_collisions = true
      if sensor then w:box { static = true, position = { 0, 0, 0 }, size = { 2, 0.2, 2 }, sensor = true } end
      local a = w:particle { position = { -0.1, 1, 0 }, mass = 1, radius = 0.1 }
      local b = w:particle { position = { 0.1, 1, 0 }, mass = 1, radius = 0.1 }
      for _ = 1, 60 do w:step(1 / 60) end
      return a.position[2], b.position[2]
    end
    local ya, yb = fall(true)
    local za, zb = fall(false)
    assert.are.equal(za, ya)
    assert.are.equal(zb, yb)
    assert.is_true(ya < -3.5, "held at " .. ya)
  end)

  it("reaches impetus.on_contact handlers as sensor_begin and sensor_end", function()
    local w, zone, ball = zone_world("impulse", false)
    local seen = {}
    impetus.on_contact(ball, function(self, other, e)
      seen[#seen + 1] = { e.kind, self == ball, other == zone, e.sensor == zone, e.other == ball }
    end)
    for _ = 1, 40 do
      w:step(0.01)
      impetus.dispatch_contacts(w)
    end
    assert.are.same({ { "sensor_begin", true, true, true, true }, { "sensor_end", true, true, true, true } }, seen)
  end)

  it("ends the overlap of a destroyed body", function()
    local w, zone, ball = zone_world("impulse", false)
    run(w, 20)
    assert.are.equal(1, #w:overlaps(zone))
    ball:destroy()
    assert.are.equal(0, #w:overlaps(zone))
    w:step(0.01)
    assert.are.equal(1, #w:contact_events().sensor_end)
  end)

  it("refuses bad fields by name", function()
    local w = impetus.world {}
    for _, f in ipairs {
      function() w:sphere { radius = 1, sensor = "yes" } end,
      function() w:box { static = true, sensor = 1 } end,
      function() w:body { shapes = { { type = "sphere", sensor = {} } } } end,
    } do
      local ok, err = pcall(f)
      assert.is_false(ok)
      assert.matches("sensor", err)
    end
    local ok, err = pcall(w.overlaps, w, {})
    assert.is_false(ok)
    assert.matches("world:overlaps", err)
    local solid = w:box { static = true }
    ok, err = pcall(w.overlaps, w, solid)
    assert.is_false(ok)
    assert.matches("not a sensor", err)
  end)
end)

describe("world.pre_solve", function()
  -- a one-way platform: a contact is disabled while the body moves up or its bottom is below the
  -- platform's top by more than a step's sinking
  local TOP = 2.1
  local function platform_world(one_way)
    local w = impetus.world {}
    w:box { static = true, position = { 0, -0.5, 0 }, size = { 20, 1, 20 } }
    local platform = w:box { static = true, position = { 0, 2, 0 }, size = { 4, 0.2, 4 }, pre_solve = true, restitution = 0 }
    local ball = w:sphere { radius = 0.25, mass = 1, position = { 0, 0.25, 0 }, velocity = { 0, 8, 0 } }
    local calls = 0
    if one_way then
      w.pre_solve = function(world, c)
        calls = calls + 1
        local body = c.a == platform and c.b or c.a
        if body.velocity[2] > 0.05 or body.position[2] - 0.25 < TOP - 0.05 then c.enabled = false end
      end
    end
    return w, ball, function() return calls end
  end

  it("makes a one-way platform: a ball thrown up passes through at free flight and lands on it", function()
    local w, ball, calls = platform_world(true)
    local peak, dt = 0, 1 / 120
    local v0, g = 8, 9.81
    for k = 1, 240 do
      w:step(dt)
      local t = k * dt
      if t < v0 / g then -- rising: exactly the free flight v0 - g t (nothing pushed)
        assert.is_true(math.abs(ball.velocity[2] - (v0 - g * t)) < 1e-9)
      end
      peak = math.max(peak, ball.position[2])
    end
    assert.is_true(calls() > 0)
    -- the first step starts on the ground (its contact takes g h before the position update), then free flight
    local v1 = v0 - g * dt
    assert.is_true(math.abs(peak - (0.25 + v1 * dt + v1 * v1 / (2 * g))) < 1e-4) -- 3.5117 m
    assert.is_true(math.abs(ball.position[2] - (TOP + 0.25)) < 3e-3) -- resting on it, within the contact slop
    assert.is_true(math.abs(ball.velocity[2]) < 1e-3)
  end)

  it("without the callback the same platform stops the ball from below", function()
    local w, ball = platform_world(false)
    local peak = 0
    for _ = 1, 240 do
      w:step(1 / 120)
      peak = math.max(peak, ball.position[2])
    end
    assert.is_true(peak < 1.9 - 0.25 + 1e-2)
    assert.is_true(ball.position[2] < 0.3)
  end)

  it("makes a conveyor belt: a box on it reaches the belt's speed and keeps it", function()
    local w = impetus.world {}
    local belt = w:box { static = true, position = { 0, -0.5, 0 }, size = { 40, 1, 4 }, pre_solve = true }
    local crate = w:box { size = { 0.5, 0.5, 0.5 }, mass = 1, position = { 0, 0.25, 0 } }
    local u = 2
    w.pre_solve = function(world, c)
      c.tangent_velocity = c.b == belt and { u, 0, 0 } or { -u, 0, 0 }
    end
    local times = {}
    for k = 1, 120 do
      w:step(1 / 60)
      times[k] = crate.velocity[1]
    end
    -- kinetic friction 0.5 accelerates it at mu g = 4.905 m/s^2: after 0.25 s, 1.226 m/s
    assert.is_true(math.abs(times[15] - 0.5 * 9.81 * 0.25) < 0.05)
    assert.is_true(math.abs(crate.velocity[1] - u) < 1e-6)
    assert.is_true(math.abs(crate.velocity[3]) < 1e-9)
    assert.is_true(math.abs(crate.position[2] - 0.25) < 2e-3)
  end)

  it("sets a contact's friction and restitution: ice keeps the slide, a pad bounces a dead ball", function()
    local w = impetus.world {}
    w:box { static = true, position = { 0, -0.5, 0 }, size = { 100, 1, 4 }, pre_solve = true }
    local slider = w:box { size = { 0.5, 0.5, 0.5 }, mass = 1, position = { 0, 0.25, 0 }, velocity = { 3, 0, 0 } }
    w.pre_solve = function(world, c) c.friction = 0 end
    for _ = 1, 60 do w:step(1 / 60) end
    assert.is_true(math.abs(slider.velocity[1] - 3) < 1e-9)

    local w2 = impetus.world {}
    w2:box { static = true, position = { 0, -0.5, 0 }, size = { 10, 1, 10 }, pre_solve = true }
    local ball = w2:sphere { radius = 0.25, mass = 1, position = { 0, 1.25, 0 }, restitution = 0 }
    w2.pre_solve = function(world, c) c.restitution = 1 end
    local peak, fell = 0, false
    for _ = 1, 240 do
      w2:step(1 / 240)
      if ball.velocity[2] > 0 then fell = true end
      if fell then peak = math.max(peak, ball.position[2]) end
    end
    assert.is_true(fell)
    assert.is_true(math.abs(peak - 1.25) < 0.02) -- an elastic bounce back to its height
  end)

  it("is called only for the shapes that asked, with the pair's own material", function()
    local w = impetus.world {}
    w:box { static = true, position = { 0, -0.5, 0 }, size = { 10, 1, 10 }, friction = 0.8, restitution = 0.3 }
    local asked = w:box { size = { 0.5, 0.5, 0.5 }, position = { 2, 0.25, 0 }, pre_solve = true, friction = 0.2 }
    w:box { size = { 0.5, 0.5, 0.5 }, position = { -2, 0.25, 0 } }
    local seen = 0
    w.pre_solve = function(world, c)
      seen = seen + 1
      assert.are.equal(asked, c.a)
      assert.is_true(math.abs(c.friction - math.sqrt(0.8 * 0.2)) < 1e-15)
      assert.are.equal(0.3, c.restitution)
      assert.is_true(c.enabled)
      assert.are.same({ 0, 0, 0 }, c.tangent_velocity)
      assert.is_true(#c.points >= 1 and c.points[1].depth ~= nil)
    end
    for _ = 1, 5 do w:step(1 / 60) end
    assert.are.equal(5, seen)
    assert.are.equal("function", type(w.pre_solve))
    w.pre_solve = nil
    w:step(1 / 60)
    assert.are.equal(5, seen)
    assert.is_nil(w.pre_solve)
  end)

  it("an error, a bad value or an unknown field leaves the world as before the step", function()
    for _, body in ipairs {
      function(c) error("boom") end,
      function(c) c.restitution = 2 end,
      function(c) c.frictoin = 0 end,
      function(c) c.enabled = "no" end,
      function(c) c.tangent_velocity = { 0 / 0, 0, 0 } end,
    } do
      local w = impetus.world {}
      w:box { static = true, position = { 0, -0.5, 0 }, size = { 10, 1, 10 }, pre_solve = true }
      local b = w:box { size = { 0.5, 0.5, 0.5 }, position = { 0, 0.25, 0 }, velocity = { 1, 0, 0 } }
      local p = w:particle { position = { 5, 5, 5 } }
      w:step(1 / 60)
      local before = { b.position, b.velocity, b.angular_velocity, p.position, w.time, w.steps }
      w.pre_solve = function(world, c) body(c) end
      local ok, err = pcall(w.step, w, 1 / 60)
      assert.is_false(ok)
      assert.matches("the step was undone", err)
      assert.are.same(before, { b.position, b.velocity, b.angular_velocity, p.position, w.time, w.steps })
    end
    local w = impetus.world {}
    w:box { static = true, position = { 0, -0.5, 0 }, size = { 10, 1, 10 }, pre_solve = true }
    w:box { size = { 0.5, 0.5, 0.5 }, position = { 0, 0.25, 0 } }
    w.pre_solve = function(world, c) c.frictoin = 0 end
    local ok, err = pcall(w.step, w, 1 / 60)
    assert.is_false(ok)
    assert.matches("unknown field 'frictoin'", err)
    w.pre_solve = function(world, c) c.restitution = 2 end
    ok, err = pcall(w.step, w, 1 / 60)
    assert.matches("field 'restitution'", err)
    ok, err = pcall(function() w.pre_solve = 3 end)
    assert.is_false(ok)
    assert.matches("world.pre_solve must be a function", err)
  end)

  it("is refused by the exact mode with a message that says why", function()
    local w = impetus.world {}
    w.contact = "qp"
    w.pre_solve = function() end
    local ok, err = pcall(w.step, w, 1 / 60)
    assert.is_false(ok)
    assert.matches("exact mode", err)
    assert.matches("pre_solve", err)
  end)
end)

describe("joint forces and breaking", function()
  local g = 9.81
  local function hanging(type, m, world_opts)
    local w = impetus.world {}
    local b = w:box { size = { 0.2, 0.2, 0.2 }, mass = m, position = { 0, 1, 0 } }
    local axis = (type == "hinge" or type == "prismatic" or type == "planar") and { 0, 0, 1 } or nil
    local j = w:joint { type = type, a = b, anchor = { 0, 2, 0 }, axis = axis }
    return w, b, j
  end

  for _, type in ipairs { "point", "hinge", "twist", "rigid", "prismatic" } do
    it("a " .. type .. " joint holding a hanging mass at rest reports m g within 1e-6, and no torque", function()
      local w, b, j = hanging(type, 3)
      for k = 1, 120 do -- (it falls asleep after 0.5 s: the joint keeps its load)
        w:step(1 / 60)
        local f, t = j.force, j.torque
        assert.is_true(math.abs(f[2] / (3 * g) - 1) < 1e-6, type .. " step " .. k .. ": " .. f[2])
        assert.is_true(math.abs(f[1]) < 1e-9 and math.abs(f[3]) < 1e-9)
        assert.is_true(math.abs(t[1]) < 1e-9 and math.abs(t[2]) < 1e-9 and math.abs(t[3]) < 1e-9)
      end
      assert.is_true(b.asleep)
    end)
  end

  it("in a hanging chain each joint carries the weight below it", function()
    local w = impetus.world {}
    local prev, joints = nil, {}
    for i = 1, 4 do
      local b = w:box { size = { 0.2, 0.2, 0.2 }, mass = 2, position = { 0, 2 - i, 0 } }
      joints[i] = w:joint { type = "point", a = b, b = prev, anchor = { 0, 2.5 - i, 0 } }
      prev = b
    end
    for _ = 1, 30 do w:step(1 / 60) end
    for i = 1, 4 do
      assert.is_true(math.abs(joints[i].force[2] / ((5 - i) * 2 * g) - 1) < 1e-6)
    end
  end)

  it("a pendulum released level pulls its pivot with 3 m g at the bottom", function()
    local w = impetus.world {}
    local s = w:sphere { radius = 0.01, mass = 1, position = { 1, 2, 0 } }
    local j = w:joint { type = "point", a = s, anchor = { 0, 2, 0 } }
    local peak = 0
    for _ = 1, 2000 do
      w:step(1 / 2000)
      local f = j.force
      peak = math.max(peak, math.sqrt(f[1] ^ 2 + f[2] ^ 2 + f[3] ^ 2))
    end
    -- a point mass (the sphere's own inertia adds 2/5 r^2 / L^2 = 4e-5)
    assert.is_true(math.abs(peak / (3 * g) - 1) < 1e-3)
  end)

  it("a weld holding a horizontal beam reports the torque m g L / 2 about its point", function()
    local w = impetus.world {}
    local beam = w:box { size = { 2, 0.1, 0.1 }, mass = 5, position = { 1, 2, 0 } }
    local j = w:joint { type = "rigid", a = beam, anchor = { 0, 2, 0 } }
    for _ = 1, 10 do w:step(1 / 60) end
    local t = j.torque
    -- the joint holds the beam up against gravity: on the beam, +m g up and +m g L/2 about +z
    assert.is_true(math.abs(j.force[2] / (5 * g) - 1) < 1e-6)
    assert.is_true(math.abs(t[3] / (5 * g * 1) - 1) < 1e-6)
  end)

  it("breaks on the first step when break_force is just below m g, and never just above", function()
    for _, case in ipairs { { 1 - 1e-6, true }, { 1 + 1e-6, false } } do
      local w, b, j = hanging("hinge", 2)
      j.break_force = 2 * g * case[1]
      assert.are.equal(2 * g * case[1], j.break_force)
      w:step(1 / 60)
      local broken = w:broken_joints()
      if case[2] then
        assert.is_false(j:valid())
        assert.are.equal(1, #broken)
        assert.are.equal(j, broken[1].joint)
        assert.are.equal(b, broken[1].a)
        assert.are.equal("hinge", broken[1].type)
        assert.is_true(math.abs(broken[1].force[2] / (2 * g) - 1) < 1e-6)
        for _ = 1, 30 do w:step(1 / 60) end
        assert.is_true(math.abs(b.velocity[2] + g * 30 / 60) < 1e-9) -- falling freely since
      else
        for _ = 1, 600 do
          w:step(1 / 60)
          assert.are.equal(0, #w:broken_joints())
        end
        assert.is_true(j:valid())
      end
    end
  end)

  it("breaks by torque: a beam welded at one end with break_torque just below m g L / 2", function()
    local function beam(limit)
      local w = impetus.world {}
      local b = w:box { size = { 2, 0.1, 0.1 }, mass = 5, position = { 1, 2, 0 } }
      local j = w:joint { type = "rigid", a = b, anchor = { 0, 2, 0 }, break_torque = limit }
      w:step(1 / 60)
      return j, w
    end
    local j1 = beam(5 * g * (1 - 1e-6))
    assert.is_false(j1:valid())
    local j2, w2 = beam(5 * g * (1 + 1e-6))
    for _ = 1, 300 do w2:step(1 / 60) end
    assert.is_true(j2:valid())
  end)

  it("refuses bad break limits by name, and the exact mode says it cannot measure joint forces", function()
    local w = impetus.world {}
    local b = w:box { position = { 0, 1, 0 } }
    for _, bad in ipairs { -1, "x", 0 / 0, 1e13 } do
      local ok, err = pcall(function() w:joint { type = "point", a = b, anchor = { 0, 2, 0 }, break_force = bad } end)
      assert.is_false(ok)
      assert.matches("break_force", err)
    end
    local j = w:joint { type = "point", a = b, anchor = { 0, 2, 0 } }
    local ok, err = pcall(function() j.break_torque = -2 end)
    assert.is_false(ok)
    assert.matches("joint.break_torque", err)
    w.contact = "qp"
    ok, err = pcall(function() return j.force end)
    assert.is_false(ok)
    assert.matches("exact mode", err)
    ok, err = pcall(function() j.break_force = 10 end)
    assert.is_false(ok)
    assert.matches("joint.break_force: the exact mode", err)
  end)
end)

describe("queries", function()
  local function row_world()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local boxes = {}
    for i, x in ipairs { 6, 2, 4 } do
      boxes[i] = w:box { static = false, kinematic = true, size = { 1, 1, 1 }, position = { x, 0, 0 }, group = i == 2 and 2 or 1 }
    end
    local zone = w:box { static = true, sensor = true, position = { 8, 0, 0 }, size = { 1, 1, 1 } }
    return w, boxes, zone
  end

  it("raycast{all = true} returns every hit sorted by fraction", function()
    local w, boxes = row_world()
    local hits = w:raycast({ 0, 0, 0 }, { 10, 0, 0 }, { all = true })
    assert.are.equal(3, #hits)
    local expect = { { boxes[2], 0.15 }, { boxes[3], 0.35 }, { boxes[1], 0.55 } }
    for i, e in ipairs(expect) do
      assert.are.equal(e[1], hits[i].body)
      assert.is_true(math.abs(hits[i].fraction - e[2]) < 1e-12)
      assert.are.same({ -1, 0, 0 }, hits[i].normal)
    end
    assert.are.same({}, w:raycast({ 0, 5, 0 }, { 10, 5, 0 }, { all = true }))
  end)

  it("filters by group and mask, and sees sensors only when asked", function()
    local w, boxes, zone = row_world()
    -- the ray's mask leaves out group 2 (the box at x = 2)
    local hit = w:raycast({ 0, 0, 0 }, { 10, 0, 0 }, { mask = 1 })
    assert.are.equal(boxes[3], hit.body)
    assert.is_true(math.abs(hit.fraction - 0.35) < 1e-12)
    -- a body whose mask leaves out the ray's group is not hit
    boxes[3].mask = 0xfffffffe
    hit = w:raycast({ 0, 0, 0 }, { 10, 0, 0 }, { group = 1, mask = 1 })
    assert.are.equal(boxes[1], hit.body)
    assert.are.equal(2, #w:raycast({ 0, 0, 0 }, { 10, 0, 0 }, { all = true, group = 1 }))
    local all = w:raycast({ 0, 0, 0 }, { 10, 0, 0 }, { all = true, sensors = true })
    assert.are.equal(zone, all[#all].collider)
    assert.is_true(math.abs(all[#all].fraction - 0.75) < 1e-12)
    assert.is_nil(w:raycast({ 7, 0, 0 }, { 10, 0, 0 }))
    for _, bad in ipairs { { alll = true }, { group = -1 }, { mask = 0.5 }, { all = "yes" } } do
      local ok, err = pcall(w.raycast, w, { 0, 0, 0 }, { 1, 0, 0 }, bad)
      assert.is_false(ok)
      assert.matches("world:raycast: the filter", err)
    end
  end)

  it("cast: a sphere onto a plane touches at the closed-form fraction, straight and oblique", function()
    local w = impetus.world {}
    w:plane {}
    local hit = w:cast({ type = "sphere", radius = 0.5 }, { 0, 5, 0 }, { 0, -5, 0 })
    assert.is_true(math.abs(hit.fraction - 0.45) < 1e-9)
    assert.is_true(math.abs(hit.normal[2] - 1) < 1e-12)
    assert.is_true(math.abs(hit.point[2]) < 1e-9)
    hit = w:cast({ type = "sphere", radius = 0.5 }, { 0, 3, 0 }, { 4, -1, 0 })
    assert.is_true(math.abs(hit.fraction - 0.625) < 1e-9) -- 3 - 4 t = 0.5
    assert.is_true(math.abs(hit.point[1] - 2.5) < 1e-8)
  end)

  it("cast: a box onto a box face, square and turned 45 degrees (a corner first)", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local wall = w:box { static = true, position = { 2, 0, 0 }, size = { 1, 4, 4 } }
    local hit = w:cast({ type = "box", size = { 1, 1, 1 } }, { -5, 0, 0 }, { 5, 0, 0 })
    assert.are.equal(wall, hit.collider)
    assert.is_true(math.abs(hit.fraction - 0.6) < 1e-9) -- x + 0.5 = 1.5
    assert.is_true(math.abs(hit.normal[1] + 1) < 1e-12)
    local q = impetus.quat.from_axis_angle({ 0, 0, 1 }, math.pi / 4)
    hit = w:cast({ type = "box", size = { 1, 1, 1 } }, { -5, 0, 0 }, { 5, 0, 0 }, q)
    assert.is_true(math.abs(hit.fraction - (6.5 - 0.5 * math.sqrt(2)) / 10) < 1e-9)
    assert.is_true(math.abs(hit.point[1] - 1.5) < 1e-9)
    -- a body's box and a capsule against a sphere: |c - s| = r1 + r2
    local w2 = impetus.world { gravity = { 0, 0, 0 } }
    local ball = w2:sphere { radius = 1, position = { 0, 0, 0 } }
    hit = w2:cast({ type = "capsule", radius = 0.25, length = 2 }, { -10, 0, 0 }, { 10, 0, 0 }, impetus.quat.from_axis_angle({ 0, 0, 1 }, math.pi / 2))
    assert.are.equal(ball, hit.body)
    assert.is_true(math.abs(hit.fraction - (10 - 2.25) / 20) < 1e-9) -- the capsule's end cap, 1 + 0.25 from the centre
  end)

  it("cast: starting inside is fraction 0, a miss is nil, a filter applies, bad shapes are refused", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local b = w:box { position = { 0, 0, 0 }, size = { 1, 1, 1 }, group = 4 }
    assert.are.equal(0, w:cast({ type = "sphere", radius = 0.2 }, { 0, 0, 0 }, { 5, 0, 0 }).fraction)
    assert.is_nil(w:cast({ type = "sphere", radius = 0.2 }, { 0, 3, 0 }, { 5, 3, 0 }))
    assert.is_nil(w:cast({ type = "sphere", radius = 0.2 }, { -5, 0, 0 }, { 5, 0, 0 }, nil, { mask = 3 }))
    for _, bad in ipairs { { type = "plane" }, { type = "sphere", radius = -1 }, { type = "box", sise = 1 } } do
      local ok, err = pcall(w.cast, w, bad, { 0, 0, 0 }, { 1, 0, 0 })
      assert.is_false(ok)
      assert.matches("world:cast", err)
    end
  end)

  it("cast: a sphere that grazes a box corner by 1e-4 m is hit there, not at the wall behind it", function()
    -- the centre moves along c + b u_perp + s u (u_perp along the corner's diagonal, u across it), its
    -- closest approach to the corner c is b = r - 1e-4, so it touches the corner's sphere of radius r at
    -- s = -sqrt(r^2 - b^2): 4.5e-3 m before the closest approach, a touch 8.9e-3 m long along the path
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local box = w:box { static = true, size = { 1, 1, 1 } }
    local r, b = 0.1, 0.1 - 1e-4
    local k3, k2 = 1 / math.sqrt(3), 1 / math.sqrt(2)
    local function path(s) return { 0.5 + b * k3 + s * k2, 0.5 + b * k3 - s * k2, 0.5 + b * k3 } end
    local wall = w:box { static = true, size = { 1, 1, 1 }, position = path(5.2) }
    local s0, s1 = -4.9875, 5.0125
    local hit = w:cast({ type = "sphere", radius = r }, path(s0), path(s1))
    assert.are.equal(box, hit.collider)
    local s_touch = -math.sqrt(r * r - b * b)
    assert.is_true(math.abs(hit.fraction - (s_touch - s0) / (s1 - s0)) < 1e-9)
    local centre = path(s_touch)
    for i = 1, 3 do
      assert.is_true(math.abs(hit.point[i] - 0.5) < 1e-9) -- the corner
      assert.is_true(math.abs(hit.normal[i] - (centre[i] - 0.5) / r) < 1e-9)
    end
    -- the same path 2e-4 m farther out misses the box and meets the wall
    local function out(s) local p = path(s) return { p[1] + 2e-4 * k3, p[2] + 2e-4 * k3, p[3] + 2e-4 * k3 } end
    assert.are.equal(wall, w:cast({ type = "sphere", radius = r }, out(s0), out(s1)).collider)
  end)

  it("cast: a 0.05 m sphere over 500 m and over 20 km meets the wall at the closed-form fraction", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    w:box { static = true, size = { 1, 4, 4 }, position = { 400.5, 0, 0 } }
    local hit = w:cast({ type = "sphere", radius = 0.05 }, { 0, 0, 0 }, { 500, 0, 0 })
    assert.is_true(math.abs(hit.fraction - 399.95 / 500) < 1e-12)
    assert.is_true(math.abs(hit.point[1] - 400) < 1e-9)
    assert.is_true(math.abs(hit.normal[1] + 1) < 1e-12)
    w:box { static = true, size = { 1, 4, 4 }, position = { 15000.5, 0, 0 } }
    hit = w:cast({ type = "sphere", radius = 0.05 }, { 1000, 0, 0.01 }, { 21000, 0, 0.01 })
    assert.is_true(math.abs(hit.fraction - 13999.95 / 20000) < 1e-12)
    assert.is_true(math.abs(hit.point[1] - 15000) < 1e-9)
  end)

  it("cast: a sphere against turned boxes agrees with the point-box distance solved apart, hits and misses", function()
    -- the reference: the distance from the centre to the box (clamping in the box frame) is convex
    -- along the segment; its minimum by golden sections, then the first t where it equals r by bisection
    local function dist_to_box(p, c, R, h)
      local s = 0
      for a = 1, 3 do
        local l = (p[1] - c[1]) * R[1][a] + (p[2] - c[2]) * R[2][a] + (p[3] - c[3]) * R[3][a]
        local e = math.max(math.abs(l) - h[a], 0)
        s = s + e * e
      end
      return math.sqrt(s)
    end
    local function rot(q) -- the matrix of a unit quaternion {w, x, y, z}
      local w, x, y, z = q[1], q[2], q[3], q[4]
      return { { 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y) },
               { 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x) },
               { 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y) } }
    end
    math.randomseed(11)
    local hits, misses = 0, 0
    for _ = 1, 200 do
      local w = impetus.world { gravity = { 0, 0, 0 } }
      local axis = { math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }
      local len = math.sqrt(axis[1] ^ 2 + axis[2] ^ 2 + axis[3] ^ 2)
      local angle = math.random() * math.pi
      local q = { math.cos(angle / 2) }
      for i = 1, 3 do q[i + 1] = math.sin(angle / 2) * axis[i] / len end
      local h = { 0.2 + math.random(), 0.2 + math.random(), 0.2 + math.random() }
      local c = { math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }
      w:box { static = true, position = c, axis = axis, angle = angle, size = { 2 * h[1], 2 * h[2], 2 * h[3] } }
      local r = 0.05 + 0.5 * math.random()
      local from, to = {}, {}
      for i = 1, 3 do from[i], to[i] = 6 * (math.random() - 0.5), 6 * (math.random() - 0.5) end
      local R = rot(q)
      local function f(t) return dist_to_box({ from[1] + t * (to[1] - from[1]), from[2] + t * (to[2] - from[2]), from[3] + t * (to[3] - from[3]) }, c, R, h) end
      if f(0) > r + 1e-6 then
        local lo, hi = 0, 1
        for _ = 1, 200 do
          local m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
          if f(m1) < f(m2) then hi = m2 else lo = m1 end
        end
        local tmin = 0.5 * (lo + hi)
        local hit = w:cast({ type = "sphere", radius = r }, from, to)
        if f(tmin) > r + 1e-6 then
          assert.is_nil(hit)
          misses = misses + 1
        elseif f(tmin) < r - 1e-6 then
          local a, b = 0, tmin
          for _ = 1, 100 do
            local m = 0.5 * (a + b)
            if f(m) > r then a = m else b = m end
          end
          assert.is_true(math.abs(hit.fraction - a) < 1e-9)
          hits = hits + 1
        end
      end
    end
    assert.is_true(hits > 40 and misses > 40)
  end)

  it("cast: boxes, spheres, capsules and hulls swept onto a mesh floor, from its front only", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local ground = w:mesh { vertices = { { -5, 0, -5 }, { 5, 0, -5 }, { 5, 0, 5 }, { -5, 0, 5 } }, triangles = { { 1, 3, 2 }, { 1, 4, 3 } } }
    local hit = w:cast({ type = "box", size = { 1, 1, 1 } }, { 0.3, 5, 0.2 }, { 0.3, -5, 0.2 })
    assert.are.equal(ground, hit.body)
    assert.is_true(math.abs(hit.fraction - 0.45) < 1e-9)
    assert.is_true(math.abs(hit.normal[2] - 1) < 1e-12)
    assert.is_true(math.abs(hit.point[2]) < 1e-9)
    -- turned 45 degrees about z: an edge first, sqrt(2) / 2 below the centre
    hit = w:cast({ type = "box", size = { 1, 1, 1 } }, { 0.3, 5, 0.2 }, { 0.3, -5, 0.2 }, impetus.quat.from_axis_angle({ 0, 0, 1 }, math.pi / 4))
    assert.is_true(math.abs(hit.fraction - (5 - math.sqrt(0.5)) / 10) < 1e-9)
    assert.is_true(math.abs(hit.point[1] - 0.3) < 1e-9 and math.abs(hit.point[2]) < 1e-9)
    -- a sphere onto the diagonal both triangles share, and obliquely
    hit = w:cast({ type = "sphere", radius = 0.5 }, { 1, 5, 1 }, { 1, -5, 1 })
    assert.is_true(math.abs(hit.fraction - 0.45) < 1e-9)
    assert.is_true(math.abs(hit.normal[2] - 1) < 1e-12)
    hit = w:cast({ type = "sphere", radius = 0.5 }, { 0, 3, 0 }, { 4, -1, 0 })
    assert.is_true(math.abs(hit.fraction - 0.625) < 1e-9)
    assert.is_true(math.abs(hit.point[1] - 2.5) < 1e-9)
    -- a capsule lying along x, and a hull's tip (an octahedron's vertex 1 m below its centre)
    hit = w:cast({ type = "capsule", radius = 0.25, length = 2 }, { 0, 3, 0 }, { 4, -1, 0 }, impetus.quat.from_axis_angle({ 0, 0, 1 }, math.pi / 2))
    assert.is_true(math.abs(hit.fraction - 2.75 / 4) < 1e-9)
    local octahedron = { type = "hull", points = { { 1, 0, 0 }, { -1, 0, 0 }, { 0, 1, 0 }, { 0, -1, 0 }, { 0, 0, 1 }, { 0, 0, -1 } } }
    hit = w:cast(octahedron, { -2, 4, 1 }, { -2, -4, 1 })
    assert.is_true(math.abs(hit.fraction - 3 / 8) < 1e-9)
    assert.is_true(math.abs(hit.point[1] + 2) < 1e-9 and math.abs(hit.point[3] - 1) < 1e-9)
    -- from below, through the back of the triangles: the mesh pushes from its front only
    assert.is_nil(w:cast({ type = "sphere", radius = 0.5 }, { 1, -5, 1 }, { 1, 5, 1 }))
    -- a sweep that ends short of the floor, and one beside it
    assert.is_nil(w:cast({ type = "sphere", radius = 0.5 }, { 1, 5, 1 }, { 1, 0.6, 1 }))
    assert.is_nil(w:cast({ type = "sphere", radius = 0.5 }, { 6, 5, 1 }, { 6, -5, 1 }))
  end)

  it("cast: hulls hit and are hit on their faces at the closed form", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local pts = { { 1, 0, 0 }, { -1, 0, 0 }, { 0, 1, 0 }, { 0, -1, 0 }, { 0, 0, 1 }, { 0, 0, -1 } }
    local oct = w:hull { static = true, points = pts }
    -- a sphere along the face normal (1, 1, 1) / sqrt(3): the face x + y + z = 1 is 1 / sqrt(3) away
    local n = 1 / math.sqrt(3)
    local hit = w:cast({ type = "sphere", radius = 0.3 }, { 5 * n, 5 * n, 5 * n }, { 0, 0, 0 })
    assert.are.equal(oct, hit.body)
    assert.is_true(math.abs(hit.fraction - (5 - n - 0.3) / 5) < 1e-9)
    for i = 1, 3 do assert.is_true(math.abs(hit.normal[i] - n) < 1e-9 and math.abs(hit.point[i] - n / 3 * 3 * n) < 1e-9) end
    -- a box face-on onto the octahedron's tip at y = 1
    hit = w:cast({ type = "box", size = { 1, 1, 1 } }, { 0.1, 6, 0.2 }, { 0.1, 0, 0.2 })
    assert.is_true(math.abs(hit.fraction - 4.5 / 6) < 1e-9)
    assert.is_true(math.abs(hit.point[1]) < 1e-9 and math.abs(hit.point[2] - 1) < 1e-9)
    -- a hull as the swept shape with the optional arguments left out, and in world:overlap
    assert.is_true(math.abs(w:cast({ type = "hull", points = pts }, { 0, 0, 5 }, { 0, 0, 0 }).fraction - 0.6) < 1e-9)
    assert.are.equal(oct, w:overlap({ type = "hull", points = pts }, { 1.5, 0, 0 })[1].body)
  end)

  it("cast: bad input is refused with the argument named; an empty segment is an overlap test", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    w:box { static = true, size = { 1, 1, 1 } }
    local S = { type = "sphere", radius = 0.2 }
    local cases = {
      { { S, { 0 / 0, 0, 0 }, { 1, 0, 0 } }, "world:cast: argument 'from' must be finite" },
      { { S, { 0, 0, 0 }, { math.huge, 0, 0 } }, "world:cast: argument 'to' must be finite" },
      { { S, { 1e308, 0, 0 }, { -1e308, 0, 0 } }, "world:cast: argument 'from' must lie within" },
      { { S, { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 0, 0 } }, "world:cast: argument 'orientation'" },
      { { S, { 0, 0, 0 }, { 1, 0, 0 }, { 0 / 0, 0, 0, 1 } }, "world:cast: argument 'orientation'" },
      { { S, { 0, 0, 0 }, { 1, 0, 0 }, nil, { all = true } }, "world:cast: the filter: unknown field 'all'" },
      { { { type = "hull", points = { { 0, 0, 0 }, { 1, 0, 0 } } }, { 0, 0, 0 }, { 1, 0, 0 } }, "world:cast: hull: a hull needs at least 4 points" },
      { { { type = "mesh" }, { 0, 0, 0 }, { 1, 0, 0 } }, "world:cast: field 'type'" },
      { { { type = "capsule", radius = 0.1, length = -1 }, { 0, 0, 0 }, { 1, 0, 0 } }, "world:cast: a capsule needs" },
      { { { type = "box", size = { 0, 1, 1 } }, { 0, 0, 0 }, { 1, 0, 0 } }, "world:cast: a box needs positive half extents" },
      { { S, { 0, 0, 0 }, "x" }, "world:cast: argument 'to' must be a vector" },
    }
    for _, c in ipairs(cases) do
      local a = c[1]
      local ok, err = pcall(w.cast, w, a[1], a[2], a[3], a[4], a[5])
      assert.is_false(ok)
      assert.is_truthy(err:find(c[2], 1, true), err)
    end
    assert.is_nil(w:cast(S, { 3, 0, 0 }, { 3, 0, 0 }))
    assert.are.equal(0, w:cast(S, { 0.6, 0, 0 }, { 0.6, 0, 0 }).fraction)
    -- starting inside: fraction 0, the narrow phase's normal out of the box (its nearest face, +x)
    local hit = w:cast(S, { 0.4, 0, 0 }, { 5, 0, 0 })
    assert.are.equal(0, hit.fraction)
    assert.is_true(math.abs(hit.normal[1] - 1) < 1e-12)
  end)

  it("gravity_scale: a body falls with scale g, floats at 0, and weighs scale m g on a joint", function()
    local w = impetus.world {}
    local half = w:sphere { radius = 0.1, position = { 0, 10, 0 }, gravity_scale = 0.5 }
    local float = w:sphere { radius = 0.1, position = { 1, 10, 0 }, gravity_scale = 0 }
    local up = w:sphere { radius = 0.1, position = { 2, 10, 0 } }
    up.gravity_scale = -1
    for _ = 1, 60 do w:step(1 / 60) end
    assert.is_true(math.abs(half.position[2] - (10 - 0.25 * 9.81)) < 1e-9)
    assert.are.equal(10, float.position[2])
    assert.is_true(math.abs(up.position[2] - (10 + 0.5 * 9.81)) < 1e-9)
    assert.are.equal(-1, up.gravity_scale)
    local b = w:box { size = { 0.2, 0.2, 0.2 }, mass = 2, position = { 5, 1, 0 }, gravity_scale = 3 }
    local j = w:joint { type = "point", a = b, anchor = { 5, 2, 0 } }
    w:step(1 / 60)
    assert.is_true(math.abs(j.force[2] / (3 * 2 * 9.81) - 1) < 1e-6)
    local ok, err = pcall(function() w:sphere { gravity_scale = "x" } end)
    assert.is_false(ok)
    assert.matches("gravity_scale", err)
    ok, err = pcall(function() b.gravity_scale = 1e9 end)
    assert.is_false(ok)
    assert.matches("body.gravity_scale", err)
  end)
end)

describe("distance, rope and spring joints", function()
  it("a rope lets the bodies approach freely and holds its length", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local a = w:sphere { radius = 0.1, mass = 1, position = { 0, 0, 0 } }
    local b = w:sphere { radius = 0.1, mass = 1, position = { 2, 0, 0 } }
    local rope = w:joint { type = "rope", a = a, b = b, anchor = { 0, 0, 0 }, anchor_b = { 2, 0, 0 } }
    assert.are.equal("distance", rope.type)
    -- approaching: no force, the velocities exactly as set
    a.velocity, b.velocity = { 1, 0, 0 }, { -1, 0, 0 }
    for _ = 1, 30 do
      w:step(1 / 60)
      assert.are.same({ 1, 0, 0 }, a.velocity)
      assert.are.same({ 0, 0, 0 }, rope.force)
    end
    -- separating: stopped at 2 m, momentum conserved (equal masses: both at rest along the line)
    a.velocity, b.velocity = { -3, 0.5, 0 }, { 3, 0.5, 0 }
    local longest = 0
    for _ = 1, 120 do
      w:step(1 / 60)
      local d = math.sqrt((b.position[1] - a.position[1]) ^ 2 + (b.position[2] - a.position[2]) ^ 2)
      longest = math.max(longest, d)
    end
    assert.is_true(longest < 2 + 1e-6)
    local p = { a.momentum[1] + b.momentum[1], a.momentum[2] + b.momentum[2] }
    assert.is_true(math.abs(p[1]) < 1e-9 and math.abs(p[2] - 1) < 1e-9)
  end)

  it("a rope catches a falling mass at its length and then carries m g", function()
    local w = impetus.world {}
    local m = w:sphere { radius = 0.1, mass = 2, position = { 0, 1.5, 0 } }
    local r = w:joint { type = "rope", a = m, anchor = { 0, 1.5, 0 }, anchor_b = { 0, 2, 0 }, length = 1 }
    for _ = 1, 9 do
      w:step(1 / 60)
      assert.are.same({ 0, 0, 0 }, r.force) -- slack: free fall
    end
    for _ = 1, 60 do w:step(1 / 60) end
    assert.is_true(math.abs(m.position[2] - 1) < 1e-9)
    assert.is_true(math.abs(r.force[2] / (2 * 9.81) - 1) < 1e-6)
    assert.is_true(r.gap < 1e-9)
  end)

  it("a rigid distance joint keeps its length both ways", function()
    local w = impetus.world {}
    local m = w:sphere { radius = 0.1, mass = 1, position = { 1, 2, 0 } }
    local j = w:joint { type = "distance", a = m, anchor = { 1, 2, 0 }, anchor_b = { 0, 2, 0 } }
    local worst = 0
    for _ = 1, 240 do
      w:step(1 / 120)
      local p = m.position
      worst = math.max(worst, math.abs(math.sqrt(p[1] ^ 2 + (p[2] - 2) ^ 2) - 1))
    end
    assert.is_true(worst < 1e-8)
    m.velocity = { 0, 0, 0 }
    m.position = { 0, 2.5, 0 } -- pushed inside: a rod pushes back out to 1 m
    for _ = 1, 120 do w:step(1 / 120) end
    local p = m.position
    assert.is_true(math.abs(math.sqrt(p[1] ^ 2 + (p[2] - 2) ^ 2) - 1) < 1e-6)
  end)

  it("a spring between two bodies oscillates with period 2 pi sqrt(m_eff / k) within 0.5 %", function()
    for _, case in ipairs { { 1, 3, 100 }, { 2, 2, 400 } } do
      local ma, mb, k = case[1], case[2], case[3]
      local w = impetus.world { gravity = { 0, 0, 0 } }
      local a = w:sphere { radius = 0.1, mass = ma, position = { -1, 0, 0 } }
      local b = w:sphere { radius = 0.1, mass = mb, position = { 1, 0, 0 } }
      w:joint { type = "spring", a = a, b = b, anchor = { -1, 0, 0 }, anchor_b = { 1, 0, 0 }, stiffness = k, rest_length = 1.8 }
      local h, prev, crossings = 1 / 240, nil, {}
      for s = 1, 2400 do
        w:step(h)
        local d = b.position[1] - a.position[1] - 1.8
        if prev and prev < 0 and d >= 0 then crossings[#crossings + 1] = (s - 1 + prev / (prev - d)) * h end
        prev = d
      end
      local T = (crossings[#crossings] - crossings[1]) / (#crossings - 1)
      local expect = 2 * math.pi * math.sqrt(ma * mb / (ma + mb) / k)
      assert.is_true(#crossings >= 5)
      assert.is_true(math.abs(T / expect - 1) < 0.005, T .. " vs " .. expect)
      -- the centre of mass stays put
      assert.is_true(math.abs(ma * a.position[1] + mb * b.position[1] - (mb - ma)) < 1e-9)
    end
  end)

  it("a damped spring to the world settles at rest_length + m g / k", function()
    local w = impetus.world {}
    local m = w:sphere { radius = 0.1, mass = 2, position = { 0, 1, 0 } }
    local j = w:joint { type = "spring", a = m, anchor = { 0, 1, 0 }, anchor_b = { 0, 2, 0 }, stiffness = 200, damping = 20, rest_length = 1 }
    for _ = 1, 600 do w:step(1 / 60) end
    assert.is_true(math.abs(m.position[2] - (1 - 2 * 9.81 / 200)) < 1e-6)
    assert.is_true(math.abs(j.force[2] / (2 * 9.81) - 1) < 1e-6)
  end)

  it("refuses bad fields by name, and the exact mode refuses a rope", function()
    local w = impetus.world {}
    local a = w:sphere { position = { 0, 0, 0 } }
    for _, def in ipairs {
      { type = "rope", a = a, anchor = { 0, 0, 0 }, anchor_b = { 0, 1, 0 }, length = -1 },
      { type = "rope", a = a, anchor = { 0, 0, 0 } },
      { type = "rope", a = a, anchor = { 0, 0, 0 }, anchor_b = { 0, 1, 0 }, stiffness = 3 },
      { type = "spring", a = a, anchor = { 0, 0, 0 }, anchor_b = { 0, 1, 0 } },
      { type = "spring", a = a, anchor = { 0, 0, 0 }, anchor_b = { 0, 1, 0 }, stiffness = 10, damping = -1 },
      { type = "distance", a = a, anchor = { 0, 0, 0 }, anchor_b = { 0, 1, 0 }, min_length = 2, max_length = 1 },
    } do
      local ok, err = pcall(w.joint, w, def)
      assert.is_false(ok)
      assert.matches("world:joint", err)
    end
    w.contact = "qp"
    local ok, err = pcall(w.joint, w, { type = "rope", a = a, anchor = { 0, 0, 0 }, anchor_b = { 0, 1, 0 } })
    assert.is_false(ok)
    assert.matches("exact mode", err)
    w.contact = "impulse"
    w:joint { type = "rope", a = a, anchor = { 0, 0, 0 }, anchor_b = { 0, 1, 0 } }
    w.contact = "qp"
    ok, err = pcall(w.step, w, 1 / 60)
    assert.is_false(ok)
    assert.matches("distance or rope joint", err)
  end)
end)

describe("continuous collision against dynamic bodies", function()
  for _, mode in ipairs { "impulse", "qp" } do
    it("a 100 m/s bullet ball does not pass through a 5 cm dynamic plank (" .. mode .. " mode)", function()
      for _, bullet in ipairs { false, true } do
        local w = impetus.world { gravity = { 0, 0, 0 } }
        w.contact = mode
        local ball = w:sphere { radius = 0.1, mass = 1, position = { 0, 0, 0 }, velocity = { 100, 0, 0 }, bullet = bullet, restitution = 0 }
        local plank = w:box { size = { 0.05, 1, 1 }, mass = 2, position = { 1, 0, 0 } }
        local behind = true
        for _ = 1, 30 do
          w:step(1 / 60)
          behind = behind and ball.position[1] < plank.position[1]
        end
        if bullet then
          assert.is_true(behind)
          -- a perfectly inelastic impact: both at 100 / 3 m/s, momentum 100 kg m/s, touching
          assert.is_true(math.abs(ball.velocity[1] - 100 / 3) < 1e-9)
          assert.is_true(math.abs(plank.velocity[1] - 100 / 3) < 1e-9)
          assert.is_true(math.abs(plank.position[1] - ball.position[1] - 0.125) < 1e-6)
        else
          assert.is_false(behind) -- without the flag it tunnels: the discrete step never sees the overlap
          assert.are.equal(0, plank.velocity[1])
        end
        assert.is_true(math.abs(ball.momentum[1] + plank.momentum[1] - 100) < 1e-9)
      end
    end)
  end
end)

describe("ball joint twist limit and motor", function()
  local function twist_of(b) -- the turn of the body about y (its x axis in the x-z plane)
    local R = b.rotation
    return math.atan(-R[3][1], R[1][1])
  end

  it("a twist limit stops a spinning body at its bounds, the swing left free", function()
    for _, spin in ipairs { 5, -5 } do
      local w = impetus.world {}
      w.sleeping = false
      local b = w:box { size = { 0.6, 0.2, 0.2 }, mass = 1, position = { 0, 1, 0 }, angular_velocity = { 0, spin, 0 } }
      local j = w:joint { type = "point", a = b, anchor = { 0, 2, 0 }, limits = { twist = { -0.5, 0.3 } } }
      local lo, hi = 0, 0
      for _ = 1, 120 do
        w:step(1 / 60)
        local t = twist_of(b)
        lo, hi = math.min(lo, t), math.max(hi, t)
      end
      -- the joint's axis points from the anchor down to the centre: twist about -y
      if spin > 0 then assert.is_true(math.abs(hi - 0.5) < 1e-6) else assert.is_true(math.abs(lo + 0.3) < 1e-6) end
      assert.is_true(j.gap < 1e-8)
      assert.are.same({ twist = { -0.5, 0.3 } }, j.limits)
    end
    -- the swing stays free: a pendulum released sideways swings through 0.9 rad
    local w = impetus.world {}
    local b = w:box { size = { 0.2, 0.2, 0.2 }, mass = 1, position = { 1, 2, 0 } }
    w:joint { type = "point", a = b, anchor = { 0, 2, 0 }, limits = { twist = { -0.1, 0.1 } } }
    local low = 2
    for _ = 1, 60 do
      w:step(1 / 60)
      low = math.min(low, b.position[2])
    end
    assert.is_true(math.abs(low - 1) < 1e-3)
  end)

  it("refuses bad twist limits by name", function()
    local w = impetus.world {}
    local b = w:box { position = { 0, 1, 0 } }
    for _, lim in ipairs { { twist = { 1, -1 } }, { twist = { -4, 0 } }, { twist = 1 }, {}, { swing = 1, twst = 2 } } do
      local ok, err = pcall(w.joint, w, { type = "point", a = b, anchor = { 0, 2, 0 }, limits = lim })
      assert.is_false(ok)
      assert.matches("field 'limits'", err)
    end
  end)
end)

describe("ball joint motor", function()
  it("drives the relative angular velocity to its target, or accelerates at max / I when too weak", function()
    local w = impetus.world {}
    w.sleeping = false
    local b = w:box { size = { 1, 0.2, 0.2 }, mass = 1, position = { 0, 2, 0 } }
    local j = w:joint { type = "point", a = b, anchor = { 0, 2, 0 }, motor = { velocity = { 0, 2, 0 }, max = 1e6 } }
    for _ = 1, 60 do w:step(1 / 60) end
    local om = b.angular_velocity
    assert.is_true(math.abs(om[2] - 2) < 1e-9 and math.abs(om[1]) < 1e-9 and math.abs(om[3]) < 1e-9)
    assert.are.same({ velocity = { 0, 2, 0 }, max = 1e6 }, j.motor)
    -- torque-limited, without gravity: omega = max t / I_yy
    local w2 = impetus.world { gravity = { 0, 0, 0 } }
    local b2 = w2:box { size = { 1, 0.2, 0.2 }, mass = 1, position = { 0, 2, 0 } }
    w2:joint { type = "point", a = b2, anchor = { 0, 2, 0 }, motor = { velocity = { 0, 10, 0 }, max = 0.05 } }
    local I = b2.inertia_body[2][2] -- (1 + 0.04) / 12
    for _ = 1, 60 do w2:step(1 / 60) end
    assert.is_true(math.abs(b2.angular_velocity[2] - 0.05 * 1 / I) < 1e-9)
    j.motor = nil
    assert.is_nil(j.motor)
    for _, bad in ipairs { { speed = 1, max = 1 }, { velocity = { 0, 1, 0 } }, { velocity = { 0, 1, 0 }, max = -1 }, { velocity = 3, max = 1 } } do
      local ok, err = pcall(function() j.motor = bad end)
      assert.is_false(ok)
      assert.matches("joint.motor", err)
    end
    w.contact = "qp"
    local ok, err = pcall(function() j.motor = { velocity = { 0, 1, 0 }, max = 1 } end)
    assert.is_false(ok)
    assert.matches("cannot drive joint motors", err)
  end)
end)

describe("the games gallery", function()
  it("pinball's one-way gate (world.pre_solve) lets a launched ball out of the lane and none back in", function()
    local helpers = require "helpers"
    local r = impetus.runner(helpers.root .. "/scenes/games/pinball/main.lua")
    r:start()
    local s = r.state
    s.ball.position, s.ball.velocity = { 3.05, 7.2, 0 }, { 0, 6, 0 }
    for _ = 1, 12 do r:advance(1 / 60) end
    assert.is_true(s.ball.position[2] > 7.65 + 0.3, "the ball went up through the gate")
    s.ball.position, s.ball.velocity = { 3.05, 8.2, 0 }, { 0, -3, 0 }
    local lowest = math.huge
    for _ = 1, 30 do
      r:advance(1 / 60)
      lowest = math.min(lowest, s.ball.position[2])
    end
    assert.is_true(lowest > 7.65 + 0.03 + 0.15 - 0.02, "the ball stayed on the gate: " .. lowest) -- (a 3 m/s impact sinks it 1 cm for a step)
  end)
end)
