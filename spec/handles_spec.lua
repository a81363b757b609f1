-- Handles a script can trust: every handle says what it is (handle.kind), so a contact handler can
-- tell a Body from a Collider and read the fields both answer.
local impetus = require "impetus"

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

-- one handle of every type, keyed by the kind it must report
local function one_of_each()
  local w = impetus.world()
  local p = w:particle { position = { 0, 1, 0 } }
  local q = w:particle { position = { 1, 1, 0 } }
  return w, {
    world = w,
    particle = p,
    spring = w:spring(p, q),
    behavior = w:behavior { kind = "distance", particles = { p, q } },
    field = w:field(function() end),
    collider = w:plane {},
    body = w:box { position = { 0, 3, 0 } },
    constraint = w:rod(p, q),
    joint = w:joint { type = "point", a = w:sphere { position = { 5, 3, 0 } }, anchor = { 5, 4, 0 } },
    cloth = w:cloth { rows = 2, cols = 2 },
    hair = w:hair { segments = 2 },
  }
end

describe("handle.kind", function()
  it("names the type of every handle", function()
    local _, handles = one_of_each()
    local seen = 0
    for kind, h in pairs(handles) do
      assert.are.equal(kind, h.kind)
      seen = seen + 1
    end
    assert.are.equal(11, seen)
  end)

  it("answers after the object is destroyed, and cannot be set", function()
    local w, handles = one_of_each()
    for kind, h in pairs(handles) do
      if kind ~= "world" then
        h:destroy()
        assert.is_false(h:valid())
        assert.are.equal(kind, h.kind)
      end
    end
    assert.matches("stale Body handle", err_of(function() return handles.body.position end))
    assert.matches("Body.kind is read%-only", err_of(function() handles.body.kind = "collider" end))
    assert.matches("World.kind is read%-only", err_of(function() w.kind = "x" end))
  end)

  it("keeps a constraint's own type in constraint.type", function()
    local w = impetus.world()
    local p, q = w:particle { position = { 0, 0, 0 } }, w:particle { position = { 0, 1, 0 } }
    assert.are.equal("rod", w:rod(p, q).type)
    assert.are.equal("pin", w:pin(p).type)
    assert.are.equal("wire", w:wire(q, { center = { 0, 0, 0 } }).type)
  end)

  it("tells a Body from a Collider in contact events and handlers", function()
    local w = impetus.world()
    local ground = w:plane {}
    local ledge = w:box { static = true, position = { 3, 0.5, 0 }, size = { 1, 1, 1 } }
    local box = w:box { position = { 0, 0.6, 0 }, size = { 1, 1, 1 } }
    local crate = w:box { position = { 3, 1.6, 0 }, size = { 0.8, 0.8, 0.8 } }
    local others = {}
    for _, b in ipairs { box, crate } do
      impetus.on_contact(b, function(self, other, e)
        if e.kind == "begin" then others[#others + 1] = { self = self, other = other, kind = other.kind } end
      end)
    end
    for _ = 1, 30 do
      w:step(1 / 60)
      impetus.dispatch_contacts(w)
    end
    local touched = {}
    for _, o in ipairs(others) do touched[o.other] = o.kind end
    assert.are.equal("collider", touched[ground])
    assert.are.equal("collider", touched[ledge])
    assert.are.equal("collider", ground.kind)
    for _, c in ipairs(w:contacts()) do
      assert.are.equal("body", c.a.kind, "side a of every manifold here is a box")
      assert.are.equal("collider", c.b.kind)
    end
  end)
end)

describe("a Collider", function()
  it("answers the fields of a static Body", function()
    local w = impetus.world()
    local plane = w:plane { point = { 0, 1, 0 } }
    local ball = w:sphere { static = true, position = { 4, 1, 0 }, radius = 0.5, friction = 0.3 }
    local crate = w:box { static = true, position = { -4, 1, 0 }, size = { 2, 1, 1 }, axis = { 0, 0, 1 }, angle = math.pi / 2 }
    local body = w:body { static = true, shapes = { { type = "box", size = { 1, 1, 1 } } } }
    for _, c in ipairs { plane, ball, crate } do
      assert.are.same({ 0, 0, 0 }, c.velocity)
      assert.are.same({ 0, 0, 0 }, c.angular_velocity)
      assert.are.equal(body.mass, c.mass)
      assert.are.equal(0, c.mass)
      assert.is_true(c.static)
      assert.is_false(c.kinematic)
      assert.is_false(c.asleep)
      assert.are.same(c.position, c.center_of_mass)
      assert.are.equal(0, c:kinetic_energy())
      assert.are.equal("table", type(c.data))
    end
    assert.are.same({ 0, 1, 0 }, plane.center_of_mass)
    assert.are.same({ 1, 0, 0, 0 }, ball.orientation)
    assert.are.equal(0.3, ball.static_friction)
    -- the crate turned a quarter turn about z: its orientation is {cos(pi/4), 0, 0, sin(pi/4)}
    local q = crate.orientation
    assert.is_true(math.abs(q[1] - math.sqrt(0.5)) < 1e-12 and math.abs(q[4] - math.sqrt(0.5)) < 1e-12, "quarter turn")
    assert.is_true(math.abs(crate.rotation[1][2] + 1) < 1e-12, "R[1][2] = -sin(pi/2)")
  end)

  it("keeps a colour a handler can read and set", function()
    local w = impetus.world()
    local plane = w:plane {}
    local function rounded(c)
      for k = 1, 4 do c[k] = math.floor(c[k] * 100 + 0.5) / 100 end
      return c
    end
    -- the greys render/ draws them with: planes darker than the other colliders
    assert.are.same({ 0.36, 0.38, 0.41, 1 }, rounded(plane.color))
    assert.are.same({ 0.55, 0.58, 0.62, 1 }, rounded(w:sphere { static = true }.color))
    plane.color = { 1, 0, 0 }
    assert.are.same({ 1, 0, 0, 1 }, plane.color)
    local c = plane.color
    c[1] = 0 -- a copy
    assert.are.same({ 1, 0, 0, 1 }, plane.color)
    local ledge = w:box { static = true, color = { 0, 0.5, 1, 0.5 } }
    assert.are.same({ 0, 0.5, 1, 0.5 }, ledge.color)
    assert.matches("collider.color must be a colour", err_of(function() plane.color = 3 end))
    assert.matches("world:plane: field 'color' must be a colour", err_of(function() w:plane { color = "red" } end))
    plane:destroy()
    assert.matches("stale Collider handle", err_of(function() return plane.color end))
  end)

  it("takes forces and impulses as a static Body does: it does not move", function()
    local w = impetus.world()
    local ledge = w:box { static = true, position = { 0, 1, 0 } }
    ledge:apply_impulse({ 0, 100, 0 })
    ledge:apply_force({ 0, 100, 0 }, { 1, 0, 0 })
    ledge:apply_torque({ 0, 0, 5 })
    ledge:wake()
    w:step(1 / 60)
    assert.are.same({ 0, 1, 0 }, ledge.position)
    assert.matches("collider:apply_impulse: argument 'impulse' must be a vector", err_of(function() ledge:apply_impulse(3) end))
  end)

  it("lets a handler recolour whatever a ball hits, as scenes/planar2d.lua does", function()
    local w = impetus.world()
    w.planar = true
    local ground = w:plane { friction = 0.6 }
    local crate = w:box { size = { 0.8, 0.8, 1 }, position = { 1.5, 0.4, 0 } }
    local ball = w:sphere { radius = 0.3, density = 3000, position = { -2, 0.3, 0 }, velocity = { 12, 0, 0 } }
    local hit = {}
    impetus.on_contact(ball, function(self, other, e)
      hit[other] = true
      assert.are.equal("table", type(other.color))
      if not other.static then other.color = { 0.95, 0.35, 0.3 } end
      if other.kind == "collider" then other.color = { 0, 0, 1 } end
    end)
    for _ = 1, 120 do
      w:step(1 / 60)
      impetus.dispatch_contacts(w)
    end
    assert.is_true(hit[ground] and hit[crate], "the ball rolled on the ground into the crate")
    assert.are.same({ 0, 0, 1, 1 }, ground.color)
    local c = crate.color
    assert.is_true(math.abs(c[1] - 0.95) < 1e-6 and math.abs(c[2] - 0.35) < 1e-6, "the crate turned red")
  end)

  it("keeps scenes/planar2d.lua running past its first hits", function()
    local r = impetus.runner((os.getenv("IMPETUS_ROOT") or ".") .. "/scenes/planar2d.lua")
    r:start()
    for _ = 1, 600 do
      if not r:step() then break end
    end
    assert.is_nil(r.error)
    assert.is_true(r.world.time > 9.99, "ten seconds simulated")
  end)
end)

describe("a handle of another world", function()
  it("is refused where a constructor takes objects", function()
    local w, other = impetus.world(), impetus.world()
    local body, stranger = w:box {}, other:box {}
    local p, q = w:particle {}, other:particle { position = { 1, 0, 0 } }
    for _, make in ipairs {
      function() w:joint { type = "point", a = stranger, anchor = { 0, 0, 0 } } end,
      function() w:joint { type = "hinge", a = body, b = stranger, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 } } end,
      function() w:joint { a = stranger, point = { 0, 0, 0 } } end,
    } do
      assert.matches("body of another world", err_of(make))
    end
    assert.matches("another world", err_of(function() w:spring(p, q) end))
    assert.matches("another world", err_of(function() w:rod(p, q) end))
  end)
end)
