-- One world: particles, cloth and hair against rigid bodies (both ways), particles against each other,
-- particles sewn to bodies (engine/particle_contact.c, particle_shape.c, particle_attach.c). The
-- numbers come from outside the code: conservation of momentum, the equal-mass elastic exchange,
-- the weight a floor carries, the energy of a settling pile, where a body point is.
local impetus = require "impetus"
local helpers = require "helpers"

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

local function len(v) return math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) end
local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end

-- a body point given in the body frame (from its origin), in the world now: x + R p
local function body_point(body, p)
  local x, R = body.position, body.rotation
  return { x[1] + R[1][1] * p[1] + R[1][2] * p[2] + R[1][3] * p[3],
           x[2] + R[2][1] * p[1] + R[2][2] * p[2] + R[2][3] * p[3],
           x[3] + R[3][1] * p[1] + R[3][2] * p[2] + R[3][3] * p[3] }
end

local G, H = 9.81, 1 / 60

-- the normal impulse the contact solver applied between `body` and anything else in the last step
local function impulse_on(world, body)
  local j = 0
  for _, c in ipairs(world:contacts()) do
    if c.a == body or c.b == body then
      for _, p in ipairs(c.points) do j = j + p.impulse end
    end
  end
  return j
end

-- one body of each shape type at the origin: 2 kg, or static (world:body with static = true)
local SHAPE_DEFS = {
  sphere = { { type = "sphere", radius = 0.3 } },
  box = { { type = "box", size = { 0.5, 0.4, 0.6 }, axis = { 1, 1, 0 }, angle = 0.4 } },
  capsule = { { type = "capsule", radius = 0.2, length = 0.6, axis = { 0, 0, 1 }, angle = 0.7 } },
  hull = { { type = "hull", points = { { -0.3, -0.3, -0.3 }, { 0.3, -0.3, -0.3 }, { 0, 0.4, -0.3 }, { 0, 0, 0.4 } } } },
  compound = { { type = "box", size = { 0.6, 0.2, 0.6 } }, { type = "sphere", radius = 0.2, position = { 0, 0.25, 0 } } },
}
local SHAPES = {}
for name, shapes in pairs(SHAPE_DEFS) do
  SHAPES[name] = function(w, t)
    if t.static then return w:body { static = true, position = { 0, 0, 0 }, shapes = shapes } end
    return w:body { mass = 2, position = { 0, 0, 0 }, shapes = shapes }
  end
end

