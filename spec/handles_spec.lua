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
