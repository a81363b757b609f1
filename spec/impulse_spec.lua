-- impulse contact mode (engine/impulse.c): S1's step order with friction, restitution, warm starting,
-- shock propagation, sleeping, bullets and the planar mode. Every test asserts physics as numbers.
local impetus = require "impetus"
local helpers = require "spec.support.helpers"
local quat = impetus.quat
local dt = 1 / 60
local g = 9.81

local function speed(v) return math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) end

-- a static incline at angle th (about z, rising to +x... its surface normal n) and a body resting on it
local function incline(th, mu_ground)
  local w = impetus.world {}
  w.sleeping = false
  w:box { static = true, size = { 40, 1, 4 }, axis = { 0, 0, 1 }, angle = th, friction = mu_ground }
  return w, { -math.sin(th), math.cos(th), 0 }
end

-- acceleration along the slope between t = 0.5 s and t = 1.5 s
local function slope_accel(w, b)
  for _ = 1, 30 do w:step(dt) end
  local s0, t0 = speed(b.velocity), w.time
  for _ = 1, 60 do w:step(dt) end
  return (speed(b.velocity) - s0) / (w.time - t0)
end

describe("impulse contact", function()
  it("is the default contact mode; qp and none can be chosen, anything else is refused clearly", function()
    local w = impetus.world {}
    assert.are.equal("impulse", w.contact)
    w.contact = "qp"
    assert.are.equal("qp", w.contact)
    w.contact = "none"
    assert.are.equal("none", w.contact)
    local ok, err = pcall(function() w.contact = "soft" end)
    assert.is_false(ok)
    assert.truthy(err:find("\"impulse\", \"qp\" or \"none\"", 1, true))
    -- "none": contacts are reported, bodies fall through
    w.contact = "none"
    w:plane {}
    local b = w:sphere { radius = 0.5, position = { 0, 0.4, 0 } }
    for _ = 1, 30 do w:step(dt) end
    assert.are.equal(1, #w:contacts())
    assert.is_true(b.position[2] < -0.5)
  end)

  it("bounces a ball to e^2 h0 (restitution, the larger of the pair)", function()
    for _, e in ipairs { 0.5, 0.8 } do
      local w = impetus.world {}
      w:plane { restitution = 0 }
      local b = w:sphere { radius = 0.1, position = { 0, 2.1, 0 }, restitution = e }
      local top, up = 0, false
      for _ = 1, 240 do
        w:step(dt)
        if b.velocity[2] > 0 then up = true end
        if up then top = math.max(top, b.position[2] - 0.1) end
        if up and b.velocity[2] < 0 and b.position[2] - 0.1 < top - 0.01 then break end
      end
      -- discrete impact (up to one step inside the ground, gravity during that step): within 10 %
      helpers.near(top, e * e * 2, 0.1 * e * e * 2, "rebound height for e = " .. e)
    end
  end)

  it("passes the momentum along a row of touching equal balls (e = 1)", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local balls = {}
    for i = 1, 5 do balls[i] = w:sphere { radius = 0.5, position = { i - 1, 0, 0 }, restitution = 1, friction = 0 } end
    w:collide() -- the touching pairs are known before the first step
    balls[1].velocity = { 2, 0, 0 }
    w:step(dt)
    for i = 1, 4 do helpers.near(balls[i].velocity[1], 0, 1e-6, "ball " .. i) end
    helpers.near(balls[5].velocity[1], 2, 1e-6, "last ball")
    local p = 0
    for i = 1, 5 do p = p + balls[i].momentum[1] end
    helpers.near(p, 2 * balls[1].mass, 1e-6, "momentum")
  end)

  it("keeps a box on an incline below tan(theta) = mu and slides it at g (sin - mu cos) above", function()
    local mu = 0.5 -- tan(theta) = mu at 26.6 degrees
    for _, deg in ipairs { 15, 25, 30, 40 } do
      local th = math.rad(deg)
      local w, n = incline(th, mu)
      local b = w:box { size = { 1, 1, 1 }, axis = { 0, 0, 1 }, angle = th, position = { n[1], n[2], 0 }, friction = mu }
      local a = slope_accel(w, b)
      local expect = math.max(0, g * (math.sin(th) - mu * math.cos(th)))
      helpers.near(a, expect, 0.01 * g, deg .. " degrees")
      if expect == 0 then helpers.near(speed(b.velocity), 0, 1e-3, deg .. " degrees: sticks") end
    end
  end)

  it("uses the static coefficient while sticking and the kinetic one while sliding", function()
    local th = math.rad(30) -- tan = 0.577: held by mu_s = 0.7, and once pushed it slides on mu_k = 0.3
    local w, n = incline(th, 1)
    local b = w:box { size = { 1, 1, 1 }, axis = { 0, 0, 1 }, angle = th, position = { n[1], n[2], 0 },
                      friction = 0.3 ^ 2, static_friction = 0.7 ^ 2 } -- geometric mean with the ground's 1
    w:collide() -- touching from the start: it never slid
    helpers.near(b.friction, 0.09, 1e-12, "friction")
    helpers.near(slope_accel(w, b), 0, 1e-3, "sticks")
    b.velocity = { -math.cos(th) * 0.5, -math.sin(th) * 0.5, 0 }
    helpers.near(slope_accel(w, b), g * (math.sin(th) - 0.3 * math.cos(th)), 0.01 * g, "slides")
  end)

  it("rolls a ball down an incline at 5/7 g sin(theta)", function()
    local th = math.rad(20)
    local w, n = incline(th, 0.8)
    local b = w:sphere { radius = 0.3, position = { 0.8 * n[1], 0.8 * n[2], 0 }, friction = 0.8 }
    helpers.near(slope_accel(w, b), 5 / 7 * g * math.sin(th), 0.005 * g, "rolling")
    -- rolling without slipping: omega r = v
    helpers.near(speed(b.angular_velocity) * 0.3, speed(b.velocity), 0.005 * speed(b.velocity), "omega r = v")
  end)

  it("keeps a stack of 10 boxes at rest: drift under 1 mm over 10 s", function()
    local w = impetus.world {}
    w.sleeping = false
    w:plane {}
    local bs = {}
    for i = 1, 10 do bs[i] = w:box { size = { 1, 1, 1 }, position = { 0, i - 0.5, 0 }, friction = 0.6 } end
    for _ = 1, 60 do w:step(dt) end
    local p0 = {}
    for i = 1, 10 do p0[i] = bs[i].position end
    for _ = 1, 600 do w:step(dt) end
    for i = 1, 10 do
      local p = bs[i].position
      local d = math.sqrt((p[1] - p0[i][1]) ^ 2 + (p[2] - p0[i][2]) ^ 2 + (p[3] - p0[i][3]) ^ 2)
      assert.is_true(d < 1e-3, "box " .. i .. " drifted " .. d .. " m")
    end
    -- and it settled where it was put: the top box within 2 cm of 9.5 m, no sideways slide
    helpers.near(bs[10].position[2], 9.5, 0.02, "top height")
    helpers.near(bs[10].position[1], 0, 0.01, "top x")
  end)

  it("stands a pyramid with a base of 20 for 1000 steps (top drops < 5 mm, no box slides > 1 cm)", function()
    -- built exactly touching; its boxes keep their contacts when the solver lifts them by micrometres
    -- (shape.h's SHAPE_TOUCH), so no row falls onto the one below
    local w = impetus.world {}
    w.sleeping = false
    w:plane {}
    local bs, p0 = {}, {}
    for row = 0, 19 do
      for k = 0, 19 - row do
        local b = w:box { size = { 1, 1, 1 }, position = { k - (19 - row) / 2, row + 0.5, 0 }, friction = 0.6 }
        bs[#bs + 1] = b
        p0[#p0 + 1] = b.position
      end
    end
    assert.are.equal(210, #bs)
    for _ = 1, 1000 do w:step(dt) end
    local top = bs[#bs]
    assert.is_true(p0[#bs][2] - top.position[2] < 0.005, "top dropped " .. (p0[#bs][2] - top.position[2]))
    for i, b in ipairs(bs) do
      local p = b.position
      local side = math.sqrt((p[1] - p0[i][1]) ^ 2 + (p[3] - p0[i][3]) ^ 2)
      assert.is_true(side < 0.01, "box " .. i .. " slid " .. side)
    end
  end)

  it("lets nothing through the ground at 100 m/s: a plane, and a thin box for a bullet", function()
    local w = impetus.world {}
    w:plane {}
    local b = w:sphere { radius = 0.1, position = { 0, 2, 0 }, velocity = { 0, -100, 0 } }
    local lowest = math.huge
    for _ = 1, 120 do w:step(dt); lowest = math.min(lowest, b.position[2]) end
    assert.is_true(b.position[2] > 0, "above the plane at the end: " .. b.position[2])
    local w2 = impetus.world {}
    w2:body { static = true, position = { 0, -0.05, 0 }, shapes = { { type = "box", size = { 10, 0.1, 10 } } } }
    local s = w2:sphere { radius = 0.1, position = { 0, 2, 0 }, velocity = { 0, -100, 0 }, bullet = true }
    for _ = 1, 120 do
      w2:step(dt)
      assert.is_true(s.position[2] > -0.05, "the bullet went through the ground: y = " .. s.position[2])
    end
    helpers.near(s.position[2], 0.1, 0.02, "the bullet rests on the ground")
  end)

  it("puts a resting island to sleep and wakes it when touched", function()
    local w = impetus.world {}
    w:plane {}
    local a = w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 } }
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 1.5, 0 } }
    for _ = 1, 240 do w:step(dt) end
    assert.is_true(a.asleep and b.asleep, "asleep")
    local y = b.position[2]
    for _ = 1, 60 do w:step(dt) end
    assert.are.equal(y, b.position[2])
    b:apply_impulse({ 0, 0, 1000 }, b.position)
    w:step(dt)
    assert.is_false(b.asleep)
    assert.is_true(math.abs(b.velocity[3]) > 0.05)
  end)

  it("wakes the whole sleeping island a moving body touches: momentum reaches its far end", function()
    -- three boxes asleep in a row on frictionless ground, touching; a ball hits the first. The
    -- island wakes as one in that step (a sleeper left asleep beside a woken one would hold it as a
    -- wall): no friction and no gravity along x, so the x momentum after is the ball's before, and
    -- the box at the far end moves off at once
    local w = impetus.world {}
    w:plane { friction = 0 }
    local boxes = {}
    for i = 1, 3 do boxes[i] = w:box { size = { 1, 1, 1 }, position = { i - 1, 0.5, 0 }, friction = 0 } end
    for _ = 1, 240 do w:step(dt) end
    for i = 1, 3 do assert.is_true(boxes[i].asleep, "box " .. i .. " asleep") end
    local ball = w:sphere { radius = 0.25, position = { -1.5, 0.5, 0 }, velocity = { 6, 0, 0 }, friction = 0, restitution = 0 }
    local p0 = ball.mass * 6
    for _ = 1, 12 do w:step(dt) end
    local p = ball.mass * ball.velocity[1]
    for i = 1, 3 do
      assert.is_false(boxes[i].asleep, "box " .. i .. " woke")
      p = p + boxes[i].mass * boxes[i].velocity[1]
    end
    -- (shock propagation's last pass holds the boxes, a level below the ball, and corrects the ball
    -- alone: 4e-6 of the momentum, measured)
    helpers.near(p, p0, 1e-4 * p0, "x momentum")
    assert.is_true(boxes[3].velocity[1] > 0.1, "the far box moves: " .. boxes[3].velocity[1])
  end)

  it("pushes dynamic bodies with a kinematic one", function()
    local w = impetus.world {}
    w:plane {}
    local k = w:box { kinematic = true, size = { 1, 1, 1 }, position = { -1.2, 0.5, 0 }, velocity = { 1, 0, 0 } }
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 } }
    for _ = 1, 90 do w:step(dt) end
    assert.is_true(b.position[1] > k.position[1] + 0.95, "ahead of the pusher")
    helpers.near(b.position[1] - k.position[1], 1, 0.02, "pushed along")
  end)

  it("planar mode keeps motion in the x-y plane and rotation about z", function()
    local w = impetus.world { gravity = { 0, -9.81, 1 } }
    w.planar = true
    w:plane {}
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 2, 0 }, axis = { 0, 0, 1 }, angle = 0.3, angular_velocity = { 3, 2, 1 } }
    for _ = 1, 120 do
      w:step(dt)
      local v, om = b.velocity, b.angular_velocity
      assert.are.equal(0, v[3])
      assert.are.equal(0, om[1]); assert.are.equal(0, om[2])
    end
    helpers.near(b.position[3], 0, 1e-12, "z")
  end)
end)

