-- The Lua API of worlds and particles: creation, properties, and the errors a script gets for
-- wrong arguments, stale handles and changes from inside a step.
local impetus = require "impetus"

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

describe("world", function()
  it("has the documented defaults and settable properties", function()
    local w = impetus.world()
    assert.are.same({ 0, -9.81, 0 }, w.gravity)
    assert.are.equal("rk4", w.integrator)
    assert.are.equal(0, w.time)
    w.gravity = { 0, -1.62, 0 }
    w.integrator = "midpoint"
    w.drag = 0.5
    assert.are.same({ 0, -1.62, 0 }, w.gravity)
    assert.are.equal("midpoint", w.integrator)
    assert.are.equal(0.5, w.drag)
  end)

  it("names the argument in errors", function()
    assert.matches("integrator", err_of(function() impetus.world { integrator = "verlet" } end))
    assert.matches("unknown field 'gravty'", err_of(function() impetus.world { gravty = { 0, 0, 0 } } end))
    local w = impetus.world()
    assert.matches("world.integrator", err_of(function() w.integrator = "leapfrog" end))
    assert.matches("world.gravity must be a vector", err_of(function() w.gravity = 3 end))
    assert.matches("dt must be a positive number", err_of(function() w:step(-1) end))
    assert.matches("dt must be a positive number", err_of(function() w:step(0 / 0) end))
    assert.matches("World has no field or method 'nope'", err_of(function() return w.nope end))
    assert.matches("read%-only", err_of(function() w.time = 3 end))
  end)

  it("steps time forward", function()
    local w = impetus.world()
    for _ = 1, 60 do w:step(1 / 60) end
    assert.is_true(math.abs(w.time - 1) < 1e-12)
    assert.are.equal(60, w.steps)
  end)
end)

describe("particle", function()
  it("keeps what it was created with", function()
    local w = impetus.world()
    local p = w:particle { position = { 1, 2, 3 }, velocity = { 4, 5, 6 }, mass = 2, radius = 0.25 }
    assert.are.same({ 1, 2, 3 }, p.position)
    assert.are.same({ 4, 5, 6 }, p.velocity)
    assert.are.equal(2, p.mass)
    assert.are.equal(0.25, p.radius)
    assert.is_false(p.fixed)
    p.position = { x = 7, y = 8, z = 9 }
    assert.are.same({ 7, 8, 9 }, p.position)
    assert.are.equal(1, w.particle_count)
  end)

  it("is the same handle every time it comes back", function()
    local w = impetus.world()
    local p = w:particle {}
    assert.are.equal(p, w:particles()[1])
    p.data.tag = "hello"
    assert.are.equal("hello", w:particles()[1].data.tag)
  end)

  it("keeps its data table when no script holds the handle", function()
    local w = impetus.world()
    w:particle {}.data.tag = "kept"
    collectgarbage()
    collectgarbage()
    assert.are.equal("kept", w:particles()[1].data.tag)
  end)

  it("refuses wrong arguments, naming them", function()
    local w = impetus.world()
    assert.matches("field 'mass' must be > 0", err_of(function() w:particle { mass = 0 } end))
    assert.matches("field 'mass' must be a number", err_of(function() w:particle { mass = "heavy" } end))
    assert.matches("field 'position' must be a vector", err_of(function() w:particle { position = 5 } end))
    assert.matches("component 2 is string", err_of(function() w:particle { position = { 1, "a", 3 } } end))
    assert.matches("unknown field 'positon'", err_of(function() w:particle { positon = { 1, 2, 3 } } end))
    assert.matches("must be finite", err_of(function() w:particle { position = { 0, 1 / 0, 0 } } end))
    assert.matches("both fixed and kinematic", err_of(function() w:particle { fixed = true, kinematic = true } end))
    local p = w:particle {}
    assert.matches("particle.mass must be > 0", err_of(function() p.mass = -1 end))
    assert.matches("Particle has no field or method 'colour'", err_of(function() return p.colour end))
  end)

  it("detects a stale handle after destroy", function()
    local w = impetus.world()
    local p = w:particle { position = { 0, 1, 0 } }
    local q = w:particle { position = { 0, 2, 0 } }
    p:destroy()
    assert.is_false(p:valid())
    assert.matches("stale Particle handle", err_of(function() return p.position end))
    assert.matches("stale Particle handle", err_of(function() p.velocity = { 1, 0, 0 } end))
    -- the slot is reused by a new particle, but the old handle stays stale
    local r = w:particle { position = { 0, 3, 0 } }
    assert.matches("stale", err_of(function() return p.position end))
    assert.are.same({ 0, 3, 0 }, r.position)
    assert.are.same({ 0, 2, 0 }, q.position)
    p:destroy() -- twice is harmless
  end)

  it("cannot be changed from inside the world's step", function()
    local w = impetus.world()
    local p = w:particle { position = { 0, 1, 0 } }
    w:field(function() p.position = { 0, 0, 0 } end)
    assert.matches("locked", err_of(function() w:step(0.01) end))
    assert.are.same({ 0, 1, 0 }, p.position)
  end)

  it("fixed particles stay put, kinematic ones follow their velocity", function()
    local w = impetus.world()
    local a = w:particle { position = { 0, 1, 0 }, fixed = true }
    local k = w:particle { position = { 0, 1, 0 }, kinematic = true, velocity = { 1, 0, 0 } }
    for _ = 1, 30 do w:step(1 / 60) end
    assert.are.same({ 0, 1, 0 }, a.position)
    assert.is_true(math.abs(k.position[1] - 0.5) < 1e-12 and k.position[2] == 1)
    k:move_to({ 2, 2, 0 }, 0.1)
    w:step(0.1)
    assert.is_true(math.abs(k.position[1] - 2) < 1e-12 and math.abs(k.position[2] - 2) < 1e-12)
  end)
end)

describe("ground plane", function()
  it("bounces a particle with its restitution and keeps it above ground", function()
    local w = impetus.world()
    w:plane { restitution = 0.8, friction = 0 }
    local p = w:particle { position = { 0, 2, 0 }, radius = 0 }
    local lowest = math.huge
    for _ = 1, 600 do
      w:step(1 / 60)
      lowest = math.min(lowest, p.position[2])
    end
    assert.is_true(lowest >= -1e-9, "went through the ground: " .. lowest)
    assert.is_true(math.abs(p.position[2]) < 1e-6, "should come to rest on the ground")
  end)

  it("refuses a zero normal and out-of-range restitution", function()
    local w = impetus.world()
    assert.matches("normal", err_of(function() w:plane { normal = { 0, 0, 0 } } end))
    assert.matches("restitution", err_of(function() w:plane { restitution = 1.5 } end))
  end)
end)