describe("particles against bodies", function()
  for _, name in ipairs { "sphere", "box", "capsule", "hull", "compound" } do
    it("keep the total momentum to 1e-9 relative: six particles into a free " .. name, function()
      local w = impetus.world { gravity = { 0, 0, 0 } }
      local b = SHAPES[name](w, {})
      b.friction, b.restitution = 0.4, 0.3
      local ps = {}
      for k = 1, 6 do
        ps[k] = w:particle { position = { -2 - 0.3 * k, 0.05 * k - 0.15, 0.03 * k }, velocity = { 6 + k, 0.3, -0.2 },
          mass = 0.1 * k, radius = 0.03, restitution = 0.5, friction = 0.6 }
      end
      local function momentum()
        local P = b.momentum
        for _, p in ipairs(ps) do for a = 1, 3 do P[a] = P[a] + p.mass * p.velocity[a] end end
        return P
      end
      local P0, worst = momentum(), 0
      for _ = 1, 120 do
        w:step(1 / 120)
        worst = math.max(worst, len(sub(momentum(), P0)) / len(P0))
      end
      assert.is_true(worst <= 1e-9, string.format("momentum drifted by %.3g relative", worst))
      -- the body was hit: it moves and turns (the impulses reached it at the contact points)
      assert.is_true(b.velocity[1] > 1 and len(b.angular_velocity) > 0.1, "the body did not take the particles' impulses")
    end)
  end

  for _, integrator in ipairs { "rk4", "euler", "implicit" } do
    for _, mode in ipairs { "impulse", "qp" } do
      it("1 kg at 3 m/s into a resting free 1 kg sphere, e = 1: they exchange velocities (" .. integrator .. ", " .. mode .. ")", function()
        local w = impetus.world { gravity = { 0, 0, 0 } }
        w.integrator, w.contact = integrator, mode
        local s = w:sphere { radius = 0.5, mass = 1, position = { 0, 0, 0 }, restitution = 1, friction = 0 }
        local p = w:particle { position = { -2, 0, 0 }, velocity = { 3, 0, 0 }, mass = 1, radius = 0.05, restitution = 1, friction = 0 }
        for _ = 1, 60 do w:step(1 / 60) end
        helpers.near(len(p.velocity), 0, 1e-9, "particle speed after")
        helpers.near(s.velocity[1], 3, 1e-9, "sphere speed after")
        helpers.near(len(s.angular_velocity), 0, 1e-9, "sphere spin after")
      end)
    end
  end

  -- a particle dropped fast onto each shape (static, and dynamic on a static floor) is never inside it
  for _, name in ipairs { "sphere", "box", "capsule", "hull", "compound" } do
    for _, static in ipairs { true, false } do
      it("a particle dropped at 8 m/s onto a " .. (static and "static " or "dynamic ") .. name .. " never enters it", function()
        local w = impetus.world { gravity = { 0, -G, 0 } }
        w:box { static = true, size = { 4, 0.2, 4 }, position = { 0, -0.8, 0 } }
        local b = SHAPES[name](w, { static = static })
        local p = w:particle { position = { 0.02, 1.5, 0.01 }, velocity = { 0, -8, 0 }, mass = 0.01, radius = 0.02 }
        assert.are.equal(b, w:raycast({ 0.02, 3, 0.01 }, { 0.02, -3, 0.01 }).body)
        local touched = false
        for _ = 1, 120 do
          w:step(H)
          for _, q in ipairs(w:query_point(p.position)) do
            assert.are_not.equal(b, q.body, "the particle's centre is inside the body")
          end
          touched = touched or p.velocity[2] > -1
        end
        assert.is_true(touched, "the particle never met the body")
        if static then
          local hit = w:raycast({ p.position[1], 3, p.position[3] }, { p.position[1], -3, p.position[3] })
          if hit.body == b then
            assert.is_true(p.position[2] - p.radius >= hit.point[2] - 1e-3, "the particle sank into the body")
          end
        end
      end)
    end
  end

  it("a 60 m/s particle does not pass through a 2 cm plate moving at it at 20 m/s", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local plate = w:box { size = { 0.02, 1, 1 }, mass = 50, position = { 1, 0, 0 }, velocity = { -20, 0, 0 } }
    local p = w:particle { position = { -1, 0, 0 }, velocity = { 60, 0, 0 }, mass = 0.01, radius = 0.01 }
    for _ = 1, 30 do w:step(H) end
    assert.is_true(p.position[1] < plate.position[1], "the particle is behind the plate")
  end)

  it("meet a kinematic body that sweeps them along", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    local paddle = w:box { kinematic = true, size = { 0.1, 1, 1 }, position = { -0.5, 0, 0 }, velocity = { 2, 0, 0 } }
    local p = w:particle { position = { 0, 0, 0 }, mass = 0.1, radius = 0.02 }
    for _ = 1, 60 do w:step(H) end
    helpers.near(p.velocity[1], 2, 1e-6, "the particle moves with the paddle's face")
    assert.is_true(p.position[1] - 0.02 >= paddle.position[1] + 0.05 - 1e-6, "the particle is in front of the paddle")
  end)
end)