describe("contact events with impulses", function()
  it("report the approach speed at begin, the collision impulse as a hit, the last impulse at end", function()
    local w = impetus.world {}
    w:plane { restitution = 0 }
    local b = w:sphere { radius = 0.1, position = { 0, 1.1, 0 }, restitution = 0.5 }
    local m = b.mass
    local begin_speed, hit, ended
    for _ = 1, 120 do
      w:step(dt)
      local ev = w:contact_events()
      if #ev.begin > 0 and not begin_speed then begin_speed = ev.begin[1].speed end
      if #ev.hit > 0 and not hit then hit = ev.hit[1] end
      if #ev["end"] > 0 and not ended then ended = ev["end"][1] end
    end
    -- it falls 1 m: v = sqrt(2 g h) = 4.43 m/s, within a step of gravity
    helpers.near(begin_speed, math.sqrt(2 * g), g * dt, "approach speed at begin")
    assert.are.equal(b, hit.a)
    helpers.near(hit.speed, math.sqrt(2 * g), 2 * g * dt, "hit speed")
    helpers.near(hit.impulse, m * 1.5 * hit.speed, 1e-9 * m, "j = (1 + e) m v against the ground")
    helpers.near(hit.normal[2], 1, 1e-12, "normal")
    assert.is_truthy(ended, "it bounced off")
    -- it left the ground in a step that needed no impulse: the pair's last impulse is zero
    helpers.near(ended.impulse, 0, 1e-12, "impulse at end")
  end)

  it("a sleeping body stays where it fell asleep while other contacts in the world are live", function()
    -- a box at rest on the ground falls asleep; a ball kept sliding elsewhere keeps its own contact live.
    -- The sleeping box must not move (found by scenes/rope_bridge.lua: boxes that fell off the bridge sank
    -- through the ground once asleep, 1.4 mm a step, while the bridge's contacts were live)
    local w = impetus.world {}
    w:plane { restitution = 0, friction = 0.5 }
    local box = w:box { size = { 0.4, 0.4, 0.4 }, position = { 0, 0.2, 0 } }
    local ball = w:sphere { radius = 0.2, position = { 5, 0.2, 0 }, friction = 0.5 }
    local slept_at
    for s = 1, 600 do
      if s > 30 then ball.velocity = { 1, ball.velocity[2], 0 } end
      w:step(1 / 60)
      if box.asleep and not slept_at then slept_at = box.position end
    end
    assert.truthy(slept_at, "the box never fell asleep")
    assert.is_true(box.asleep)
    local p = box.position
    assert(math.abs(p[2] - slept_at[2]) < 1e-9, string.format("the sleeping box moved from y = %.6f to %.6f", slept_at[2], p[2]))
    assert(p[2] > 0.19, "the box sank into the ground: y = " .. p[2])
  end)

  it("calls a body's on_contact after the step with the kind, impulse and a normal towards it", function()
    local w = impetus.world {}
    local ground = w:body { static = true, shapes = { { type = "plane" } } }
    local b = w:box { size = { 0.2, 0.2, 0.2 }, position = { 0, 0.6, 0 } }
    local seen = {}
    impetus.on_contact(ground, function(self, other, e)
      assert.is_false(w.locked)
      seen[#seen + 1] = { who = "ground", kind = e.kind, other = other, n = e.normal and e.normal[2], impulse = e.impulse }
    end)
    impetus.on_contact(b, function(self, other, e)
      seen[#seen + 1] = { who = "box", kind = e.kind, other = other, n = e.normal and e.normal[2], impulse = e.impulse, speed = e.speed }
    end)
    for _ = 1, 60 do
      w:step(dt)
      impetus.dispatch_contacts(w)
    end
    local kinds = {}
    for _, s in ipairs(seen) do kinds[s.who .. ":" .. s.kind] = s end
    assert.is_truthy(kinds["box:begin"])
    assert.are.equal(ground, kinds["box:begin"].other)
    assert.are.equal(b, kinds["ground:begin"].other)
    assert.is_true(kinds["box:begin"].speed > 2, "approach speed")
    -- a hit: the normal points towards whoever is told, the impulse is the pair's
    assert.are.equal(1, kinds["box:hit"].n)
    assert.are.equal(-1, kinds["ground:hit"].n)
    assert.is_true(kinds["box:hit"].impulse > 0)
    assert.are.equal(kinds["box:hit"].impulse, kinds["ground:hit"].impulse)
    local ok, err = pcall(impetus.on_contact, 5, function() end)
    assert.is_false(ok)
    assert.truthy(err:find("impetus.on_contact: argument 1", 1, true))
  end)
end)

describe("impulse-mode errors", function()
  it("name the function and the argument", function()
    local w = impetus.world {}
    local function err_of(f) local ok, e = pcall(f); assert.is_false(ok); return e end
    assert.truthy(err_of(function() w:box { restitution = 2 } end):find("world:box: field 'restitution' must be a number in 0 .. 1", 1, true))
    assert.truthy(err_of(function() w:sphere { friction = -1 } end):find("world:sphere: field 'friction'", 1, true))
    assert.truthy(err_of(function() w:box { friction = "x" } end):find("world:box", 1, true))
    assert.truthy(err_of(function() w:body { shapes = { { type = "box", static_friction = -2 } } } end):find("shapes[1]: field 'static_friction'", 1, true))
    local b = w:box {}
    assert.truthy(err_of(function() b.restitution = 1.5 end):find("body.restitution must be a number in 0 .. 1", 1, true))
    assert.truthy(err_of(function() b.bullet = 1 end):find("boolean", 1, true))
    assert.truthy(err_of(function() w.velocity_iterations = 0 end):find("world.velocity_iterations must be in 1 .. 1000", 1, true))
    assert.truthy(err_of(function() w.position_iterations = -1 end):find("world.position_iterations", 1, true))
    assert.truthy(err_of(function() w.planar = "yes" end):find("boolean", 1, true))
    assert.truthy(err_of(function() w.contact = {} end):find("string", 1, true))
    b.friction = 0.25
    assert.are.equal(0.25, b.friction)
    assert.are.equal(0.25, b.static_friction, "static follows friction when not set")
    b.static_friction = 0.75
    assert.are.equal(0.75, b.static_friction)
    b:destroy()
    assert.truthy(err_of(function() return b.friction end):find("stale", 1, true))
  end)
end)

describe("on_contact in a scene", function()
  it("runs after each fixed step of the runner, for bodies the script keeps no reference to", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/scene.lua", [[
      local impetus = require "impetus"
      hits = 0
      return {
        setup = function(world)
          world:plane { restitution = 0 } -- (a Collider's default restitution is 0.5)
          impetus.on_contact(world:sphere { radius = 0.2, position = { 0, 1, 0 } }, function(self, other, e)
            assert(not world.locked)
            if e.kind == "begin" then hits = hits + 1 end
          end)
        end,
      }
    ]])
    local r = impetus.runner(dir .. "/scene.lua")
    r:start()
    collectgarbage("collect")
    collectgarbage("collect")
    for _ = 1, 60 do r:step() end
    assert.is_nil(r.error)
    assert.are.equal(1, r.env.hits)
  end)
end)

-- Coulomb's impact law (Routh): the collision impulse j_n = (1 + e) m v_n and a tangential impulse that
-- stops the contact point's sliding if |j_t| <= mu j_n (the ball leaves rolling: a solid sphere's
-- contact mass along the tangent is 2 m / 7, so v_t = 5/7 of 1 m/s), else j_t = mu j_n and the ball
-- leaves sliding with v_t = v_t0 - mu (1 + e) v_n and omega R = 5/2 mu (1 + e) v_n
describe("friction at impacts", function()
  local near = helpers.near
  local bounce = require("fidelity").oblique_bounce

  it("where the cone holds the impulse, a ball leaves rolling at 5/7 of its tangential speed", function()
    local vt, vn, wr = bounce(0.6, 0)
    near(vt, 5 / 7, 1e-9, "tangential speed")
    near(wr, 5 / 7, 1e-9, "omega R")
    near(vn, 0, 1e-9, "normal speed (e = 0)")
  end)

  it("where it does not, the ball slides out with v_t = 1 - mu (1 + e) 3 and omega R = 5/2 mu (1 + e) 3", function()
    local vt, vn, wr = bounce(0.05, 0.5)
    near(vt, 1 - 0.05 * 1.5 * 3, 1e-9, "tangential speed")
    near(wr, 2.5 * 0.05 * 1.5 * 3, 1e-9, "omega R")
    near(vn, 1.5, 1e-9, "normal speed (e = 0.5)")
  end)

  -- a box landing flat on its face: by symmetry the four corners share the impulse, so it leaves at
  -- e v straight up (the step then adds -g h) without sliding or turning; corner by corner, the first
  -- corner's impulse would tip it and the others' friction push it sideways
  it("a box landing flat bounces straight up at e v and neither slides nor turns", function()
    local bounce_error, side, spin, drift, height = require("fidelity").flat_landing()
    assert.is_true(bounce_error ~= nil, "it never bounced")
    -- (the face's four rows are solved with the patch's 1e-6 regularization)
    near(bounce_error, 0, 1e-5, "the bounce against e v - g h")
    assert.is_true(side < 1e-8, "sliding at " .. side .. " m/s")
    assert.is_true(spin < 1e-8, "turning at " .. spin .. " rad/s")
    assert.is_true(drift < 1e-6, "moved " .. drift .. " m sideways")
    near(height, 0.5, 3e-3, "resting on its face")
  end)

  -- columns of boxes dropped 0.2 m onto each other (the peer benchmark's pile, 3 x 3 columns): each box
  -- lands flat on the one below, so no box moves sideways by more than round-off and the solver's drift
  it("columns of ten boxes dropped onto each other land without sliding (< 1 cm)", function()
    local w = impetus.world {}
    w.sleeping = false
    w:plane { friction = 0.6 }
    local bs, p0 = {}, {}
    for layer = 0, 9 do
      for i = 0, 2 do
        for k = 0, 2 do
          bs[#bs + 1] = w:box { size = { 1, 1, 1 }, friction = 0.6, position = { (i - 1) * 1.2, 0.7 + layer * 1.2, (k - 1) * 1.2 } }
          p0[#bs] = bs[#bs].position
        end
      end
    end
    for _ = 1, 240 do w:step(dt) end
    for i, b in ipairs(bs) do
      local p = b.position
      local side = math.sqrt((p[1] - p0[i][1]) ^ 2 + (p[3] - p0[i][3]) ^ 2)
      assert.is_true(side < 0.01, "box " .. i .. " slid " .. side)
    end
    -- each of the ten interfaces keeps at most the contact slop (2 mm) of the impacts' overlap
    local top = bs[#bs].position[2]
    assert.is_true(top > 9.5 - 10 * 0.0025 and top < 9.5 + 1e-3, "the top box rests on nine at " .. top)
  end)

  -- the same columns with sleeping on: they land with about 12 mm of overlap at each interface and come to
  -- rest within a third of a second, but sleep only once the split impulses pushed them out to the slop
  -- (a sleeper keeps its overlaps: the columns would sleep 9 cm short)
  it("columns of ten boxes dropped onto each other fall asleep only once pushed out to the slop", function()
    local w = impetus.world {}
    w.sleeping = true
    w:plane { friction = 0.6 }
    local bs = {}
    for layer = 0, 9 do
      for i = 0, 1 do
        bs[#bs + 1] = w:box { size = { 1, 1, 1 }, friction = 0.6, position = { (i - 0.5) * 1.2, 0.7 + layer * 1.2, 0 } }
      end
    end
    for _ = 1, 600 do w:step(dt) end
    for i, b in ipairs(bs) do assert.is_true(b.asleep, "box " .. i .. " is awake") end
    local top = bs[#bs].position[2]
    assert.is_true(top > 9.5 - 10 * 0.0025, "the top box sleeps at " .. top)
  end)
end)

-- Tall stacks (S1 VI, after Guendelman, Bridson and Fedkiw): towers of boxes built exactly touching stand at
-- the default settings, sleeping off, dt 1/60, for 60 s: no box more than 1 cm off its column, no turning
-- about the vertical, and the top sunk by less than 10 um (a bound of the slop, 2 mm, plus 1 mm per
-- interface would let each interface creep down to the slop; none creeps: the patch solve leaves no
-- velocity error at rest, and boxes built touching at rounded coordinates touch from the start). Each
-- manifold is solved as a patch (its corners' normal impulses together, its friction at the centroid),
-- and the sweeps' impulses, not shock propagation's, seed the next step.
describe("tall stacks", function()
  local function tower(n, size, alternate)
    local off, sunk, spin = require("fidelity").tower(n, size, alternate, 60)
    assert(off < 0.01, string.format("a box went %.4f m off the column", off))
    assert(math.abs(sunk) < 1e-5, string.format("the top sank %.3g m", sunk))
    assert(spin < 1e-6, "turning about the vertical at " .. spin .. " rad/s")
  end

  it("20 unit cubes stand 60 s", function() tower(20, 1) end)
  it("30 unit cubes stand 60 s", function() tower(30, 1) end)
  it("20 unit cubes of alternating mass 1 : 10 stand 60 s", function() tower(20, 1, true) end)
  it("30 cubes of 0.2 m stand 60 s", function() tower(30, 0.2) end)
end)

-- The contacts a step starts from describe the bodies as they are when it starts: bodies made, destroyed
-- or moved by a script since the last collide stage are collided first, so calling world:collide()
-- before stepping changes nothing
describe("islands", function()
  -- a tumbling heap, alone and beside another heap far away: each island is solved on its own (its own
  -- convergence test, on either thread), so what happens to one does not depend on the other
  it("a heap's motion is the same bits with or without another island in the world", function()
    local function heap(w, x0)
      local bs = {}
      for i = 0, 5 do
        bs[#bs + 1] = w:box { size = { 0.5, 0.5, 0.5 }, position = { x0 + 0.13 * i, 0.3 + 0.55 * i, 0.07 * i },
          angular_velocity = { 0.3 * i, 0, 0.2 }, friction = 0.6 }
      end
      return bs
    end
    local function run(other)
      local w = impetus.world {}
      w.sleeping = false
      w:plane { friction = 0.6 }
      local bs = heap(w, 0)
      if other then
        heap(w, 20)
        for k = 0, 3 do w:sphere { radius = 0.3, position = { -20, 0.3 + 0.7 * k, 0.1 * k }, restitution = 0.5 } end
      end
      for _ = 1, 240 do w:step(dt) end
      local bits = {}
      for _, b in ipairs(bs) do
        for _, key in ipairs { "position", "velocity", "angular_velocity" } do
          for k = 1, 3 do bits[#bits + 1] = string.format("%a", b[key][k]) end
        end
      end
      return table.concat(bits, " ")
    end
    assert.are.equal(run(false), run(true))
  end)

  -- a pyramid of 78 boxes is one island of over 200 manifolds, cut in two halves whose sweeps run at once
  -- (impulse.c, split_islands); a ball knocks its side so the halves and the patches between them all work
  it("solves a large island in two halves with the same bits on one thread and two, and with IMPETUS_SIMD=0", function()
    local script = [[
      local impetus = require "impetus"
      local w = impetus.world {}
      w.sleeping = false
      w:plane { friction = 0.6 }
      for row = 0, 11 do
        for k = 0, 11 - row do
          w:box { size = { 1, 1, 1 }, position = { k - (11 - row) / 2, row + 0.5, 0 }, friction = 0.6 }
        end
      end
      w:sphere { radius = 0.5, position = { -9, 3, 0.2 }, velocity = { 12, 1, 0 }, density = 3000 }
      for _ = 1, 150 do w:step(1 / 60) end
      return require("impetus.state_hash").string(w)
    ]]
    assert.is_true(#helpers.same_elsewhere(script, { "IMPETUS_THREADS=1", "IMPETUS_SIMD=0" }) > 0)
  end)
end)

describe("the step's contacts", function()
  local function ten_boxes(collide_first)
    local w = impetus.world {}
    w.sleeping = false
    w:plane { friction = 0.6 }
    local boxes = {}
    for i = 1, 10 do boxes[i] = w:box { size = { 1, 1, 1 }, position = { 0, i - 0.5, 0 }, friction = 0.6 } end
    if collide_first then w:collide() end
    for _ = 1, 120 do w:step(dt) end
    return w, boxes
  end

  it("are the same with or without world:collide() before the first step", function()
    local _, a = ten_boxes(false)
    local _, b = ten_boxes(true)
    for i = 1, 10 do
      assert.are.same(a[i].position, b[i].position)
      assert.are.same(a[i].velocity, b[i].velocity)
    end
    helpers.near(a[10].position[2], 9.5, 0.002, "the top box (sunk at most the slop)")
  end)

  it("begin events of bodies made touching reach the scripts once", function()
    local w = impetus.world {}
    local floor = w:plane {}
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 } }
    w:step(dt)
    local ev = w:contact_events()
    assert.are.equal(1, #ev.begin)
    w:step(dt)
    assert.are.equal(0, #w:contact_events().begin)
    assert.is_true(ev.begin[1].a == b or ev.begin[1].b == b)
    assert.is_true(ev.begin[1].a == floor or ev.begin[1].b == floor)
  end)

  it("a capsule rolling on the ground keeps its line and its energy", function()
    local w = impetus.world {}
    w.sleeping = false
    w:plane { friction = 0.6 }
    local c = w:capsule { radius = 0.5, length = 1, position = { 0, 0.5, 0 }, friction = 0.6, velocity = { 3, 0, 0 },
      angular_velocity = { 0, 0, -6 }, orientation = quat.from_axis_angle({ 1, 0, 0 }, math.pi / 2) }
    local e0 = c:kinetic_energy()
    for _ = 1, 600 do w:step(dt) end
    local R = quat.to_matrix(c.orientation)
    local yaw = math.atan(R[1][2], R[3][2]) -- its axis (local y) against the z axis it started along
    assert(math.abs(yaw) < 0.01, "it turned by " .. yaw .. " rad")
    helpers.near(c:kinetic_energy(), e0, 1e-3 * e0, "kinetic energy")
    helpers.near(c.position[3], 0, 1e-6, "no drift sideways")
  end)
end)
