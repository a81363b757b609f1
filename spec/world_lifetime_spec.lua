-- The lifetime of a world's C memory: world:destroy() frees it at once (its handles become stale,
-- with clear errors), and worlds a script drops are collected while few of them hold memory, not
-- when Lua's own garbage happens to start a cycle (Lua sees a World as a small userdata).
local impetus = require "impetus"

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

describe("world:destroy()", function()
  it("frees the world; its handles become stale with a clear error", function()
    local w = impetus.world()
    local p = w:particle { position = { 0, 1, 0 } }
    local ground = w:plane {}
    local box = w:box { position = { 0, 2, 0 } }
    local cloth = w:cloth { rows = 2, cols = 2 }
    box.data.name = "crate"
    w:step(1 / 60)
    w:destroy()
    assert.is_false(w:valid())
    assert.are.equal("World (destroyed)", tostring(w))
    assert.matches("stale World: this world was destroyed", err_of(function() w:step(1 / 60) end))
    assert.matches("stale World", err_of(function() return w.time end))
    assert.matches("stale World", err_of(function() w:box {} end))
    for h, field in pairs { [p] = "position", [ground] = "position", [box] = "position", [cloth] = "stretch" } do
      assert.is_false(h:valid())
      h:destroy() -- harmless, as for a destroyed object
      assert.matches("its world was destroyed", err_of(function() return h[field] end))
    end
    assert.are.equal("body", box.kind)
    assert.matches("stale Body handle: its world was destroyed", err_of(function() return box.data end))
    assert.matches("stale Body handle: its world was destroyed", err_of(function() box:apply_impulse({ 0, 1, 0 }) end))
    local other = impetus.world()
    assert.matches("stale Particle handle: its world was destroyed", err_of(function() other:spring(p, { 0, 0, 0 }) end))
    assert.matches("stale Body handle: its world was destroyed", err_of(function() other:joint { type = "point", a = box, anchor = { 0, 0, 0 } } end))
    w:destroy() -- twice is harmless
  end)

  it("refuses to run inside the world's own step, which is then undone", function()
    local w = impetus.world()
    local p = w:particle { position = { 0, 1, 0 } }
    w:field(function() w:destroy() end)
    assert.matches("world:destroy: the world is locked while it steps", err_of(function() w:step(1 / 60) end))
    assert.is_true(w:valid())
    assert.are.same({ 0, 1, 0 }, p.position)
    assert.are.equal(0, w.time)
  end)

  it("lets go of the script's callbacks and data", function()
    local w = impetus.world()
    local held = setmetatable({}, { __mode = "v" })
    local field = function() end
    held.field = field
    w:field(field)
    local b = w:box {}
    local payload = {}
    held.payload = payload
    b.data.payload = payload
    field, payload = nil, nil
    collectgarbage()
    assert.is_function(held.field, "the world keeps its field function")
    assert.is_table(held.payload, "and the body's data")
    w:destroy()
    collectgarbage()
    assert.is_nil(held.field)
    assert.is_nil(held.payload)
    assert.are.equal("body", b.kind)
  end)
end)

describe("worlds a script drops", function()
  it("are collected while few of them hold C memory", function()
    collectgarbage()
    local made = setmetatable({}, { __mode = "k" })
    for i = 1, 400 do
      local w = impetus.world()
      w:particle { position = { i, 0, 0 } }
      made[w] = true
    end
    local uncollected = 0
    for _ in pairs(made) do uncollected = uncollected + 1 end
    assert.is_true(uncollected <= 4, uncollected .. " of 400 dropped worlds still hold their memory")
  end)

  it("are never collected while the script holds them", function()
    local kept = {}
    for i = 1, 50 do
      kept[i] = impetus.world()
      kept[i]:particle { position = { i, 0, 0 } }
    end
    for i = 1, 50 do
      assert.is_true(kept[i]:valid())
      assert.are.equal(1, kept[i].particle_count)
    end
  end)
end)