describe("cloth and particles on a dynamic box on the floor", function()
  local function rest(integrator, build)
    local w = impetus.world { gravity = { 0, -G, 0 } }
    w.integrator = integrator
    w:plane { friction = 0.5, restitution = 0 }
    local box = w:box { size = { 1, 0.4, 1 }, position = { 0, 0.2, 0 }, mass = 2, friction = 0.6 }
    local m = build(w)
    for _ = 1, 600 do w:step(H) end
    return w, box, m
  end

  it("at rest the floor carries (m_box + m_cloth) g h within 1 %: an implicit 12 x 12 cloth", function()
    local w, box, m = rest("implicit", function(w)
      w:cloth { rows = 12, cols = 12, size = 0.8, position = { 0, 0.5, 0 }, mass = 0.5, radius = 0.01 }
      return 0.5
    end)
    local J = impulse_on(w, box)
    helpers.near(J / ((2 + m) * G * H), 1, 0.01, "floor impulse / ((m_box + m_cloth) g h)")
    for _, p in ipairs(w:particles()) do
      assert.is_true(p.position[2] > 0.4 + 0.01 - 1e-3, "a cloth particle is below the box's top")
    end
  end)

  for _, integrator in ipairs { "rk4", "euler", "midpoint", "adaptive" } do
    it("the same for 25 particles on the box (" .. integrator .. ")", function()
      local w, box, m = rest(integrator, function(w)
        for i = 1, 25 do
          w:particle { position = { (i % 5) * 0.15 - 0.3, 0.6 + 0.01 * i, math.floor(i / 5) * 0.15 - 0.3 }, mass = 0.02, radius = 0.02 }
        end
        return 25 * 0.02
      end)
      helpers.near(impulse_on(w, box) / ((2 + m) * G * H), 1, 0.01, "floor impulse / ((m_box + m_particles) g h)")
    end)
  end

  it("a cloth dropped on a free box moves it: the box takes the cloth's impact", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    w.integrator = "implicit"
    w.cg_tolerance = 1e-12 -- the contact impulses are the solve's: exact to its tolerance
    local box = w:box { size = { 1, 0.4, 1 }, position = { 0, 0, 0 }, mass = 2 }
    local cl = w:cloth { rows = 10, cols = 10, size = 0.8, position = { 0, 0.3, 0 }, mass = 0.5, radius = 0.01 }
    for _, p in ipairs(cl:particles()) do p.velocity = { 0, -2, 0 } end
    for _ = 1, 60 do w:step(H) end
    local P = box.momentum
    for _, p in ipairs(cl:particles()) do for a = 1, 3 do P[a] = P[a] + p.mass * p.velocity[a] end end
    helpers.near(P[2], -1, 1e-9, "total momentum (cloth 0.5 kg at -2 m/s)")
    assert.is_true(box.velocity[2] < -0.3, "the box was pushed down")
  end)
end)

