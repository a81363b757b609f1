-- snapshot_spec: world:snapshot() / world:restore(s) give back the whole state (engine/snapshot.c): a
-- restore followed by N steps is, bit for bit, the N steps the world took after the snapshot, in the
-- world that took it (after it went on and changed) and in a fresh world, in both contact modes and
-- with every integrator; files round-trip and refuse other versions and corrupt bytes; and a step whose
-- callback fails leaves the world as it was, caches and warm starts included (issue 20, item 4).
local impetus = require "impetus"
local Runner = require "impetus.runner"
local state_hash = require "impetus.state_hash"
local helpers = require "helpers"

local DT = 1 / 60

-- the state a later step starts from, as exact bits: the project's state hash text (particles, bodies,
-- contact points with their warm-start impulses, multipliers, time, steps) and whether each body sleeps
local function state(world)
  local asleep = {}
  for _, b in ipairs(world:bodies()) do asleep[#asleep + 1] = b.asleep and "z" or "a" end
  return state_hash.string(world) .. " | " .. table.concat(asleep)
end

-- n steps of world, each followed by act(world, k) when given; the state after each
local function run(world, n, act, first)
  local out = {}
  for k = 1, n do
    world:step(DT)
    if act then act(world, (first or 0) + k) end
    out[k] = state(world)
  end
  return out
end

-- the first step at which two runs differ, or nil
local function first_difference(a, b)
  for k = 1, math.max(#a, #b) do
    if a[k] ~= b[k] then return k end
  end
end

-- the game-physics state a later step or query reads, as exact bits: what the sensors hold and the
-- last step's sensor events, the joints' forces and breaks, the attachments' impulses
local joints_of = setmetatable({}, { __mode = "k" }) -- world -> the joints its build made
local function game_state(w)
  local s = { state(w) }
  local ev = w:contact_events()
  s[#s + 1] = string.format("events %d %d %d %d", #ev.begin, #ev["end"], #ev.sensor_begin, #ev.sensor_end)
  for _, j in ipairs(joints_of[w] or {}) do
    if j:valid() then
      local f, t = j.force, j.torque
      s[#s + 1] = string.format("%a %a %a %a %a %a", f[1], f[2], f[3], t[1], t[2], t[3])
    end
  end
  for _, b in ipairs(w:broken_joints()) do s[#s + 1] = string.format("broke %s %a", b.type, b.force[2]) end
  for _, p in ipairs(w:particles()) do
    local a = p:attachment()
    if a then s[#s + 1] = string.format("att %a %a %a", a.impulse[1], a.impulse[2], a.impulse[3]) end
  end
  return table.concat(s, " | ")
end

-- a scene's world after its setup (its update is not run: the spec steps the world itself)
local function scene_world(path)
  local r = Runner.new(path)
  r:start()
  assert(r.world, r.error)
  return r.world
end

-- N steps, snapshot, M steps recorded; then the snapshot restored into the same world and into a fresh
-- one (made by `fresh`, which must give the same callbacks their ids), each stepping M times again
local function check_rewind(world, n, m, fresh, act)
  run(world, n, act)
  local s = world:snapshot()
  local want = run(world, m, act, n)
  world:restore(s)
  assert.are.equal(s.time, world.time)
  local again = run(world, m, act, n)
  assert.is_nil(first_difference(want, again), "the world that took the snapshot differs after restoring it")
  local other = fresh and fresh() or impetus.world()
  other:restore(s)
  local there = run(other, m, act, n)
  assert.is_nil(first_difference(want, there), "a fresh world restored from the snapshot differs")
  return s, want
end

describe("world:snapshot and world:restore", function()
  it("rewind the 1000-box pile bit for bit (impulse mode, sleeping, warm starts), in the world and in a fresh one", function()
    local s = check_rewind(scene_world("scenes/bench/pile_1000.lua"), 90, 90)
    assert.is_true(s.bytes > 1000 * 13 * 8) -- at least the bodies' states
  end)

  it("rewind the pile across bodies falling asleep (sleep timers are state)", function()
    local world = scene_world("scenes/bench/pile_1000.lua")
    world.sleeping = true
    run(world, 360) -- (its columns are pushed out of their landing's overlaps until about step 400, then sleep)
    local s = world:snapshot()
    local asleep_then = 0
    for _, b in ipairs(world:bodies()) do if b.asleep then asleep_then = asleep_then + 1 end end
    local want = run(world, 90)
    local asleep_after = 0
    for _, b in ipairs(world:bodies()) do if b.asleep then asleep_after = asleep_after + 1 end end
    assert.is_true(asleep_after > asleep_then, "bodies fall asleep in the steps compared")
    local other = impetus.world()
    other:restore(s)
    assert.is_nil(first_difference(want, run(other, 90)))
  end)

  it("rewind a ragdoll on the stairs (joints with limits and swing cones)", function()
    check_rewind(scene_world("scenes/ragdoll.lua"), 60, 120)
  end)

  it("rewind an implicit cloth on a sphere (the multigrid hierarchy and the CG warm start are state)", function()
    local world = scene_world("scenes/drape.lua")
    assert.are.equal("implicit", world.integrator)
    check_rewind(world, 30, 60)
  end)

  it("rewind the exact-contact stack with friction under every integrator (qp mode: the friction warm start, the adaptive step)", function()
    for _, integrator in ipairs { "adaptive", "rk4", "midpoint", "euler" } do
      local world = scene_world("scenes/bench/qp_stack10.lua")
      world.integrator = integrator
      assert.are.equal("qp", world.contact)
      check_rewind(world, 30, 60)
    end
    -- the implicit integrator's bodies (backward Euler, its Jacobian through the LCP) on a short stack:
    -- a box sliding to rest on another
    local function stack()
      local w = impetus.world { integrator = "implicit" }
      w.contact, w.friction = "qp", 0.5
      w:body { static = true, shapes = { { type = "plane" } } }
      w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 }, mass = 1 }
      w:box { size = { 0.5, 0.5, 0.5 }, position = { 0, 1.25, 0 }, velocity = { 0.5, 0, 0 }, mass = 1 }
      return w
    end
    local world = stack()
    check_rewind(world, 10, 20, stack)
    local slider = world:bodies()[3]
    assert.is_true(slider.position[1] > 0.01, "the box slides") -- (the steps compared moved it)
  end)

  it("rewind the tank while the script makes and destroys joints every step", function()
    local world = scene_world("scenes/tank.lua")
    local bodies = world:bodies()
    local made = {} -- the joints the script made, oldest first: a copy goes with the snapshot
    local function act(w, k)
      if k % 3 == 0 then
        local a, b = bodies[1 + k % #bodies], bodies[1 + (k * 7) % #bodies]
        if a ~= b and not a.static and not b.static then
          made[#made + 1] = w:joint { type = "point", a = a, b = b, anchor = a.position }
        end
      end
      if k % 5 == 0 and #made > 0 then
        table.remove(made, 1):destroy()
      end
    end
    run(world, 30, act)
    local s, kept = world:snapshot(), { table.unpack(made) }
    local want = run(world, 60, act, 30)
    world:restore(s)
    made = { table.unpack(kept) }
    for _, j in ipairs(made) do assert.is_true(j:valid(), "a joint made before the snapshot is valid again") end
    assert.is_nil(first_difference(want, run(world, 60, act, 30)))
  end)

  it("rewind particles, springs, colliders, constraints and a curve particle under every explicit integrator", function()
    local function build(integrator)
      local w = impetus.world { integrator = integrator }
      w:plane { restitution = 0.3, friction = 0.4 }
      w:sphere { static = true, radius = 0.5, position = { 1, 0.5, 0 } }
      local prev
      for i = 1, 8 do
        local p = w:particle { position = { i * 0.25, 1 + 0.1 * i, 0.05 * i }, velocity = { 0.3, 0, -0.2 } }
        if prev then w:spring(prev, p, { ks = 200, kd = 0.5 }) end
        prev = p
      end
      local a = w:particle { position = { -1, 2, 0 } }
      local b = w:particle { position = { -1, 1.5, 0.2 } }
      w:pin(a, { -1, 2, 0 })
      w:rod(a, b)
      w:curve_particle { curve = function(u) return { math.cos(u), 1 + math.sin(u), -1 } end, u = 0.3, udot = 2 }
      w:field(function(x, y, z, vx, vy, vz) return -0.1 * vx, 0, -0.1 * vz end)
      return w
    end
    for _, integrator in ipairs { "euler", "midpoint", "rk4", "adaptive" } do
      check_rewind(build(integrator), 20, 40, function() return build(integrator) end)
    end
  end)

  it("keep handles valid or stale exactly as they were, and a destroyed field comes back with its function", function()
    local w = impetus.world()
    local a = w:box { size = { 1, 1, 1 }, position = { 0, 5, 0 } }
    local calls = 0
    local f = w:field(function() calls = calls + 1 return 0, 1, 0 end)
    w:particle { position = { 0, 0, 0 } }
    local s = w:snapshot()
    a:destroy()
    f:destroy()
    local b = w:box { size = { 1, 1, 1 } } -- reuses a's slot with the next generation
    assert.is_false(a:valid())
    w:restore(s)
    assert.is_true(a:valid())
    assert.is_false(b:valid(), "a body made after the snapshot is stale")
    assert.is_true(f:valid())
    w:step(DT)
    assert.is_true(calls > 0, "the restored field calls its function")
    a:destroy() -- as after the snapshot: the next box takes the slot and generation b had
    local c = w:box { size = { 1, 1, 1 } }
    assert.are.equal(b, c, "the same slot and generation: the same handle")
    assert.is_true(b:valid())
  end)

  it("hold a field's function while a snapshot keeps it, and let it go with the last holder", function()
    local w = impetus.world()
    w:particle { position = { 0, 0, 0 } }
    local seen = setmetatable({}, { __mode = "k" }) -- the function, without holding it
    local field
    do
      local fn = function() return 0, 0, 0 end
      seen[fn] = true
      field = w:field(fn)
    end
    local function alive()
      collectgarbage()
      collectgarbage()
      return next(seen) ~= nil
    end
    local s = w:snapshot()
    field:destroy()
    assert.is_true(alive(), "the snapshot holds the function of a field destroyed after it")
    w:restore(s)
    s:release()
    assert.is_true(alive(), "the restored field holds it")
    assert.is_true(field:valid())
    w:step(DT)
    field:destroy()
    assert.is_false(alive(), "nothing holds it any more")
  end)

  it("puts handle.data back in place: the same table, holding what it held", function()
    local w = impetus.world()
    local a = w:box { size = { 1, 1, 1 } }
    a.data.score = 1
    local data = a.data
    local s = w:snapshot()
    a.data.score = 2
    a.data.extra = true
    w:restore(s)
    assert.are.equal(data, a.data)
    assert.are.same({ score = 1 }, a.data)
  end)

  -- as check_rewind, reading game_state
  local function check_game_rewind(build, n, m, act)
    local world = build()
    for k = 1, n do world:step(DT) if act then act(world, k) end end
    local s = world:snapshot()
    local function steps(w)
      local out = {}
      for k = 1, m do
        w:step(DT)
        if act then act(w, n + k) end
        out[k] = game_state(w)
      end
      return out
    end
    local at = game_state(world)
    local want = steps(world)
    world:restore(s)
    assert.are.equal(at, game_state(world), "the world that took the snapshot, restored")
    assert.is_nil(first_difference(want, steps(world)), "the world that took the snapshot differs after restoring it")
    local other = build()
    other:restore(s)
    assert.are.equal(at, game_state(other), "a fresh world, restored")
    assert.is_nil(first_difference(want, steps(other)), "a fresh world restored from the snapshot differs")
    return want
  end

  it("rewind sensors, a pre_solve one-way platform, a joint that breaks later, rope, spring and a driven ball joint", function()
    local broke_at
    local function build()
      local w = impetus.world {}
      w:box { static = true, position = { 0, -0.5, 0 }, size = { 40, 1, 40 } }
      -- a ball through a sensor: inside over steps 3 .. 17, across the snapshot
      w:box { static = true, position = { 1, 1, 0 }, size = { 1, 2, 2 }, sensor = true }
      w:sphere { radius = 0.25, position = { 0, 1, 0 }, velocity = { 6, 0, 0 }, gravity_scale = 0 }
      -- a one-way platform: a ball thrown up passes through and lands on it
      local platform = w:box { static = true, position = { -4, 2, 0 }, size = { 2, 0.2, 2 }, pre_solve = true, restitution = 0 }
      w:sphere { radius = 0.25, mass = 1, position = { -4, 0.25, 0 }, velocity = { 0, 8, 0 } }
      w.pre_solve = function(world, c)
        local body = c.a == platform and c.b or c.a
        if body.velocity[2] > 0.05 or body.position[2] - 0.25 < 2.05 then c.enabled = false end
      end
      -- a pendulum released level: its pull passes 2 m g below the horizontal, after the snapshot
      local bob = w:sphere { radius = 0.1, mass = 1, position = { 8, 5, 0 } }
      local joints = {}
      joints_of[w] = joints
      joints[1] = w:joint { type = "point", a = bob, anchor = { 7, 5, 0 }, break_force = 2 * 9.81 }
      -- a rope and a spring between bodies, and a ball joint driven by its motor
      local a = w:box { size = { 0.3, 0.3, 0.3 }, position = { 0, 6, 5 }, gravity_scale = 0.5 }
      local b = w:box { size = { 0.3, 0.3, 0.3 }, position = { 1.5, 6, 5 } }
      joints[2] = w:joint { type = "rope", a = a, anchor = { 0, 6, 5 }, anchor_b = { 0, 7, 5 }, length = 1.2 }
      joints[3] = w:joint { type = "spring", a = a, b = b, anchor = { 0, 6, 5 }, anchor_b = { 1.5, 6, 5 }, stiffness = 80, damping = 2, rest_length = 1 }
      local top = w:box { size = { 0.6, 0.1, 0.2 }, position = { 6, 3, -5 } }
      joints[4] = w:joint { type = "point", a = top, anchor = { 6, 3.3, -5 }, motor = { velocity = { 0, 2, 0 }, max = 3 } }
      return w
    end
    local want = check_game_rewind(build, 12, 100, function(w, k)
      if not broke_at and #w:broken_joints() > 0 then broke_at = k end
    end)
    assert.is_truthy(broke_at, "the pendulum's joint broke")
    assert.is_true(broke_at > 12, "it broke after the snapshot (step " .. tostring(broke_at) .. ")")
    assert.are.equal(100, #want)
    -- a snapshot taken just after the break reports it, restored anywhere
    check_game_rewind(build, broke_at, 20)
  end)

  it("rewind particles colliding with each other and with bodies, and a self-colliding cloth sewn to a moving body", function()
    local function build()
      local w = impetus.world {}
      w.particle_collisions = true
      w:plane { restitution = 0.2, friction = 0.5 }
      local crate = w:box { size = { 0.5, 0.5, 0.5 }, position = { 0, 0.25, 0 }, mass = 2 }
      for k = 0, 11 do -- grains poured on the crate and on each other
        w:particle { position = { 0.05 * (k % 3) - 0.05, 0.7 + 0.08 * k, 0.03 * (k % 2) }, radius = 0.035, mass = 0.02,
          restitution = 0.3, friction = 0.6 }
      end
      local swing = w:box { size = { 0.3, 0.3, 0.3 }, position = { 2, 2, 0 }, mass = 3, velocity = { 0, 0, 1.5 } }
      joints_of[w] = { w:joint { type = "point", a = swing, anchor = { 2, 2.6, 0 } } }
      local cl = w:cloth { rows = 6, cols = 6, size = 0.6, position = { 2.5, 1.9, 0 }, normal = { 0, 1, 0 }, mass = 0.1,
        radius = 0.015, restitution = 0.1, friction = 0.4 }
      cl.self_collision = true
      local corner = cl:particle(1, 1)
      corner:attach(swing, corner.position)
      return w
    end
    check_game_rewind(build, 30, 90)
  end)

  it("rewind a world whose constraints outgrew the solver's arrays since its last step (fuzz: ASan, heap overflow)", function()
    -- 39 rods solved once (row arrays of 64), then 40 more: the snapshot holds the rows the last solve
    -- had, and a failing field's undo in the next step keeps no more than those either
    local function build()
      local w = impetus.world()
      local ps = {}
      for i = 1, 80 do ps[i] = w:particle { position = { 0.1 * i, 1 + 0.01 * (i % 7), 0 } } end
      for i = 1, 39 do w:rod(ps[i], ps[i + 1]) end
      w:pin(ps[1], ps[1].position)
      w:step(DT)
      for i = 41, 79 do w:rod(ps[i], ps[i + 1]) end
      return w
    end
    check_rewind(build(), 0, 20, build)
  end)

  it("refuses bad arguments, a released snapshot and a restore while the world steps", function()
    local w = impetus.world()
    assert.has_error(function() w:restore({}) end)
    local s = w:snapshot()
    s:release()
    assert.has_error(function() w:restore(s) end, "world:restore: this snapshot was released")
    local s2 = w:snapshot()
    w:particle { position = { 0, 0, 0 } }
    w:field(function() w:restore(s2) return 0, 0, 0 end)
    local ok, err = pcall(w.step, w, DT)
    assert.is_false(ok)
    assert.truthy(err:find("world:restore: the world is locked", 1, true), err)
  end)
end)

describe("snapshot files", function()
  local dir = helpers.tmpdir()

  it("round-trip: a loaded snapshot steps as the original did", function()
    local world = scene_world("scenes/bench/pile_1000.lua")
    run(world, 60)
    local s = world:snapshot()
    local path = dir .. "/pile.snap"
    s:save(path)
    local want = run(world, 60)
    local loaded = impetus.load_snapshot(path)
    assert.are.equal(s.time, loaded.time)
    assert.are.equal(s.steps, loaded.steps)
    local other = impetus.world()
    other:restore(loaded)
    assert.is_nil(first_difference(want, run(other, 60)))
  end)

  it("give script functions back from the world they are restored into, by id", function()
    local function build()
      local w = impetus.world()
      w:particle { position = { 0, 1, 0 } }
      w:field(function() return 1, 0, 0 end)
      return w
    end
    local w = build()
    run(w, 10)
    local path = dir .. "/field.snap"
    w:snapshot():save(path)
    local want = run(w, 10)
    local other = build()
    other:restore(impetus.load_snapshot(path))
    assert.is_nil(first_difference(want, run(other, 10)))
    -- a world without the field cannot take it: refused, the world unchanged
    local bare = impetus.world()
    bare:box { size = { 1, 1, 1 } }
    local before = state(bare)
    local ok, err = pcall(bare.restore, bare, impetus.load_snapshot(path))
    assert.is_false(ok)
    assert.truthy(err:find("force field #0 (a script function) has no counterpart in this world", 1, true), err)
    assert.are.equal(before, state(bare))
  end)

  -- the file's header: 8 bytes of magic, then the format version (4 bytes), the layout signature, the
  -- time, the step count, the length and the checksum of the state that follows
  it("refuse another format version, a corrupt or cut file and a file that is no snapshot, by name", function()
    local w = impetus.world()
    w:box { size = { 1, 1, 1 }, position = { 0, 3, 0 } }
    run(w, 5)
    local good = dir .. "/good.snap"
    w:snapshot():save(good)
    local function refused(edit, expect)
      local path = dir .. "/bad.snap"
      local f = assert(io.open(good, "rb"))
      local bytes = f:read("a")
      f:close()
      f = assert(io.open(path, "wb"))
      f:write(edit(bytes))
      f:close()
      local ok, err = pcall(impetus.load_snapshot, path)
      assert.is_false(ok)
      assert.truthy(err:find("impetus.load_snapshot: " .. path .. ": " .. expect, 1, true), err)
    end
    refused(function(b) return b:sub(1, 8) .. string.pack("<I4", 99) .. b:sub(13) end,
      "written in snapshot format version 99; this build reads version 2")
    refused(function(b) -- one bit of the state flipped, near the end
      local k = #b - 20
      return b:sub(1, k - 1) .. string.char(b:byte(k) ~ 1) .. b:sub(k + 1)
    end, "corrupt: its checksum does not match")
    refused(function(b) return b:sub(1, #b - 100) end, "corrupt:")
    refused(function() return "hello, world" end, "not an impetus snapshot")
    local ok, err = pcall(impetus.load_snapshot, dir .. "/missing.snap")
    assert.is_false(ok)
    assert.truthy(err:find("cannot open", 1, true), err)
    -- the good file still loads
    assert.are.equal(5, impetus.load_snapshot(good).steps)
  end)
end)

describe("a failing callback leaves the world as it was", function()
  -- the state as exact bits, particles and multipliers (the pending reliability cases' reading)
  local function particle_state(w)
    local s = {}
    for _, p in ipairs(w:particles()) do
      for _, key in ipairs { "position", "velocity" } do
        for k = 1, 3 do s[#s + 1] = string.format("%a", p[key][k]) end
      end
    end
    for _, c in ipairs(w:constraints()) do
      for _, l in ipairs(type(c.lambda) == "table" and c.lambda or { c.lambda }) do s[#s + 1] = string.format("%a", l) end
    end
    return table.concat(s, " ")
  end

  it("a force field that steps its own world, over a cloth resting on a plane (fuzz: seed 8, 82 operations shrunk to 4)", function()
    -- the resting particles are put exactly on the plane as a step starts: the failed step's undo must
    -- put back the values the script left, not those
    local w = impetus.world()
    w:plane { restitution = 0.0379338140485177, friction = 0.33490488647718242 }
    w:cloth { rows = 3, size = 0.92365151489886044, position = { -0.58096975320686184, -1.8957876874311206, 0.66230305037760129 },
      pin = "none", mass = 0.62758415359919861, stretch = 1572.5220186806548, shear = 57.676967083443955,
      bend = 0.0074799047914974126, radius = 0.034169016285113832 }
    w:field(function() w:step(1 / 60) return 0, 0, 0 end)
    for i = 1, 12 do
      local before = particle_state(w)
      local ok, err = pcall(w.step, w, 1e-3)
      assert.is_false(ok)
      assert.truthy(err:find("a script callback failed", 1, true), err)
      assert.are.equal(before, particle_state(w), "failed step " .. i .. " changed the world")
    end
  end)

  it("a pinned particle's multipliers and the 60 steps after (fuzz: seed 73, 60 operations shrunk to 7)", function()
    -- the failed step must restore the constraint solver's warm start (the pin's lambda) with the rest;
    -- then 60 steps run as in a world whose field never failed
    local function make(fail_at)
      local w = impetus.world()
      local calls = 0
      w:field(function()
        calls = calls + 1
        if calls == fail_at then error("the field fails once") end
        return 0, 0, 0
      end)
      local p = w:particle { position = { 0.74605256915165885, -0.88130961026789567, -0.87452198379099721 },
        velocity = { 0.53388400979934403, -2.1921065436467213, -2.152903813705306 }, radius = 0.29467019065841316 }
      w:pin(p, { 2.5754908642361718, -0.82879915969038098, -0.2204053605354277 })
      w:curve_particle { curve = function(u) return { math.cos(u), math.sin(u), 0 } end, u = -0.15638378008830855,
        udot = 1.5207104336714541 }
      return w
    end
    local failing, never = make(3), make(-1)
    assert.is_false(pcall(failing.step, failing, 1 / 60))
    assert.are.equal(particle_state(never), particle_state(failing), "the failed step changed the world (the pin's lambda)")
    for i = 1, 60 do
      failing:step(1 / 60)
      never:step(1 / 60)
      assert.are.equal(particle_state(never), particle_state(failing), "step " .. i .. " after the failure")
    end
  end)

  -- a world that fails once, at a given call of its field, and its twin that never fails: after the
  -- failure the two must be the same world, and so must the 60 steps after
  local function failing_twin(build, fail_at, steps_before)
    local function make(fail)
      local calls, failed = 0, false
      local w = build(function()
        calls = calls + 1
        if fail and calls == fail_at then failed = true error("the field fails once") end
        return 0, 0, 0
      end)
      return w, function() return failed end
    end
    local failing, has_failed = make(true)
    local never = make(false)
    for _ = 1, steps_before do
      never:step(DT)
      local ok = pcall(failing.step, failing, DT)
      if not ok then break end
    end
    assert.is_true(has_failed(), "the field failed")
    -- the twin took one more step than the failing world (the failed one): compare with a third
    local twin = make(false)
    for _ = 1, failing.steps do twin:step(DT) end
    assert.are.equal(state(twin), state(failing), "the failed step left the world changed")
    assert.is_nil(first_difference(run(twin, 60), run(failing, 60)), "the steps after the failure differ")
  end

  it("with the adaptive integrator: its step size is put back", function()
    failing_twin(function(field)
      local w = impetus.world { integrator = "adaptive" }
      w:plane {}
      local prev
      for i = 1, 6 do
        local p = w:particle { position = { 0.3 * i, 0.5 + 0.2 * i, 0 } }
        if prev then w:spring(prev, p, { ks = 5000, kd = 1 }) end
        prev = p
      end
      w:field(field)
      return w
    end, 200, 100)
  end)

  it("a step the adaptive integrator gives up: the world as it was, its step size too, and the 60 steps after", function()
    local function make()
      local w = impetus.world { integrator = "adaptive" }
      w:plane {}
      local prev
      for i = 1, 6 do
        local p = w:particle { position = { 0.3 * i, 0.5 + 0.2 * i, 0 } }
        if prev then w:spring(prev, p, { ks = 1e5, kd = 1 }) end
        prev = p
      end
      return w
    end
    local tried, never = make(), make()
    run(tried, 20)
    run(never, 20)
    -- a step of 1 s: the stiff springs reject the first attempts, their step size shrinks, and the
    -- attempts left cannot reach the end; the world keeps the step size it had
    local ok, err = tried:step(1)
    assert.is_false(ok)
    assert.truthy(err:find("the step was not taken", 1, true), err)
    assert.are.equal(state(never), state(tried))
    assert.is_nil(first_difference(run(never, 60), run(tried, 60)), "the steps after the step given up differ")
  end)

  it("with the implicit integrator over a cloth lying on a plane", function()
    failing_twin(function(field)
      local w = impetus.world { integrator = "implicit" }
      w:plane { friction = 0.5 }
      w:cloth { rows = 6, size = 1, position = { 0, 0.02, 0 }, pin = "none" }
      w:field(field)
      return w
    end, 30, 60)
  end)

  -- as failing_twin, for a callback given by build(hook) that calls hook(); read: the state compared;
  -- act(w) before each step (the same in every twin)
  local function failing_twin_hook(build, fail_at, steps_before, read, act)
    local function make(fail)
      local calls, failed = 0, false
      local w = build(function()
        calls = calls + 1
        if fail and calls == fail_at then failed = true error("the callback fails once") end
      end)
      return w, function() return failed end
    end
    local function step(w) if act then act(w) end return pcall(w.step, w, DT) end
    local failing, has_failed = make(true)
    for _ = 1, steps_before do
      if act then act(failing) end
      local before = read(failing)
      if not pcall(failing.step, failing, DT) then
        assert.are.equal(before, read(failing), "the failed step left the world changed")
        break
      end
    end
    assert.is_true(has_failed(), "the callback failed")
    local twin = make(false)
    for _ = 1, failing.steps do step(twin) end
    if act then act(twin) end -- as the script left the failing world before its failed step
    assert.are.equal(read(twin), read(failing), "the failed step left the world unlike its twin's")
    for i = 1, 60 do
      step(twin)
      step(failing)
      assert.are.equal(read(twin), read(failing), "step " .. i .. " after the failure")
    end
  end

  -- a pre_solve one-way platform beside a sensor, a breakable joint and a box the script may move
  local moved_of = setmetatable({}, { __mode = "k" })
  local function presolve_world(hook, in_field)
    local w = impetus.world {}
    w:box { static = true, position = { 0, -0.5, 0 }, size = { 40, 1, 40 } }
    w:box { static = true, position = { 1, 1, 0 }, size = { 1, 2, 2 }, sensor = true }
    w:sphere { radius = 0.25, position = { 0, 1, 0 }, velocity = { 3, 0, 0 }, gravity_scale = 0 }
    local platform = w:box { static = true, position = { -4, 2, 0 }, size = { 2, 0.2, 2 }, pre_solve = true, restitution = 0 }
    w:sphere { radius = 0.25, mass = 1, position = { -4, 0.25, 0 }, velocity = { 0, 8, 0 } }
    moved_of[w] = w:box { size = { 0.4, 0.4, 0.4 }, position = { -3.5, 0.2, 0 }, pre_solve = true }
    local bob = w:sphere { radius = 0.1, mass = 1, position = { 8, 5, 0 } }
    joints_of[w] = { w:joint { type = "point", a = bob, anchor = { 7, 5, 0 }, break_force = 2 * 9.81 } }
    if in_field then
      w:particle { position = { 0, 3, 2 } }
      w:field(function() hook() return 0, 0, 0 end)
    end
    w.pre_solve = function(world, c)
      if not in_field then hook() end
      local body = c.a == platform and c.b or c.a
      if body.velocity[2] > 0.05 or body.position[2] - 0.25 < 2.05 then c.enabled = false end
    end
    return w
  end

  it("a failing pre_solve callback: the world as it was, events and sensors included, and the 60 steps after", function()
    failing_twin_hook(presolve_world, 25, 40, game_state)
  end)

  it("a failing pre_solve callback after the script moved a body (the contacts collided again first)", function()
    -- moving a body makes the contacts stale: the step collides before calling pre_solve
    local function act(w)
      moved_of[w].position = { -3.5 + 0.001 * w.steps, 0.2, 0 }
    end
    failing_twin_hook(presolve_world, 25, 40, game_state, act)
    -- a field failing in such a step: the contacts collided before pre_solve go back too
    failing_twin_hook(function(hook) return presolve_world(hook, true) end, 4 * 20 + 3, 40, game_state, act)
  end)

  -- a cloth lying on a dynamic box, its corner sewn to a swinging body, grains on the box: the particle
  -- stage moves attached particles, snaps resting ones onto the bodies, and the exchange pushes the body
  local function sewn_world(integrator, hook, constraint)
    local w = impetus.world { integrator = integrator }
    w.particle_collisions = true
    w:plane { restitution = 0.2, friction = 0.5 }
    w:box { size = { 1.2, 0.4, 1.2 }, position = { 0, 0.2, 0 }, mass = 5 }
    local swing = w:box { size = { 0.3, 0.3, 0.3 }, position = { 1, 1.5, 0 }, mass = 3, velocity = { 0, 0, 1 } }
    w:joint { type = "point", a = swing, anchor = { 1, 2.1, 0 } }
    local cl = w:cloth { rows = 5, cols = 5, size = 0.8, position = { 0.2, 0.42, 0 }, normal = { 0, 1, 0 }, mass = 0.1,
      radius = 0.015, restitution = 0.1, friction = 0.4, pin = "none" }
    local corner = cl:particle(5, 5)
    corner:attach(swing, corner.position)
    for k = 0, 5 do
      w:particle { position = { -0.4 + 0.09 * k, 0.45, -0.4 }, radius = 0.03, mass = 0.02, restitution = 0.2 }
    end
    if constraint then -- a script constraint over two grains, which calls hook after the collisions
      local ps = w:particles()
      local a, b = ps[#ps - 1], ps[#ps]
      w:constraint { particles = { a, b }, C = function(x1, x2)
        hook()
        local d = { x1[1] - x2[1], x1[2] - x2[2], x1[3] - x2[3] }
        return math.sqrt(d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) - 0.09
      end }
    else
      w:field(function() hook() return 0, 0, 0 end)
    end
    return w
  end

  it("a failing field in a step where attachments and particle-body contacts change bodies (implicit)", function()
    failing_twin_hook(function(hook) return sewn_world("implicit", hook) end, 40 * 1 + 7, 60, game_state)
  end)

  -- the whole state as the snapshot's bytes: every cache a later step reads (warm starts, patterns)
  local function snapshot_bytes(w)
    local s = w:snapshot()
    local bytes = s:encode()
    s:release()
    return bytes
  end

  -- a step of w (after arm(), when given) fails, and leaves the snapshot's bytes as they were
  local function failed_step_keeps(w, dt, what, arm)
    local before = snapshot_bytes(w)
    if arm then arm() end
    assert.is_false(pcall(w.step, w, dt))
    assert.are.equal(before, snapshot_bytes(w), "the failed step left " .. what)
  end

  it("the implicit integrator's pattern made in a failed step (a particle added before it) is not left behind", function()
    local w = impetus.world { integrator = "implicit" }
    w:cloth { rows = 4, cols = 4, size = 1, position = { 0, 2, 0 } }
    local fail = false
    w:field(function() if fail then error("the field fails") end return 0, 0, 0 end)
    for _ = 1, 3 do w:step(DT) end
    w:particle { position = { 5, 5, 5 } }
    failed_step_keeps(w, DT, "its pattern in the world", function() fail = true end)
  end)

  it("a failed first implicit step leaves no integrator state and its hairs' elements in their order (fuzz: seed 66, shrunk to 8)", function()
    -- building the pattern sorts a cloth's or hair's elements into the parallel groups of its matrix
    local w = impetus.world { integrator = "implicit", gravity = { -14.2, -8.03, 13.1 }, drag = 0.43 }
    local calls = 0
    w:field(function()
      calls = calls + 1
      if calls == 15 then error("the field fails at its last call of the step") end
      return 0, 0, 0
    end)
    w:hair { direction = { 0.028, 0.588, 0.708 }, length = 0.689, segments = 7, mass = 0.0625, stretch = 12.45,
      bend = 0.00038, radius = 0.0011, root_motion = "fixed", clamped = true }
    w:particle { mass = 4.2 }
    w:hair { root = { 2.06, -1.97, 2.31 }, length = 0.117, segments = 7, mass = 0.073, stretch = 12.06, damping = 0.049,
      radius = 0.0061 }
    failed_step_keeps(w, 0.05, "its pattern's traces in the world")
  end)

  it("a failed first step beside a body leaves no particle-body stage behind (fuzz: seed 95, shrunk to 5)", function()
    local w = impetus.world { integrator = "implicit" }
    w:field(function() error("the field fails") end)
    w:sphere { radius = 0.5, position = { 0, 0.4, 0 } }
    w:cloth { rows = 4, cols = 4, size = 1, position = { 0, 0, 0 }, normal = { 0, 1, 0 } }
    failed_step_keeps(w, DT, "the particle-body stage's state")
  end)

  it("a failed step's constraint assembly (a rod added since the last step) is not left behind (fuzz: seed 276, shrunk to 7)", function()
    local w = impetus.world()
    local armed, calls = false, 0
    local on_curve = w:curve_particle { curve = function(u)
      if armed then
        calls = calls + 1
        if calls == 3 then error("the curve fails at its third call of the step, after the assembly") end
      end
      return { math.cos(u), math.sin(u), 0 }, { -math.sin(u), math.cos(u), 0 }, { -math.cos(u), -math.sin(u), 0 }
    end, u = 1.9, udot = -0.95, mass = 0.95 }
    local p = w:particle { position = { 0.02, -2, -1.1 }, mass = 4 }
    w:step(DT)
    w:rod(p, on_curve)
    failed_step_keeps(w, DT, "its rows in the world", function() armed = true end)
  end)

  it("a failing field, and a failing script constraint after the attachments' exchange (rk4)", function()
    failing_twin_hook(function(hook) return sewn_world("rk4", hook) end, 4 * 30 + 2, 60, game_state)
    failing_twin_hook(function(hook) return sewn_world("rk4", hook, true) end, 200, 60, game_state)
  end)

  it("with bodies in contact beside the particles (their warm starts untouched)", function()
    failing_twin(function(field)
      local w = impetus.world()
      w:plane { friction = 0.5 }
      for i = 0, 4 do w:box { size = { 1, 1, 1 }, position = { 0, 0.5 + i, 0 } } end
      w:particle { position = { 2, 0.05, 0 } }
      w:field(field)
      return w
    end, 40, 60)
  end)
end)
