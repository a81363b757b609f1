-- Collision detection (S0 "Collision detection"): contact manifolds for every pair of shapes, S0's
-- contact cases, persistent contacts and events, broad phase against brute force, queries.
local impetus = require "impetus"
local helpers = require "helpers"
local quat = impetus.quat

local S2 = math.sqrt(2)

local function near_vec(v, e, tol, what)
  for k = 1, 3 do helpers.near(v[k], e[k], tol, string.format("%s[%d]", what, k)) end
end

local function zero_g() return impetus.world { gravity = { 0, 0, 0 } } end

-- the contacts of a world without stepping it
local function contacts(w)
  w:collide()
  return w:contacts()
end

local function only(w)
  local cs = contacts(w)
  assert.are.equal(1, #cs, "expected exactly one touching pair")
  return cs[1]
end

describe("contact manifolds", function()
  it("a cube on a plane gives its 4 bottom corners, normal out of the plane (S0)", function()
    for _, ground in ipairs { "collider", "body" } do
      local w = zero_g()
      local g = ground == "collider" and w:plane {} or w:body { static = true, shapes = { { type = "plane" } } }
      local b = w:box { size = { 1, 1, 1 }, position = { 2, 0.49, -1 } }
      local c = only(w)
      assert.are.equal(b, c.a)
      assert.are.equal(g, c.b)
      near_vec(c.normal, { 0, 1, 0 }, 1e-15, ground .. " normal")
      assert.are.equal(4, #c.points, ground .. ": 4 points")
      for _, p in ipairs(c.points) do
        helpers.near(p.depth, 0.01, 1e-12, "depth")
        helpers.near(p.point[2], -0.01, 1e-12, "points on the cube")
        helpers.near(math.abs(p.point[1] - 2), 0.5, 1e-12, "corner x")
      end
    end
  end)

  it("coincident faces are caught: a cube resting exactly on a cube or a plane touches with depth 0", function()
    local w = zero_g()
    w:box { static = true, size = { 2, 1, 2 }, position = { 0, -0.5, 0 } } -- a particle collider
    w:body { static = true, position = { 5, -0.5, 0 }, shapes = { { type = "box", size = { 2, 1, 2 } } } }
    w:box { size = { 1, 1, 1 }, position = { 0, 0.5, 0 } }
    w:box { size = { 1, 1, 1 }, position = { 5, 0.5, 0 } }
    local cs = contacts(w)
    assert.are.equal(2, #cs)
    for _, c in ipairs(cs) do
      near_vec(c.normal, { 0, 1, 0 }, 1e-12, "normal")
      assert.are.equal(4, #c.points)
      for _, p in ipairs(c.points) do helpers.near(p.depth, 0, 1e-12, "depth") end
    end
  end)

  it("box-box vertex/face: a corner pushed into a face gives one point at the corner", function()
    local w = zero_g()
    w:box { static = true, size = { 4, 1, 4 }, position = { 0, -0.5, 0 } }
    -- a unit cube balanced on a corner: the body diagonal (1,1,1) turned onto -y
    local axis = { 1, 0, -1 }
    local q = quat.from_axis_angle(axis, math.acos(-1 / math.sqrt(3)))
    local h = math.sqrt(3) / 2
    local b = w:box { size = { 1, 1, 1 }, orientation = q, position = { 0.3, h - 0.02, 0.1 } }
    local c = only(w)
    assert.are.equal(1, #c.points)
    near_vec(c.normal, { 0, 1, 0 }, 1e-9, "normal")
    near_vec(c.points[1].point, { 0.3, -0.02, 0.1 }, 1e-9, "the corner")
    helpers.near(c.points[1].depth, 0.02, 1e-9, "depth")
    assert.are.equal(b, c.a)
  end)

  it("box-box edge/edge: crossed edges give one point and n = ea x eb from B to A", function()
    local w = zero_g()
    local lower = w:box { size = { 1, 1, 1 }, orientation = quat.from_axis_angle({ 1, 0, 0 }, math.pi / 4) } -- top edge along x
    local upper = w:box { size = { 1, 1, 1 }, orientation = quat.from_axis_angle({ 0, 0, 1 }, math.pi / 4),
      position = { 0, S2 - 0.02, 0 } } -- bottom edge along z
    local c = only(w)
    assert.are.equal(1, #c.points)
    helpers.near(c.points[1].depth, 0.02, 1e-9, "depth")
    near_vec(c.points[1].point, { 0, c.a == upper and S2 / 2 - 0.02 or S2 / 2, 0 }, 1e-9, "point on A's edge")
    -- normal from B towards A, whichever the pair order is
    local up = c.a == upper and 1 or -1
    assert.are.equal(c.a == upper and lower or upper, c.b)
    near_vec(c.normal, { 0, up, 0 }, 1e-9, "normal")
    -- the edges: along z on the upper box, x on the lower, with ea x eb = n (S0, GUIDE trap 2)
    local ea, eb = c.edges.a, c.edges.b
    local ez = c.a == upper and ea or eb
    local ex = c.a == upper and eb or ea
    helpers.near(math.abs(ez[3]), 1, 1e-9, "upper edge along z")
    helpers.near(math.abs(ex[1]), 1, 1e-9, "lower edge along x")
    near_vec({ ea[2] * eb[3] - ea[3] * eb[2], ea[3] * eb[1] - ea[1] * eb[3], ea[1] * eb[2] - ea[2] * eb[1] }, c.normal, 1e-9, "ea x eb")
  end)

  it("a box lying on a box face gets its overlap polygon's corners", function()
    local w = zero_g()
    w:box { static = true, size = { 1, 1, 1 }, position = { 0, -0.5, 0 } }
    w:box { size = { 1, 1, 1 }, position = { 0.5, 0.49, 0.5 }, orientation = quat.from_axis_angle({ 0, 1, 0 }, 0.0) }
    local c = only(w)
    assert.are.equal(4, #c.points) -- the quarter square [0, .5] x [0, .5]
    for _, p in ipairs(c.points) do
      assert.is_true(p.point[1] >= -1e-12 and p.point[1] <= 0.5 + 1e-12 and p.point[3] >= -1e-12 and p.point[3] <= 0.5 + 1e-12)
      helpers.near(p.depth, 0.01, 1e-12, "depth")
    end
  end)

  it("spheres: one point on A, normal along the centres from B to A", function()
    local w = zero_g()
    local a = w:sphere { radius = 0.5, position = { 0, 0.9, 0 } }
    local b = w:sphere { radius = 0.5, position = { 0, 0, 0 } }
    local c = only(w)
    local sign = c.a == a and 1 or -1
    near_vec(c.normal, { 0, sign, 0 }, 1e-15, "normal")
    helpers.near(c.points[1].depth, 0.1, 1e-12, "depth")
    near_vec(c.points[1].point, { 0, sign > 0 and 0.4 or 0.5, 0 }, 1e-12, "point on A")
    assert.is_true(c.b == (sign > 0 and b or a))
  end)

  it("sphere-box on a face, an edge and inside", function()
    local w = zero_g()
    w:box { static = true, size = { 2, 2, 2 } }
    local s = w:sphere { radius = 0.5, position = { 0, 1.4, 0 } }
    local c = only(w)
    near_vec(c.normal, { 0, 1, 0 }, 1e-12, "face normal")
    helpers.near(c.points[1].depth, 0.1, 1e-12, "face depth")
    s.position = { 1.3, 1.3, 0 } -- near the edge x = y = 1
    c = only(w)
    near_vec(c.normal, { 1 / S2, 1 / S2, 0 }, 1e-12, "edge normal")
    helpers.near(c.points[1].depth, 0.5 - 0.3 * S2, 1e-12, "edge depth")
    s.position = { 0, 0.8, 0 } -- centre inside
    c = only(w)
    near_vec(c.normal, { 0, 1, 0 }, 1e-12, "inside normal")
    helpers.near(c.points[1].depth, 0.7, 1e-12, "inside depth")
    s.position = { 1.4, 1.4, 0 }
    assert.are.equal(0, #contacts(w), "apart near the edge (SAT alone would say touching)")
  end)

  it("a capsule deep in a box: the face or the edge it penetrates least, points on the part inside", function()
    local w = zero_g()
    w:box { static = true, size = { 2, 2, 2 } }
    local cap = w:capsule { radius = 0.1, length = 4, orientation = quat.from_axis_angle({ 1, 0, 0 }, math.pi / 2), position = { 0.9, 0.7, 0 } }
    local c = only(w)
    near_vec(c.normal, { 1, 0, 0 }, 1e-12, "face normal")
    assert.are.equal(2, #c.points)
    for _, p in ipairs(c.points) do
      helpers.near(p.depth, 0.2, 1e-12, "depth")
      helpers.near(math.abs(p.point[3]), 1, 1e-12, "the ends of the part inside the box")
    end
    -- across the edge x = y = 1: the axis seg x edge = (1, 1, 0)/sqrt 2 penetrates least
    cap.orientation = quat.from_axis_angle({ 0, 0, 1 }, math.pi / 4) -- core along (-1, 1, 0)/sqrt 2
    cap.position = { 0.95, 0.95, 0 }
    c = only(w)
    near_vec(c.normal, { 1 / S2, 1 / S2, 0 }, 1e-12, "edge normal")
    assert.are.equal(1, #c.points)
    helpers.near(c.points[1].depth, S2 - (1.9 / S2 - 0.1), 1e-12, "depth along the diagonal")
    near_vec(c.points[1].point, { 0.95 - 0.1 / S2, 0.95 - 0.1 / S2, 0 }, 1e-12, "point on the capsule")
  end)

  it("capsules lying flat rest on two points: on a plane, on a box, on a capsule", function()
    local w = zero_g()
    w:plane {}
    local flat = quat.from_axis_angle({ 0, 0, 1 }, math.pi / 2)
    w:capsule { radius = 0.25, length = 2, orientation = flat, position = { 0, 0.24, 0 } }
    local c = only(w)
    assert.are.equal(2, #c.points)
    near_vec(c.normal, { 0, 1, 0 }, 1e-12, "plane normal")
    local w2 = zero_g()
    w2:box { static = true, size = { 4, 1, 4 }, position = { 0, -0.5, 0 } }
    w2:capsule { radius = 0.25, length = 2, orientation = flat, position = { 0, 0.24, 0 } }
    c = only(w2)
    assert.are.equal(2, #c.points)
    near_vec(c.normal, { 0, 1, 0 }, 1e-12, "box normal")
    for _, p in ipairs(c.points) do helpers.near(p.depth, 0.01, 1e-12, "depth") end
    local w3 = zero_g()
    w3:capsule { radius = 0.25, length = 2, orientation = flat, position = { 0, 0, 0 }, static = true }
    w3:capsule { radius = 0.25, length = 2, orientation = flat, position = { 0.5, 0.49, 0 } }
    c = only(w3)
    assert.are.equal(2, #c.points)
    near_vec(c.normal, { 0, 1, 0 }, 1e-12, "capsule normal")
  end)

  it("hulls touch planes, boxes and hulls", function()
    local w = zero_g()
    w:plane {}
    local tet = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }
    -- a tetrahedron standing on its vertex, 0.05 below the plane
    w:hull { points = tet, position = { 0, -0.05, 0 }, orientation = quat.from_axis_angle({ 1, 0, -1 }, -math.acos(1 / math.sqrt(3))) }
    local c = only(w)
    assert.are.equal(1, #c.points)
    helpers.near(c.points[1].depth, 0.05, 1e-12, "vertex depth")
    local w2 = zero_g()
    local box_pts = {}
    for _, x in ipairs { -0.5, 0.5 } do for _, y in ipairs { -0.5, 0.5 } do for _, z in ipairs { -0.5, 0.5 } do box_pts[#box_pts + 1] = { x, y, z } end end end
    w2:hull { points = box_pts, static = true }
    w2:hull { points = box_pts, position = { 0.2, 0.97, 0 } }
    c = only(w2)
    assert.are.equal(4, #c.points)
    near_vec(c.normal, { 0, 1, 0 }, 1e-12, "hull-hull normal")
    for _, p in ipairs(c.points) do helpers.near(p.depth, 0.03, 1e-12, "depth") end
    w2:box { size = { 1, 1, 1 }, position = { 0.97, 0, 0 } }
    local n = 0
    for _, cc in ipairs(contacts(w2)) do if #cc.points == 4 and math.abs(math.abs(cc.normal[1]) - 1) < 1e-12 then n = n + 1 end end
    assert.are.equal(1, n, "box against the hull's side face")
  end)

  it("a static triangle mesh holds a box on 4 points and a sphere on 1", function()
    local w = zero_g()
    w:mesh { vertices = { { -5, 0, -5 }, { 5, 0, -5 }, { 5, 0, 5 }, { -5, 0, 5 } }, triangles = { { 1, 3, 2 }, { 1, 4, 3 } } }
    w:box { size = { 1, 1, 1 }, position = { 0.3, 0.48, 0.2 } }
    w:sphere { radius = 0.5, position = { 3, 0.45, 3 } }
    local cs = contacts(w)
    assert.are.equal(2, #cs)
    for _, c in ipairs(cs) do
      near_vec(c.normal, { 0, 1, 0 }, 1e-12, "normal out of the mesh")
      local box = c.a.shape_count and #c.points > 1
      if box then
        assert.are.equal(4, #c.points)
        for _, p in ipairs(c.points) do helpers.near(p.depth, 0.02, 1e-12, "box depth") end
      else
        helpers.near(c.points[1].depth, 0.05, 1e-12, "sphere depth")
      end
    end
  end)
end)

describe("hull pairs on the vector path", function()
  it("find the same contacts to the last bit as on the scalar path (IMPETUS_SIMD=0)", function()
    -- 64 hulls of 24 random points packed so that neighbours overlap: the face bounds, the projections
    -- and the Gauss-map arcs run as vector code where AVX is there
    local script = [[
      local impetus = require "impetus"
      math.randomseed(7)
      local w = impetus.world { gravity = { 0, 0, 0 } }
      w.contact = "none"
      for l = 0, 3 do
        for i = 0, 3 do
          for k = 0, 3 do
            local pts = {}
            for p = 1, 24 do
              local t, ph = math.random() * 2 * math.pi, math.acos(2 * math.random() - 1)
              pts[p] = { 0.55 * math.sin(ph) * math.cos(t), 0.55 * math.cos(ph), 0.55 * math.sin(ph) * math.sin(t) }
            end
            w:hull { points = pts, position = { i * 0.95, l * 0.95, k * 0.95 },
              orientation = impetus.quat.from_axis_angle({ math.random(), math.random(), math.random() }, math.random()),
              angular_velocity = { math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 } }
          end
        end
      end
      local out = {}
      for _ = 1, 20 do
        w:step(1 / 60)
        for _, c in ipairs(w:contacts()) do
          local n = c.normal
          out[#out + 1] = string.format("%d %a %a %a", #c.points, n[1], n[2], n[3])
          for _, p in ipairs(c.points) do out[#out + 1] = string.format("%a %a %a %a", p.point[1], p.point[2], p.point[3], p.depth) end
        end
      end
      return table.concat(out, "\n")
    ]]
    local here = load(script)()
    local out, code = helpers.run_elsewhere(script, "IMPETUS_SIMD=0")
    assert.are.equal(0, code, out)
    assert.is_true(#here > 1000, "the pile has contacts to compare")
    assert.is_true(out == here, "the vector and the scalar paths disagree")
  end)
end)

describe("large meshes", function()
  it("find their triangles anywhere through the hierarchy (a 100 x 100 grid of 20,000 triangles)", function()
    local w = zero_g()
    local verts, tris, n = {}, {}, 100
    for i = 0, n do for k = 0, n do verts[#verts + 1] = { i * 0.5 - 25, 0, k * 0.5 - 25 } end end
    for i = 0, n - 1 do
      for k = 0, n - 1 do
        local a, b, c, d = i * (n + 1) + k + 1, (i + 1) * (n + 1) + k + 1, (i + 1) * (n + 1) + k + 2, i * (n + 1) + k + 2
        tris[#tris + 1] = { a, d, c }
        tris[#tris + 1] = { a, c, b }
      end
    end
    local ground = w:mesh { vertices = verts, triangles = tris }
    math.randomseed(9)
    local balls = {}
    for i = 1, 50 do
      balls[i] = w:sphere { radius = 0.5, position = { math.random() * 48 - 24, 0.4 + (i % 2) * 0.2, math.random() * 48 - 24 } }
    end
    local cs = {}
    for _, c in ipairs(contacts(w)) do if c.b == ground then cs[#cs + 1] = c end end -- (balls may touch balls)
    assert.are.equal(25, #cs, "the low half touches")
    for _, c in ipairs(cs) do
      near_vec(c.normal, { 0, 1, 0 }, 1e-12, "normal")
      assert.are.equal(1, #c.points)
      helpers.near(c.points[1].depth, 0.1, 1e-12, "depth")
    end
  end)
end)

describe("persistent contacts and events", function()
  it("a falling sphere begins touching the ground, keeps its point id while it rests, and ends when lifted", function()
    local w = impetus.world { gravity = { 0, -1, 0 } }
    w.sleeping = false
    local ground = w:body { static = true, position = { 0, -0.05, 0 }, shapes = { { type = "box", size = { 10, 0.1, 10 } } } }
    local s = w:sphere { radius = 0.5, position = { 0, 0.6, 0 } }
    local began, ended, ids = nil, nil, {}
    for i = 1, 240 do
      if i == 200 then s.position = { 0, 2, 0 } end -- lifted by hand: the pair ends
      w:step(1 / 60)
      local ev = w:contact_events()
      if #ev.begin > 0 then
        began = i
        assert.are.equal(s, ev.begin[1].a)
        assert.are.equal(ground, ev.begin[1].b)
        helpers.near(s.position[2], 0.5, 0.02, "begins as the sphere reaches the plane")
      end
      if #ev["end"] > 0 then ended = i end
      local cs = w:contacts()
      if #cs == 1 and cs[1].normal[2] > 0 then ids[#ids + 1] = cs[1].points[1].id end
    end
    assert.is_truthy(began)
    assert.are.equal(200, ended)
    assert.is_true(#ids > 100)
    for k = 2, #ids do assert.are.equal(ids[1], ids[k], "the point keeps its id") end
  end)

  it("a box sliding slowly on a box keeps an exact manifold: its corners, the overlap at each", function()
    -- step after step of a slow slide the depth is the overlap at each point and the points are the
    -- corners of the smaller face (the incident face's, or where the larger face's edges cross the
    -- smaller's sides). The box starts 4 mm deep: the split impulses lift it to the 2 mm slop in steps
    -- that shrink.
    for _, case in ipairs { { "a small box on a large one", { 4, 1, 4 }, { 1, 1, 1 }, 1e-9 },
                            { "a large box on a small one", { 1, 1, 1 }, { 2, 1, 2 }, 1e-9 } } do
      local what, ground_size, size, tol = case[1], case[2], case[3], case[4]
      local w = impetus.world {}
      w.sleeping = false
      w:box { static = true, size = ground_size, position = { 0, -0.5, 0 }, friction = 0 }
      local b = w:box { size = size, position = { 0, 0.496, 0 }, orientation = quat.from_axis_angle({ 0, 1, 0 }, 0.3),
        velocity = { 0.003, 0, 0.001 }, friction = 0 }
      local small = ground_size[1] > size[1]
      local lift = b.position[2]
      for step = 1, 240 do
        w:step(1 / 60)
        local cs = w:contacts()
        assert.are.equal(1, #cs, what)
        local c, x, q = cs[1], b.position, b.orientation
        near_vec(c.normal, { 0, 1, 0 }, 1e-12, what .. ": normal")
        -- the corners of the face on top of the smaller box: the sliding box's bottom, or the ground's top
        local corners = {}
        for _, s in ipairs { { 1, 1 }, { 1, -1 }, { -1, 1 }, { -1, -1 } } do
          if small then
            local r = quat.rotate(q, { size[1] / 2 * s[1], -0.5, size[3] / 2 * s[2] })
            corners[#corners + 1] = { x[1] + r[1], x[3] + r[3] }
          else corners[#corners + 1] = { 0.5 * s[1], 0.5 * s[2] } end
        end
        assert.are.equal(4, #c.points, what)
        for _, p in ipairs(c.points) do
          local best = math.huge
          for _, k in ipairs(corners) do best = math.min(best, math.sqrt((k[1] - p.point[1]) ^ 2 + (k[2] - p.point[3]) ^ 2)) end
          assert.is_true(best < tol, string.format("%s, step %d: a point %.3g m from its corner", what, step, best))
          -- on the plane of the box's bottom face, and the ground's top (y = 0) depth above it
          local down, c0 = quat.rotate(q, { 0, -1, 0 }), quat.rotate(q, { 0, -0.5, 0 })
          local off = 0
          for k = 1, 3 do off = off + down[k] * (p.point[k] - x[k] - c0[k]) end
          helpers.near(off, 0, 1e-12, what .. ": the point on the box's face")
          helpers.near(p.depth, -p.point[2], 1e-12, what .. ": depth")
        end
      end
      helpers.near(b.position[2] - lift, 0.002, 1e-6, what .. ": lifted to the slop")
      helpers.near(b.position[1], 0.012, 1e-9, what .. ": slides freely")
    end
  end)

  it("end events report pairs whose body was destroyed", function()
    local w = zero_g()
    w:plane {}
    local b = w:box { size = { 1, 1, 1 }, position = { 0, 0.4, 0 } }
    w:step(1 / 60)
    assert.are.equal(1, #w:contact_events().begin)
    b:destroy()
    w:step(1 / 60)
    assert.are.equal(1, #w:contact_events()["end"])
    assert.are.equal(0, #w:contacts())
  end)
end)

describe("broad phase", function()
  local function random_world(seed, n, kind)
    math.randomseed(seed)
    local w = zero_g()
    w.broadphase = kind
    local tet = { { 0, 0, 0 }, { 0.6, 0, 0 }, { 0, 0.6, 0 }, { 0, 0, 0.6 } }
    for i = 1, n do
      local p = { math.random() * 10, math.random() * 10, math.random() * 10 }
      local q = quat.from_axis_angle({ math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 + 1e-3 }, math.random() * 6)
      local v = { math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }
      local k = i % 5
      if k == 0 then w:box { size = { 0.3 + math.random(), 0.3 + math.random(), 0.3 + math.random() }, position = p, orientation = q, velocity = v }
      elseif k == 1 then w:sphere { radius = 0.2 + 0.5 * math.random(), position = p, velocity = v }
      elseif k == 2 then w:capsule { radius = 0.2, length = math.random() * 2, position = p, orientation = q, velocity = v }
      elseif k == 3 then w:hull { points = tet, position = p, orientation = q, velocity = v }
      else w:body { static = i % 2 == 0, position = p, shapes = { { type = "box", size = { 2, 0.3, 2 } } } } end
    end
    return w
  end

  local function brute(w)
    local bodies, set = w:bodies(), {}
    local box = {}
    for i, b in ipairs(bodies) do
      local lo, hi = b:aabb()
      box[i] = { lo, hi }
    end
    for i = 1, #bodies do
      for j = i + 1, #bodies do
        local a, b = bodies[i], bodies[j]
        local over = true
        for k = 1, 3 do
          if box[i][1][k] > box[j][2][k] or box[j][1][k] > box[i][2][k] then over = false end
        end
        if over and not (a.static and b.static) then set[math.min(a.id, b.id) .. ":" .. math.max(a.id, b.id)] = true end
      end
    end
    return set
  end

  local function pairs_of(w)
    local set, n = {}, 0
    for _, p in ipairs(w:pairs()) do
      local k = math.min(p.a.id, p.b.id) .. ":" .. math.max(p.a.id, p.b.id)
      assert.is_nil(set[k], "pair reported twice: " .. k)
      set[k] = true
      n = n + 1
    end
    return set, n
  end

  for _, kind in ipairs { "sap", "grid", "sweep" } do
    it(kind .. " finds exactly the brute-force pairs on random moving worlds", function()
      for seed = 1, 4 do
        local w = random_world(seed, 300, kind)
        for step = 1, 6 do
          if step >= 3 then
            -- bodies come and go between steps: the incremental structures follow
            local bodies = w:bodies()
            for _ = 1, 15 do
              local b = bodies[math.random(#bodies)]
              if b:valid() then b:destroy() end
            end
            for _ = 1, 10 do
              w:box { size = { 0.5 + math.random(), 0.5, 0.8 }, position = { math.random() * 10, math.random() * 10, math.random() * 10 } }
            end
          end
          w:step(0.2)
          local got, n = pairs_of(w)
          local want = brute(w)
          local m = 0
          for k in pairs(want) do
            m = m + 1
            assert.is_true(got[k], string.format("seed %d step %d: missed pair %s", seed, step, k))
          end
          assert.are.equal(m, n, string.format("seed %d step %d: pair count", seed, step))
          assert.is_true(m > 20, "the world should be crowded enough to test something")
        end
      end
    end)
  end

  it("filters by group and mask", function()
    local w = zero_g()
    local a = w:sphere { radius = 1, group = 1, mask = 2 }
    local b = w:sphere { radius = 1, position = { 0.5, 0, 0 }, group = 1, mask = 2 }
    local c = w:sphere { radius = 1, position = { 1, 0, 0 }, group = 2, mask = 1 }
    w:collide()
    local seen = {}
    for _, p in ipairs(w:pairs()) do seen[p.a.id + p.b.id] = true end
    assert.is_nil(seen[a.id + b.id], "a and b share no bits")
    assert.are.equal(2, #w:pairs(), "a-c and b-c")
    c.mask = 0
    w:collide()
    assert.are.equal(0, #w:pairs())
  end)

  it("pairs only shapes that can move each other: never static or kinematic ones among themselves", function()
    local w = zero_g()
    w:plane {}
    w:box { static = true, size = { 4, 1, 4 } }
    local k = w:box { kinematic = true, size = { 1, 1, 1 }, position = { 0, 0.3, 0 } }
    w:body { static = true, position = { 0.2, 0, 0 }, shapes = { { type = "box", size = { 1, 1, 1 } } } }
    w:collide()
    assert.are.equal(0, #w:pairs(), "kinematic against static, collider and plane")
    local d = w:sphere { radius = 0.5, position = { 0, 0.5, 0 } }
    w:collide()
    assert.are.equal(4, #w:pairs(), "the dynamic sphere against all four")
    for _, p in ipairs(w:pairs()) do assert.is_true(p.a == d or p.b == d) end
    assert.is_truthy(k)
  end)
end)

describe("queries", function()
  it("raycasts hit spheres, boxes, capsules, hulls, planes and meshes where geometry says", function()
    local w = zero_g()
    local s = w:sphere { radius = 1, position = { 0, 0, 0 } }
    local hit = w:raycast({ -5, 0.5, 0 }, { 5, 0.5, 0 })
    assert.are.equal(s, hit.body)
    assert.are.equal(1, hit.shape)
    local x = -math.sqrt(1 - 0.25)
    near_vec(hit.point, { x, 0.5, 0 }, 1e-12, "sphere point")
    near_vec(hit.normal, { x, 0.5, 0 }, 1e-12, "sphere normal")
    helpers.near(hit.fraction, (x + 5) / 10, 1e-12, "fraction")
    s:destroy()
    local b = w:box { size = { 2, 2, 2 }, orientation = quat.from_axis_angle({ 0, 0, 1 }, math.pi / 4) }
    hit = w:raycast({ -5, 0, 0 }, { 5, 0, 0 })
    assert.are.equal(b, hit.body)
    near_vec(hit.point, { -S2, 0, 0 }, 1e-12, "box corner")
    b:destroy()
    local c = w:capsule { radius = 0.5, length = 2 }
    hit = w:raycast({ 0, 5, 0 }, { 0, -5, 0 })
    near_vec(hit.point, { 0, 1.5, 0 }, 1e-12, "capsule cap")
    hit = w:raycast({ 5, 0.3, 0 }, { -5, 0.3, 0 })
    near_vec(hit.point, { 0.5, 0.3, 0 }, 1e-12, "capsule side")
    near_vec(hit.normal, { 1, 0, 0 }, 1e-12, "capsule normal")
    c:destroy()
    w:hull { points = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } } }
    hit = w:raycast({ 1, 1, 1 }, { 0, 0, 0 })
    near_vec(hit.point, { 1 / 3, 1 / 3, 1 / 3 }, 1e-12, "tetrahedron face")
    near_vec(hit.normal, { 1 / math.sqrt(3), 1 / math.sqrt(3), 1 / math.sqrt(3) }, 1e-12, "its normal")
    local g = w:plane { point = { 0, -2, 0 } }
    hit = w:raycast({ 3, 0, 0 }, { 3, -10, 0 })
    assert.are.equal(g, hit.collider)
    helpers.near(hit.fraction, 0.2, 1e-12, "plane fraction")
    w:mesh { vertices = { { 2, -1, -1 }, { 4, -1, -1 }, { 3, -1, 1 } }, triangles = { { 1, 2, 3 } } }
    hit = w:raycast({ 3, 0, 0 }, { 3, -10, 0 })
    near_vec(hit.point, { 3, -1, 0 }, 1e-12, "mesh point")
    near_vec(hit.normal, { 0, 1, 0 }, 1e-12, "mesh normal faces the ray")
    assert.is_nil(w:raycast({ 10, 10, 10 }, { 20, 10, 10 }))
  end)

  it("raycasts hit a hull of hundreds of faces where its sphere would be", function()
    local w = zero_g()
    local pts = {}
    math.randomseed(2)
    for i = 1, 600 do
      local t, p = math.random() * 2 * math.pi, math.acos(2 * math.random() - 1)
      pts[i] = { math.sin(p) * math.cos(t), math.cos(p), math.sin(p) * math.sin(t) }
    end
    local h = w:hull { points = pts, position = { 0, 3, 0 } }
    assert.is_true(h:shapes()[1].face_count > 300)
    local hit = w:raycast({ -5, 3, 0 }, { 5, 3, 0 })
    assert.are.equal(h, hit.body)
    helpers.near(hit.point[1], -1, 0.05, "hit on the sphere")
    helpers.near(hit.normal[1], -1, 0.2, "normal")
  end)

  it("point queries and shape overlaps name the shapes", function()
    local w = zero_g()
    local a = w:box { size = { 2, 2, 2 } }
    local b = w:sphere { radius = 1, position = { 3, 0, 0 } }
    local c = w:body { position = { 0, 5, 0 }, shapes = { { type = "sphere", radius = 0.5 }, { type = "capsule", radius = 0.3, length = 1, position = { 2, 0, 0 } } } }
    local r = w:query_point({ 0.9, 0.9, 0.9 })
    assert.are.equal(1, #r)
    assert.are.equal(a, r[1].body)
    r = w:query_point({ 2, 5.6, 0 })
    assert.are.equal(c, r[1].body)
    assert.are.equal(2, r[1].shape)
    assert.are.equal(0, #w:query_point({ 1.5, 0, 0 }))
    r = w:overlap({ type = "box", size = { 1, 1, 1 } }, { 1.5, 0, 0 })
    assert.are.equal(2, #r)
    r = w:overlap({ type = "sphere", radius = 0.2 }, { 1.5, 0, 0 })
    assert.are.equal(0, #r)
    r = w:overlap({ type = "capsule", radius = 0.1, length = 4 }, { 1, 5, 0 }, quat.from_axis_angle({ 0, 0, 1 }, math.pi / 2))
    assert.are.equal(2, #r) -- both shapes of c
    assert.are.equal(c, r[1].body)
    assert.are.equal(c, r[2].body)
    assert.has_error(function() w:overlap({ type = "cone" }, { 0, 0, 0 }) end)
  end)
end)

describe("every pair of shapes", function()
  local tet = { { -0.5, -0.4, -0.5 }, { 0.6, -0.4, -0.4 }, { 0, -0.4, 0.6 }, { 0.05, 0.6, 0 } }
  local makers = {
    sphere = function(w, p, q, st) return w:body { position = p, orientation = q, static = st, shapes = { { type = "sphere", radius = 0.5 } } } end,
    capsule = function(w, p, q, st)
      return w:body { position = p, orientation = q, static = st, shapes = { { type = "capsule", radius = 0.3, length = 0.6 } } }
    end,
    box = function(w, p, q, st)
      return w:body { position = p, orientation = q, static = st, shapes = { { type = "box", size = { 1, 0.9, 0.8 } } } }
    end,
    hull = function(w, p, q, st) return w:body { position = p, orientation = q, static = st, shapes = { { type = "hull", points = tet } } } end,
    mesh = function(w, p, q)
      return w:mesh { position = p, orientation = q, vertices = { { -3, 0, -3 }, { 3, 0, -3 }, { 3, 0, 3 }, { -3, 0, 3 } },
        triangles = { { 1, 3, 2 }, { 1, 4, 3 } } }
    end,
    plane = function(w, p, q) return w:body { static = true, position = p, orientation = q, shapes = { { type = "plane" } } } end,
  }
  local kinds = { "sphere", "capsule", "box", "hull", "mesh", "plane" }

  it("touch when overlapping with the normal from B to A and positive depth, and not when apart", function()
    math.randomseed(5)
    for _, ka in ipairs(kinds) do
      for _, kb in ipairs(kinds) do
        if ka ~= "mesh" and ka ~= "plane" then
          for trial = 1, 12 do
            local w = zero_g()
            local qa = quat.from_axis_angle({ math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }, math.random() * 6)
            local static_b = kb == "mesh" or kb == "plane" or trial % 2 == 0
            local qb = (kb == "mesh" or kb == "plane") and quat.from_axis_angle({ 0, 1, 0 }, math.random() * 6)
              or quat.from_axis_angle({ math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }, math.random() * 6)
            local b = makers[kb](w, { 0, 0, 0 }, qb, static_b)
            -- A above B: bisect for the height where they start to touch
            local a = makers[ka](w, { 0.2 * (math.random() - 0.5), 2.5, 0.2 * (math.random() - 0.5) }, qa, false)
            local function at(y)
              a.position = { a.position[1], y, a.position[3] }
              return contacts(w)
            end
            local what = ka .. " on " .. kb .. " #" .. trial
            local lo, hi = kb == "mesh" and 0.02 or -0.2, 2.5 -- a mesh is one-sided: A stays above it
            assert.is_true(#at(lo) > 0, what .. ": overlapping but not touching")
            assert.are.equal(0, #at(hi), what .. ": apart but touching")
            for _ = 1, 24 do
              local mid = 0.5 * (lo + hi)
              if #at(mid) > 0 then lo = mid else hi = mid end
            end
            local c = at(lo)[1]
            assert.is_true(c.a == a or c.b == a, what)
            local up = c.a == a and 1 or -1
            -- A is above B: the normal from B to A points up
            assert.is_true(up * c.normal[2] > 0, what .. string.format(": normal (%.3f, %.3f, %.3f)", c.normal[1], c.normal[2], c.normal[3]))
            helpers.near(c.normal[1] ^ 2 + c.normal[2] ^ 2 + c.normal[3] ^ 2, 1, 1e-9, what .. " |n|")
            -- the deepest point just touches (shapes within 0.1 mm count as touching: round-off in
            -- positions built exactly touching, or a solver's micrometres, must not part them); face
            -- manifolds also keep corners up to 5 mm above the face (negative depth) so that a resting
            -- box keeps its 4 points
            local top = -1
            for _, p in ipairs(c.points) do
              top = math.max(top, p.depth)
              assert.is_true(p.depth >= -0.005 - 1e-12 and p.depth < 1e-3, what .. ": depth at first touch " .. p.depth)
            end
            assert.is_true(top >= -1e-4 - 1e-12 and top <= 1e-6, what .. ": deepest point at first touch " .. top)
            -- 2 cm deeper: a penetration of at most a few cm along the normal
            c = at(lo - 0.02)[1]
            local deepest = 0
            for _, p in ipairs(c.points) do deepest = math.max(deepest, p.depth) end
            assert.is_true(deepest > 0 and deepest <= 0.02 + 1e-6, what .. ": depth 2 cm down " .. deepest)
          end
        end
      end
    end
  end)
end)