describe("particles against each other (world.particle_collisions)", function()
  it("are off by default and pass through each other", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    assert.is_false(w.particle_collisions)
    local a = w:particle { position = { -1, 0, 0 }, velocity = { 2, 0, 0 }, radius = 0.1 }
    w:particle { position = { 1, 0, 0 }, velocity = { -2, 0, 0 }, radius = 0.1 }
    for _ = 1, 60 do w:step(H) end
    helpers.near(a.velocity[1], 2, 0, "untouched")
  end)

  it("two equal particles meeting head on with e = 1 exchange velocities; momentum to round-off", function()
    local w = impetus.world { gravity = { 0, 0, 0 } }
    w.particle_collisions = true
    local a = w:particle { position = { -1, 0, 0 }, velocity = { 2, 0, 0 }, radius = 0.1, mass = 0.5, restitution = 1, friction = 0 }
    local b = w:particle { position = { 1, 0, 0 }, velocity = { -1, 0, 0 }, radius = 0.1, mass = 0.5, restitution = 1, friction = 0 }
    for _ = 1, 60 do w:step(H) end
    helpers.near(a.velocity[1], -1, 1e-12, "a")
    helpers.near(b.velocity[1], 2, 1e-12, "b")
  end)

  -- grains (r = 3 cm, e = 0) dropped in a pen of static boxes settle into a pile
  local function pile(n, integrator)
    local w = impetus.world { gravity = { 0, -G, 0 } }
    w.integrator = integrator
    w.particle_collisions = true
    w:plane { restitution = 0, friction = 0.5 }
    for k = -1, 1, 2 do
      w:box { static = true, size = { 0.1, 2, 1.4 }, position = { k * 0.65, 1, 0 } }
      w:box { static = true, size = { 1.4, 2, 0.1 }, position = { 0, 1, k * 0.65 } }
    end
    local r, ps = 0.03, {}
    local side = math.ceil(math.sqrt(n / 8))
    for k = 0, n - 1 do
      local layer, i, j = k // (side * side), k % side, (k // side) % side
      ps[k + 1] = w:particle { position = { (i - side / 2) * 2.4 * r + 0.003 * (layer % 3), 0.2 + layer * 2.4 * r,
        (j - side / 2) * 2.4 * r }, mass = 0.01, radius = r, restitution = 0, friction = 0.4 }
    end
    local function energy()
      local e = 0
      for _, p in ipairs(ps) do
        local v = p.velocity
        e = e + p.mass * (G * p.position[2] + 0.5 * (v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2))
      end
      return e
    end
    local e0 = energy()
    local prev, rise = e0, -math.huge
    for _ = 1, 600 do
      w:step(H)
      local e = energy()
      rise = math.max(rise, (e - prev) / e0)
      prev = e
    end
    local overlap = 0
    for a = 1, n do
      local x = ps[a].position
      for b = a + 1, n do
        local y = ps[b].position
        overlap = math.max(overlap, 2 * r - math.sqrt((x[1] - y[1]) ^ 2 + (x[2] - y[2]) ^ 2 + (x[3] - y[3]) ^ 2))
      end
    end
    local ke = 0
    for _, p in ipairs(ps) do ke = ke + 0.5 * p.mass * len(p.velocity) ^ 2 end
    return rise, overlap / r, ke
  end

  -- the issue's bounds on a settling pile: the energy never rises by more than 1e-6 of the initial
  -- energy in a step, and no two grains overlap by 10 % of their radius
  local function settles(n, integrator)
    local rise, overlap, ke = pile(n, integrator)
    assert.is_true(rise <= 1e-6, string.format("the energy rose by %.3g of the initial energy in a step", rise))
    assert.is_true(overlap < 0.1, string.format("two grains overlap by %.3g r", overlap))
    return ke
  end

  it("400 grains settle: the energy never rises by 1e-6 of the initial energy in a step, overlaps < 10 % of r (RK4)", function()
    local ke = settles(400, "rk4")
    assert.is_true(ke < 1e-9, string.format("still moving: %.3g J", ke))
  end)

  it("2000 grains (RK4): the energy never rises by 1e-6 of the initial energy in a step, overlaps < 10 % of r", function()
    settles(2000, "rk4")
  end)

  -- the grid search tests four candidates at a time where AVX is there (IMPETUS_SIMD=0: one at a time) and
  -- runs its chunks on both threads: grains of two radii poured into a pile, a few thrown through it (their
  -- paths, not their ends, meet), and a second world whose grains lie too far apart for the dense grid (one
  -- far off), so the hashed grid runs too
  local pair_script = [[
    local impetus = require "impetus"
    local out, rows = {}, 0
    for _, far in ipairs { false, true } do
      local w = impetus.world {}
      w.particle_collisions = true
      w:plane { friction = 0.5 }
      for l = 0, 5 do
        for i = 0, 19 do
          for k = 0, 19 do
            local r = (i + k + l) % 3 == 0 and 0.03 or 0.02
            w:particle { position = { i * 0.055 + 0.003 * (l % 2), 0.04 + l * 0.06, k * 0.055 }, radius = r,
              mass = 0.01, restitution = 0.3, friction = 0.4,
              velocity = (i + l) % 17 == 0 and { 9, -2, 3 } or { 0, 0, 0 } }
          end
        end
      end
      if far then w:particle { position = { 500, 0.02, 0 }, radius = 0.02 } end
      for _ = 1, 25 do
        w:step(1 / 60)
        rows = rows + w:profile().particle_contacts
      end
      for _, p in ipairs(w:particles()) do
        local x, v = p.position, p.velocity
        out[#out + 1] = string.format("%a %a %a %a %a %a", x[1], x[2], x[3], v[1], v[2], v[3])
      end
    end
    out[#out + 1] = "contacts " .. rows
    return table.concat(out, "\n")
  ]]

  it("2400 grains: the same to the last bit on the vector path and the scalar one, on one thread and two", function()
    local here = helpers.same_elsewhere(pair_script, { "IMPETUS_SIMD=0", "IMPETUS_THREADS=1" })
    local rows = tonumber(here:match("contacts (%d+)$"))
    assert.is_true(rows > 25 * 2400, string.format("the grains met in %d contacts over the steps", rows))
  end)

  it("400 grains under the implicit integrator: the energy never rises by 1e-6 in a step, overlaps < 10 % of r", function()
    local ke = settles(400, "implicit")
    assert.is_true(ke < 1e-9, string.format("still moving: %.3g J", ke))
  end)

  it("grains poured onto a tilted static box rest on it and on the floor, none inside the box (its corners too)", function()
    local w = impetus.world { gravity = { 0, -G, 0 } }
    w.particle_collisions = true
    w:plane { restitution = 0, friction = 0.5 }
    local half = { 0.3, 0.3, 0.3 }
    local box = w:box { static = true, size = { 0.6, 0.6, 0.6 }, position = { 0, 0.45, 0 }, axis = { 1, 0, 1 }, angle = 0.3,
      restitution = 0, friction = 0.8 }
    local R, c, r, ps = box.rotation, box.position, 0.03, {}
    for k = 0, 399 do
      local i, j, l = k % 10, (k // 10) % 10, k // 100
      ps[#ps + 1] = w:particle { position = { (i - 4.5) * 0.07, 1.1 + l * 0.07, (j - 4.5) * 0.07 }, radius = r, mass = 0.01,
        restitution = 0, friction = 0.8 }
    end
    for _ = 1, 240 do w:step(H) end
    -- the signed distance from a point to the box: its box-frame coordinates are R^T (x - c)
    local function box_distance(x)
      local d = sub(x, c)
      local outside, inside = 0, -math.huge
      for a = 1, 3 do
        local q = math.abs(R[1][a] * d[1] + R[2][a] * d[2] + R[3][a] * d[3]) - half[a]
        outside = outside + math.max(q, 0) ^ 2
        inside = math.max(inside, q)
      end
      return inside > 0 and math.sqrt(outside) or inside
    end
    local on_box, deepest, lowest = 0, math.huge, math.huge
    for _, p in ipairs(ps) do
      local dist = box_distance(p.position)
      deepest = math.min(deepest, dist)
      lowest = math.min(lowest, p.position[2])
      if dist < 1.1 * r then on_box = on_box + 1 end
    end
    assert.is_true(on_box >= 40, string.format("only %d grains on the box", on_box))
    assert.is_true(deepest > 0.9 * r, string.format("a grain %.3g r from the box's surface", deepest / r))
    assert.is_true(lowest > 0.9 * r, string.format("a grain at height %.3g r", lowest / r))
  end)
end)

describe("sewn particles (particle:attach)", function()
  it("a cloth corner sewn to a swinging body follows its point within 1 mm, and the body carries the cloth", function()
    local w = impetus.world { gravity = { 0, -G, 0 } }
    w.integrator = "implicit"
    local crate = w:box { size = { 0.4, 0.4, 0.4 }, position = { 0, 2, 0 }, mass = 3, angular_velocity = { 0, 1, 0.5 } }
    w:joint { type = "point", a = crate, anchor = { 0, 2.6, 0 } }
    local cl = w:cloth { rows = 8, cols = 8, size = 0.8, position = { 0.6, 1.9, 0 }, normal = { 0, 1, 0 }, mass = 0.2, radius = 0.01 }
    local corner = cl:particle(1, 1)
    local local_point = sub(corner.position, crate.position)
    corner:attach(crate, corner.position)
    assert.are.equal(crate, corner.attached)
    local worst = 0
    for _ = 1, 240 do
      w:step(H)
      worst = math.max(worst, len(sub(corner.position, body_point(crate, local_point))))
    end
    assert.is_true(worst < 1e-3, string.format("the corner strayed %.3g m from its point", worst))
    local att = corner:attachment()
    assert.are.equal(crate, att.body)
    assert.is_true(att.impulse[2] < 0, "the cloth pulls the crate down")
  end)

  it("a crate hanging on a rope of particles: the fixed top holds the crate's weight and the rope's", function()
    local w = impetus.world { gravity = { 0, -G, 0 } }
    local n, seg = 10, 0.1
    local ps = {}
    for k = 0, n do ps[k] = w:particle { position = { 0, 3 - k * seg, 0 }, mass = 0.05, fixed = k == 0, radius = 0.02 } end
    for k = 1, n do w:rod(ps[k - 1], ps[k]) end
    local crate = w:box { size = { 0.3, 0.3, 0.3 }, position = { 0, 3 - n * seg - 0.15, 0 }, mass = 4, angular_damping = 0.5, linear_damping = 0.5 }
    ps[n]:attach(crate)
    for _ = 1, 600 do w:step(H) end
    helpers.near(crate.position[2], 3 - n * seg - 0.15, 2e-3, "the crate hangs where the rope ends")
    local att = ps[n]:attachment()
    helpers.near(att.impulse[2], 4 * G * H, 0.01 * 4 * G * H, "the rope's pull on the crate per step")
  end)

  -- a 4 kg head on the floor with eight strands of hair rooted on it (world:hair{body = head})
  local function hairy_head()
    local w = impetus.world { gravity = { 0, -G, 0 } }
    w.integrator = "implicit"
    w:plane { friction = 0.8, restitution = 0 }
    local head = w:sphere { radius = 0.12, mass = 4, position = { 0, 0.12, 0 }, friction = 0.8 }
    local roots = {}
    for k = 1, 8 do
      local a = 2 * math.pi * k / 8
      local root = { 0.1 * math.cos(a), 0.12 + 0.066, 0.1 * math.sin(a) }
      local strand = w:hair { root = root, direction = { math.cos(a), 0.2, math.sin(a) }, length = 0.08, segments = 6,
        mass = 0.01, body = head }
      roots[k] = { strand = strand, at = sub(root, head.position) }
    end
    return w, head, roots
  end

  it("hair rooted on a dynamic head that rolls: every root stays within 1 mm of its point on the head", function()
    local w, head, roots = hairy_head()
    head.velocity = { 0.5, 0, 0 }
    local worst = 0
    for _ = 1, 300 do
      w:step(H)
      for _, r in ipairs(roots) do
        worst = math.max(worst, len(sub(r.strand:particle(1).position, body_point(head, r.at))))
      end
    end
    assert.is_true(len(head.position) > 0.5, "the head rolled away")
    assert.is_true(worst < 1e-3, string.format("a root strayed %.3g m from its point on the head", worst))
  end)

  it("hair rooted on a dynamic head at rest: the floor carries (m_head + m_hair) g h within 1 %", function()
    local w, head = hairy_head()
    for _ = 1, 600 do w:step(H) end
    local m_hair = 0 -- the strands' particles, the hidden anchors behind the roots included
    for _, p in ipairs(w:particles()) do m_hair = m_hair + p.mass end
    helpers.near(impulse_on(w, head) / ((4 + m_hair) * G * H), 1, 0.01, "floor impulse / ((m_head + m_hair) g h)")
    assert.is_true(m_hair > 0.08, "the hair's mass is counted")
  end)

  it("refuse bad input with the function and argument named", function()
    local w = impetus.world {}
    local p = w:particle {}
    local b = w:box {}
    assert.matches("particle.restitution", err_of(function() p.restitution = 1.5 end))
    assert.matches("particle.friction", err_of(function() p.friction = -1 end))
    assert.matches("field 'restitution'", err_of(function() w:particle { restitution = -0.1 } end))
    assert.matches("field 'friction'", err_of(function() w:cloth { rows = 2, cols = 2, friction = 0 / 0 } end))
    assert.matches("world.particle_collisions", err_of(function() w.particle_collisions = 1 end))
    assert.matches("cloth.self_collision", err_of(function() w:cloth { rows = 2, cols = 2 }.self_collision = "yes" end))
    assert.matches("particle:attach", err_of(function() p:attach(b, { 1e300, 0, 0 }) end))
    assert.matches("Body expected", err_of(function() p:attach(w) end))
    local other = impetus.world {}
    assert.matches("another world", err_of(function() p:attach(other:box {}) end))
    b:destroy()
    assert.matches("stale", err_of(function() p:attach(b) end))
  end)
end)
