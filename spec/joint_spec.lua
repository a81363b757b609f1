-- impulse-mode joints (engine/joint.c, S1): point and hinge joints held by pre-stabilization (the
-- predicted joint frame is made exact before the position update) and velocity post-stabilization.
local impetus = require "impetus"
local dt = 1 / 60
local g = 9.81

-- a chain of n box links (1 m x 0.2 x 0.2) hanging from the world at (0, y0, 0), laid out horizontally
local function chain(n, kind)
  local w = impetus.world {}
  w.sleeping = false
  local links, joints, prev = {}, {}, nil
  for i = 1, n do
    local b = w:box { size = { 1, 0.2, 0.2 }, position = { i - 0.5, 10, 0 }, density = 100 }
    links[i] = b
    joints[i] = w:joint { type = kind or "point", a = b, b = prev, anchor = { i - 1, 10, 0 },
      axis = kind == "hinge" and { 0, 0, 1 } or nil }
    prev = b
  end
  return w, links, joints
end

local function energy(links)
  local e = 0
  for _, b in ipairs(links) do e = e + b:kinetic_energy() + b.mass * g * b.position[2] end
  return e
end

describe("joints (impulse mode, S1)", function()
  it("point joints of a falling chain coincide to 1e-6 m after every step, and the error does not grow", function()
    local w, _, joints = chain(5)
    local first, last = 0, 0
    for s = 1, 2000 do
      w:step(dt)
      local worst = 0
      for _, j in ipairs(joints) do worst = math.max(worst, j.gap) end
      assert(worst < 1e-6, string.format("step %d: joint gap %.3g m", s, worst))
      if s <= 200 then first = math.max(first, worst) elseif s > 1800 then last = math.max(last, worst) end
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
    assert.truthy(err { type = "spring", a = a, anchor = { 0, 0, 0 } }:find("field 'type'", 1, true))
    assert.truthy(err { type = "point", anchor = { 0, 0, 0 } }:find("field 'a'", 1, true))
    assert.truthy(err { type = "point", a = 3, anchor = { 0, 0, 0 } }:find("field 'a' must be a body", 1, true))
    assert.truthy(err { type = "point", a = a, b = a, anchor = { 0, 0, 0 } }:find("two different bodies", 1, true))
    assert.truthy(err { type = "point", a = a }:find("field 'anchor'", 1, true))
    assert.truthy(err { type = "point", a = a, anchor = { 0, 0 / 0, 0 } }:find("anchor", 1, true))
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 } }:find("field 'axis'", 1, true))
    assert.truthy(err { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 0, 0 } }:find("non-zero", 1, true))
    assert.truthy(err { type = "rigid", a = a, anchor = { 0, 0, 0 }, axis = { 0, 0, 1 } }:find("field 'axis' is not used", 1, true))
    assert.truthy(err { type = "point", a = a, anchor = { 0, 0, 0 }, colour = 1 }:find("colour", 1, true))
    -- the QP mode keeps its own joints; a typed joint there is refused with the reason
    w.contact = "qp"
    assert.truthy(err { type = "point", a = a, anchor = { 0, 0, 0 } }:find("impulse mode", 1, true))
    assert.are.equal(1, w:joint { a = a, point = { 0, 0, 0 } })
    -- the handle describes itself
    w.contact = "impulse"
    local j = w:joint { type = "hinge", a = a, anchor = { 0, 0, 0 }, axis = { 0, 1, 0 } }
    assert.are.equal("hinge", j.type)
    assert.truthy(tostring(j):find("hinge", 1, true))
  end)
end)
