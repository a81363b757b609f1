-- articulated rigid bodies (S1, engine/joint.c) as mechanisms: a closed four-bar linkage against its closed
-- form, a long pendulum chain, the energy of a 3-link chain, and joints made and unmade mid-run.
-- (spec/joint_spec.lua checks single joints; this file checks what chains and loops of them do.)
local impetus = require "impetus"
local dt = 1 / 60
local g = 9.81

local mech = require "mechanisms"
local wrap, angle_z = mech.wrap, mech.angle_z
local four_bar, box_chain, energy, four_bar_error, x_angle = mech.four_bar, mech.box_chain, mech.energy,
  mech.four_bar_error, mech.x_angle

describe("articulated bodies (S1)", function()
  it("a closed four-bar linkage of hinges closes to 1e-6 m and moves with one degree of freedom", function()
    local w, m = four_bar(1.2)
    local prev = {}
    local gap, ax, err = 0, 0, 0
    local lo, hi = math.huge, -math.huge
    for s = 1, 2000 do
      local ok, msg = w:step(dt)
      assert(ok, "step " .. s .. ": " .. tostring(msg))
      for _, j in ipairs(m.joints) do gap = math.max(gap, j.gap); ax = math.max(ax, j.axis_error) end
      -- the crank's angle alone fixes the rest (Freudenstein's closed form, as the circle intersection
      -- nearest to the last one: the assembly branch cannot change while the loop stays closed)
      local e, t2 = four_bar_error(m, prev)
      err = math.max(err, e)
      lo, hi = math.min(lo, t2), math.max(hi, t2)
      -- and the mechanism stays in its plane
      for _, b in ipairs { m.crank, m.coupler, m.rocker } do
        assert(math.abs(b.position[3]) < 1e-6, "left the plane: z = " .. b.position[3])
      end
    end
    assert(gap < 1e-6, string.format("loop closure: largest joint gap %.3g m", gap))
    assert(ax < 1e-6, string.format("largest hinge axis error %.3g", ax))
    assert(err < 1e-4, string.format("coupler/rocker off the closed form by %.3g rad", err))
    -- it really moved: released from 1.2 rad under gravity the crank swings through more than a radian
    assert(hi - lo > 1, string.format("crank range only %.3g rad", hi - lo))
  end)

  -- (the motor acts in every stage with what is left of max h, pre-stabilization included: without it in
  -- the position stages the crank ran at 2.88 .. 3.20 rad/s)
  it("a motor on the crank turns the closed four-bar at its speed, and the loop follows the closed form", function()
    -- the motor's target is the crank's spin relative to the world about +z: 3 rad/s, plenty of torque
    local w, m = four_bar(1.2, { speed = 3, max = 2000 })
    local prev, err, gap, turned, last = {}, 0, 0, 0, angle_z(m.crank)
    for s = 1, 300 do
      assert(w:step(dt))
      for _, j in ipairs(m.joints) do gap = math.max(gap, j.gap) end
      local e, t2 = four_bar_error(m, prev)
      err = math.max(err, e)
      turned = turned + wrap(t2 - last)
      last = t2
      -- a motor with torque to spare holds its speed from the first step on, whatever the loop's inertia
      -- does (a lone motored link holds it to 1e-9 rad/s)
      local om = m.crank.angular_velocity[3]
      assert(math.abs(om - 3) < 1e-3, string.format("step %d: crank at %.9g rad/s", s, om))
      assert(math.abs(m.joints[1].speed - om) < 1e-9, "joint.speed " .. m.joints[1].speed)
    end
    -- 5 s at 3 rad/s: the crank turned 15 rad (2.4 turns)
    assert(math.abs(turned - 15) < 5e-3, "crank turned " .. turned .. " rad")
    assert(gap < 1e-6, string.format("loop closure: largest joint gap %.3g m", gap))
    assert(err < 1e-4, string.format("coupler/rocker off the closed form by %.3g rad", err))
  end)

  -- a 3-link box chain released horizontal: link 1 on a free hinge to the world, link 2 on a hinge to link 1
  -- limited to [-0.3, 0.3], link 3 on a ball joint to link 2 whose axis may swing 0.4 rad inside a cone
  local function limited_chain()
    local w = impetus.world {}
    w.sleeping = false
    local l = {}
    for i = 1, 3 do l[i] = w:box { size = { 1, 0.1, 0.1 }, position = { i - 0.5, 10, 0 }, density = 500 } end
    local z = { 0, 0, 1 }
    local js = {
      w:joint { type = "hinge", a = l[1], anchor = { 0, 10, 0 }, axis = z },
      w:joint { type = "hinge", a = l[2], b = l[1], anchor = { 1, 10, 0 }, axis = z, limits = { -0.3, 0.3 } },
      w:joint { type = "point", a = l[3], b = l[2], anchor = { 2, 10, 0 }, axis = { 1, 0, 0 }, limits = { swing = 0.4 } },
    }
    l[3].angular_velocity = { 0, 3, 0 } -- and a twist out of the plane for the cone
    return w, l, js
  end

  it("a hinge limit holds in a falling chain", function()
    local w, l, js = limited_chain()
    local lo, hi, gap = 0, 0, 0
    for _ = 1, 600 do
      assert(w:step(dt))
      -- the hinge angle, from the bodies (not from joint.angle): link 2's turn relative to link 1 about z
      local rel = wrap(angle_z(l[2]) - angle_z(l[1]))
      assert(math.abs(rel - js[2].angle) < 1e-6, string.format("joint.angle %.9g, bodies %.9g", js[2].angle, rel))
      lo, hi = math.min(lo, rel), math.max(hi, rel)
      for _, j in ipairs(js) do gap = math.max(gap, j.gap) end
    end
    assert(lo >= -0.3 - 1e-3 and hi <= 0.3 + 1e-3, string.format("hinge angle left [-0.3, 0.3]: %.5f .. %.5f", lo, hi))
    assert(lo < -0.29 or hi > 0.29, "the swing never reached the limit: " .. lo .. " .. " .. hi)
    assert(gap < 1e-6, "joint gap " .. gap)
  end)

  -- (pre-stabilization once dropped a limit row when a per-joint sweep had brought the prediction back to
  -- the bound, and the global Newton then carried the swing to 0.420 rad in the step after the cone was met)
  it("a swing cone holds in a falling chain", function()
    local w, l = limited_chain()
    local swing = 0
    for _ = 1, 600 do
      assert(w:step(dt))
      swing = math.max(swing, x_angle(l[3], l[2]))
    end
    assert(swing <= 0.4 + 1e-3, string.format("swing cone exceeded: %.5f rad", swing))
    assert(swing > 0.39, "the cone was never reached: " .. swing)
  end)

  -- (with the motor in the velocity stage only the shoulder ran at 1.83 .. 2.11 rad/s)
  it("a motor on an arm's shoulder holds its speed while the forearm swings", function()
    local w = impetus.world {}
    w.sleeping = false
    local l1 = w:box { size = { 1, 0.1, 0.1 }, position = { 0.5, 5, 0 }, density = 500 }
    local l2 = w:box { size = { 1, 0.1, 0.1 }, position = { 1.5, 5, 0 }, density = 500 }
    local shoulder = w:joint { type = "hinge", a = l1, anchor = { 0, 5, 0 }, axis = { 0, 0, 1 }, motor = { speed = 2, max = 5000 } }
    w:joint { type = "hinge", a = l2, b = l1, anchor = { 1, 5, 0 }, axis = { 0, 0, 1 } }
    for s = 1, 300 do
      assert(w:step(dt))
      assert(math.abs(shoulder.speed - 2) < 1e-3, string.format("step %d: shoulder at %.6f rad/s", s, shoulder.speed))
      assert(math.abs(l1.angular_velocity[3] - 2) < 1e-3, "link 1 at " .. l1.angular_velocity[3])
    end
  end)

  -- (when the joints were solved only after the contacts, the box sank 0.27 m through the plate in 20 steps;
  -- the joints' velocity rows in the contact sweeps and in shock propagation hold it)
  it("a box rests on a plate welded to the world as on the ground", function()
    -- a 64 kg box set down on a 6.3 kg plate held by a rigid joint: the plate cannot move, so the box
    -- must stop on it (like on a static body), not sink through it
    local w = impetus.world {}
    w.sleeping = false
    local plate = w:box { size = { 0.3, 0.07, 0.3 }, position = { 0, 2, 0 } }
    local weld = w:joint { type = "rigid", a = plate, anchor = { 0, 2, 0 } }
    local box = w:box { size = { 0.4, 0.4, 0.4 }, position = { 0.05, 2.24, 0.05 } }
    for _ = 1, 120 do assert(w:step(dt)) end
    assert(weld.gap < 1e-6)
    -- at rest on the plate's top face (y = 2.035): the centre 0.2 m above it, less a few mm of slop
    local y = box.position[2]
    assert(y > 2.235 - 0.005 and y < 2.235 + 0.001, string.format("box centre at %.4f m, rest at 2.235", y))
  end)

  it("a heavy box welded on a light one resting on the ground: the base stays on the ground", function()
    -- 8000 kg welded on top of a 1000 kg cube on a static floor, pushed sideways: the weld carries the top's
    -- weight into the base and the base's contacts carry both. Shock propagation must not let the weld push
    -- the base back into the floor after its contacts are done (measured: 5.2 cm deep when it did)
    local w = impetus.world {}
    w.sleeping = false
    w:box { size = { 20, 1, 20 }, position = { 0, -0.5, 0 }, static = true }
    local base = w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 } }
    local top = w:box { size = { 0.5, 0.5, 0.5 }, position = { 0, 1.25, 0 }, density = 64000 }
    local weld = w:joint { type = "rigid", a = top, b = base, anchor = { 0, 1, 0 } }
    top.velocity = { 1, 0, 0 }
    local deepest = 0
    for _ = 1, 240 do
      assert(w:step(dt))
      deepest = math.max(deepest, 0.5 - base.position[2])
      assert(weld.gap < 1e-6 and weld.axis_error < 1e-6, "weld " .. weld.gap)
    end
    -- the top's push rocks the base, which lands back 6-8 mm deep at worst (a landing at 0.25 m/s,
    -- measured), and it rests within the contact slop (2 mm) and a little (measured 1.0 mm)
    assert(deepest < 0.01, string.format("the base sank %.4f m into the floor", deepest))
    assert(0.5 - base.position[2] < 3e-3, string.format("the base rests %.4f m deep", 0.5 - base.position[2]))
    local v = base.velocity
    assert(math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) < 1e-2, "the stack still moves")
  end)

  it("a point-joint pendulum chain keeps its gaps below 1e-6 m for 10,000 steps, and they do not grow", function()
    local w, _, joints = box_chain(5)
    local block = {}
    for s = 1, 10000 do
      w:step(dt)
      local worst = 0
      for _, j in ipairs(joints) do worst = math.max(worst, j.gap) end
      assert(worst < 1e-6, string.format("step %d: joint gap %.3g m", s, worst))
      local k = (s - 1) // 1000 + 1
      block[k] = math.max(block[k] or 0, worst)
    end
    -- the largest gap of each 1000 steps: the late ones are no larger than the early ones (within round-off)
    local early = math.max(block[1], block[2], block[3])
    for k = 4, 10 do
      assert(block[k] <= 10 * early + 1e-9, string.format("gap grew: steps %d..%d %.3g m vs %.3g m early",
        (k - 1) * 1000 + 1, k * 1000, block[k], early))
    end
  end)

  it("a 3-link chain released horizontal never gains energy", function()
    -- 33 s. The scale is M g (chain length), the energy of the swing. A chain whose links touch nothing
    -- takes gravity's impulse in two halves around the position update and turns with its angular
    -- momentum held (kick, drift, kick): its energy never rises above E0 beyond round-off (measured:
    -- never above it at all, at 1/60 and 1/240); S1's post-stabilization dissipates (25-38 % by the end)
    for _, kind in ipairs { "point", "hinge" } do
      for _, hz in ipairs { 60, 240 } do
        local w, links = box_chain(3, kind)
        local M = 0
        for _, b in ipairs(links) do M = M + b.mass end
        local scale = M * g * 3
        local e0 = energy(links)
        local top, late = -math.huge, 0
        local n = 2000 * hz // 60
        for s = 1, n do
          w:step(1 / hz)
          local e = energy(links) - e0
          top = math.max(top, e)
          if s > n - n // 4 then late = late + e / (n // 4) end
        end
        assert(top < 1e-9 * scale, string.format("%s, 1/%d: energy rose by %.3g J = %.3g of M g L", kind, hz, top,
          top / scale))
        assert(late < 0, string.format("%s, 1/%d: the last quarter's mean energy is above E0 by %.3g J", kind, hz, late))
      end
    end
  end)

  it("joints made and unmade from Lua mid-run, and bodies destroyed under joints, never crash", function()
    -- a closed loop of four boxes hanging from two points; cut it, re-close it, destroy a body in it
    local w = impetus.world {}
    w.sleeping = false
    local p = { { 0, 5 }, { 1, 5 }, { 1, 4 }, { 0, 4 } }
    local bs, js = {}, {}
    for i = 1, 4 do
      local q = p[i % 4 + 1]
      bs[i] = w:box { size = { 0.9, 0.1, 0.1 }, position = { (p[i][1] + q[1]) / 2, (p[i][2] + q[2]) / 2, 0 },
        axis = { 0, 0, 1 }, angle = math.atan(q[2] - p[i][2], q[1] - p[i][1]) }
    end
    for i = 1, 4 do js[i] = w:joint { type = "point", a = bs[i], b = bs[(i + 2) % 4 + 1], anchor = { p[i][1], p[i][2], 0 } } end
    local top = w:joint { type = "point", a = bs[1], anchor = { 0.5, 5, 0 } }
    for _ = 1, 60 do assert(w:step(dt)) end
    for _, j in ipairs(js) do assert(j.gap < 1e-6, "loop gap " .. j.gap) end
    -- cut the loop, let it fall open, close it again where the bodies now are
    js[3]:destroy()
    for _ = 1, 30 do assert(w:step(dt)) end
    js[3] = w:joint { type = "hinge", a = bs[3], b = bs[2], anchor = bs[3].position, axis = { 0, 0, 1 } }
    for _ = 1, 30 do assert(w:step(dt)) end
    assert(js[3].gap < 1e-6 and top.gap < 1e-6)
    -- destroy a body inside the loop: its two joints go with it, the others hold
    bs[4]:destroy()
    assert.is_false(js[4]:valid())
    assert.is_false(js[1]:valid())
    for _ = 1, 30 do assert(w:step(dt)) end
    assert(js[2].gap < 1e-6 and js[3].gap < 1e-6 and top.gap < 1e-6)
    -- the attachment pattern of S1's tank: a joint made when two bodies come near and destroyed when they
    -- part, every step, for 300 steps
    local pivot = w:sphere { radius = 0.2, position = { 3, 5, 0 } }
    w:joint { type = "hinge", a = pivot, anchor = { 3, 5, 0 }, axis = { 0, 0, 1 } }
    pivot.angular_velocity = { 0, 0, 4 }
    local ball = w:sphere { radius = 0.05, position = { 3.3, 5, 0 }, density = 100 }
    local grip, made, gap = nil, 0, 0
    for s = 1, 300 do
      if grip and grip:valid() then gap = math.max(gap, grip.gap); grip:destroy(); grip = nil end
      if s % 40 < 20 then
        grip = w:joint { type = "point", a = ball, b = pivot, anchor = ball.position }
        made = made + 1
      end
      assert(w:step(dt))
    end
    assert.equal(159, made) -- steps 1..19, then 20 of every 40
    assert(gap < 1e-6, "attachment gap " .. gap)
    -- many bodies and joints created and destroyed in random order, over a floor
    w = impetus.world {}
    w.sleeping = false
    w:plane { restitution = 0 }
    local rng, live = 12345, {}
    local function rand(n) rng = (rng * 1103515245 + 12345) % 2147483648 return rng % n + 1 end
    for s = 1, 200 do
      local b = w:box { size = { 0.2, 0.2, 0.2 }, position = { 5 + rand(10) * 0.1, 6, rand(10) * 0.1 } }
      local other = #live > 0 and live[rand(#live)] or nil
      if other and not other:valid() then other = nil end
      local hinge = rand(2) == 1
      local j = w:joint { type = hinge and "hinge" or "point", a = b, b = other, anchor = b.position,
        axis = hinge and { 1, 0, 0 } or nil }
      live[#live + 1] = b
      if rand(3) == 1 then j:destroy() end
      if rand(4) == 1 then
        local victim = live[rand(#live)]
        if victim:valid() then victim:destroy() end
      end
      assert(w:step(dt))
    end
    assert(w.body_count > 0)
  end)

  it("the articulated scenes run 600 steps (and a hot reload) without an error, a NaN or a body faster than a fall", function()
    -- what a player sees first: each scene as the host runs it, with its keys pressed along the way. No
    -- body may move faster than a free fall from 8 m (12.5 m/s, above anything dropped in these scenes),
    -- so an energy blow-up fails here even when the NaN guard would catch it later.
    local keys = { ragdoll = { [200] = "d", [300] = "k" }, rope_bridge = { [200] = "m" }, net = { [200] = "b" },
                   tank = { [100] = "w", [300] = "a" } }
    for _, name in ipairs { "ragdoll", "rope_bridge", "net", "tank" } do
      local r = impetus.runner("scenes/" .. name .. ".lua")
      r:start()
      assert(not r.error, r.error)
      local vmax = 0
      for s = 1, 600 do
        local k = keys[name][s]
        if k then r:call("keypressed", r.world, k) end
        -- a hot reload half way: the scene keeps its state (in globals) and goes on
        if s == 400 then assert(r:reload(), name .. ": reload: " .. tostring(r.error)) end
        assert(r:step(), name .. ": " .. tostring(r.error))
        assert(not r.warning, name .. " step " .. s .. ": " .. tostring(r.warning))
        for _, b in ipairs(r.world:bodies()) do
          local v = b.velocity
          vmax = math.max(vmax, math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2))
        end
      end
      assert(vmax < 12.5, string.format("%s: a body reached %.3g m/s", name, vmax))
      -- and its overlay still draws after the reload (a stub of gfx)
      local stub = { size = function() return 1280, 720 end, text = function() end, line = function() end }
      assert(r:call("draw", r.world, stub), name .. ": draw: " .. tostring(r.error))
    end
  end)

  it("a ragdoll with swing cones and hinge limits dropped on the ground gains no energy", function()
    -- one doll of scenes/ragdoll.lua, lying forward 2.8 m up and moving at 1.5 m/s, falls on a dead
    -- floor: gravity and the contacts may only take energy away
    local w, _, parts, M = require("mechanisms").dropped_ragdoll()
    local e0, top = energy(parts), -math.huge
    for _ = 1, 600 do
      assert(w:step(dt))
      top = math.max(top, energy(parts) - e0)
    end
    -- within 1 % of the fall's energy M g h (a step's worth of contact slop)
    assert(top < 0.01 * M * g * 2.8, string.format("the doll gained %.3g J (M g h = %.3g J)", top, M * g * 2.8))
  end)

  it("a ragdoll that lands deep in the floor is pushed out of it within 1.5 s, its joints held", function()
    -- the doll of the energy spec lands at ~7 m/s and its parts sink ~6 cm into the floor in that step
    -- (a step moves them 12 cm). The split impulses push each part out; with the joints' rows on the split
    -- impulses the whole doll moves out together (measured: the deepest contact 2.6 mm, the contact slop,
    -- 90 steps after landing); without, pre-stabilization took most of each part's push back (2.8 cm deep
    -- after 90 steps, 5 s to get out)
    local scene = dofile("scenes/ragdoll.lua")
    local w = impetus.world {}
    w.sleeping = false
    local floor = w:plane { friction = 0.6, restitution = 0 }
    local q = impetus.quat.from_axis_angle({ 0, 0, 1 }, -math.pi / 2 + 0.4)
    local first = #ragdoll_scene.joints + 1 -- the builder appends the doll's joints to the scene's table
    scene.ragdoll(w, { 0, 2.8, 0 }, q, { 1.5, 0, 0 }, { 1, 1, 1 })
    local joints = table.move(ragdoll_scene.joints, first, #ragdoll_scene.joints, 1, {})
    assert(#joints == 9)
    local deepest, landed, gap = 0, nil, 0
    for s = 1, 150 do
      assert(w:step(dt))
      deepest = 0
      for _, c in ipairs(w:contacts()) do
        if c.a == floor or c.b == floor then
          for _, p in ipairs(c.points) do deepest = math.max(deepest, p.depth) end
        end
      end
      for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
      if not landed and deepest > 0.02 then landed = s end
    end
    assert(landed and landed < 60, "the doll never landed deep: " .. tostring(landed))
    assert(deepest < 5e-3, string.format("still %.4f m deep in the floor 1.5 s on", deepest))
    assert(gap < 1e-6, "joint gap " .. gap)
  end)

  it("bad joint definitions raise errors naming the field, and nothing crashes", function()
    local w = impetus.world {}
    local d = w:box { size = { 1, 1, 1 }, position = { 0, 5, 0 } }
    local function err(def) local ok, e = pcall(w.joint, w, def) assert.is_false(ok) return e end
    assert.truthy(err { type = "point", a = d, anchor = { 0 / 0, 0, 0 } }:find("anchor", 1, true))
    assert.truthy(err { type = "hinge", a = d, anchor = { 0, 0, 0 }, axis = { 0, 0, 0 } }:find("axis", 1, true))
    assert.truthy(err { type = "point", a = d, b = d, anchor = { 0, 0, 0 } }:find("'b'", 1, true))
    assert.truthy(err { type = "point", a = "body", anchor = { 0, 0, 0 } }:find("'a'", 1, true))
    assert.truthy(err { type = "point", anchor = { 0, 0, 0 } }:find("'a'", 1, true))
    assert.truthy(err { type = "point", a = d }:find("anchor", 1, true))
    assert.truthy(err { type = "hinge", a = d, anchor = { 0, 0, 0 } }:find("axis", 1, true))
    assert.truthy(err { type = "glue", a = d, anchor = { 0, 0, 0 } }:find("type", 1, true))
    local gone = w:box { size = { 1, 1, 1 }, position = { 0, 8, 0 } }
    gone:destroy()
    assert.truthy(err { type = "point", a = gone, anchor = { 0, 0, 0 } }:find("destroyed", 1, true))
    -- a joint made from inside a step (a force field) is refused and the step undone
    w:particle { position = { 0, 1, 0 } }
    w:field(function() w:joint { type = "point", a = d, anchor = { 0, 0, 0 } } return 0, 0, 0 end)
    local ok, e = pcall(w.step, w, dt)
    assert.is_false(ok)
    assert.truthy(e:find("locked", 1, true))
  end)
end)
