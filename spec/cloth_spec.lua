-- Cloth and hair (S3 slides "Cloth and fur energy functions"): building them, their rest state,
-- a hanging cloth against the continuum, draping on colliders, and hair that converges to the
-- Euler-Bernoulli cantilever as its segments are refined.
local impetus = require "impetus"
local helpers = require "helpers"

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

describe("world:cloth", function()
  it("builds a grid where it was asked, with its mass and pins", function()
    local w = impetus.world {}
    local cl = w:cloth { rows = 5, cols = 7, width = 1.2, height = 0.8, position = { 1, 2, 3 }, normal = { 0, 0, 1 },
      mass = 0.35, pin = "top" }
    assert.are.equal(35, w.particle_count)
    assert.are.equal(5, cl.rows)
    assert.are.equal(7, cl.cols)
    assert.are.equal(35, cl.vertex_count)
    -- row 1 is the +v edge ("top"; up for a cloth facing +z), column 1 the -u edge ("left")
    assert.are.same({ 0.4, 2.4, 3 }, cl:particle(1, 1).position)
    local br = cl:particle(5, 7).position
    helpers.near(br[1], 1.6, 1e-12, "x")
    helpers.near(br[2], 1.6, 1e-12, "y")
    local m, pinned = 0, 0
    for _, p in ipairs(cl:particles()) do
      m = m + p.mass
      if p.fixed then pinned = pinned + 1 end
    end
    helpers.near(m, 0.35, 1e-12, "total mass")
    assert.are.equal(7, pinned)
    assert.is_true(cl:particle(1, 4).fixed and not cl:particle(2, 4).fixed)
    helpers.near(cl:energy(), 0, 1e-15, "rest energy")
  end)

  it("builds a mesh from vertices and triangles, and knows its rest shape", function()
    local w = impetus.world { gravity = { 0, 0, 0 }, integrator = "implicit" }
    -- a bent strip: its rest dihedral angles are not zero, and it stays as it was made
    local verts, tris = {}, {}
    for i = 0, 6 do
      local a = i * 0.4
      verts[#verts + 1] = { math.cos(a), math.sin(a), 0 }
      verts[#verts + 1] = { math.cos(a), math.sin(a), 0.5 }
    end
    for i = 0, 5 do
      local v = 2 * i + 1
      tris[#tris + 1] = { v, v + 2, v + 1 }
      tris[#tris + 1] = { v + 1, v + 2, v + 3 }
    end
    local cl = w:cloth { vertices = verts, triangles = tris, pin = { 1 }, bend = 0.1 }
    assert.are.equal(14, cl.vertex_count)
    assert.is_true(cl:particle(1).fixed)
    helpers.near(cl:energy(), 0, 1e-12, "rest energy")
    for _ = 1, 30 do w:step(1 / 60) end
    for k, p in ipairs(cl:particles()) do
      assert.is_true(dist(p.position, verts[k]) < 1e-9, "vertex " .. k .. " moved")
    end
  end)

  it("refuses bad definitions with clear errors", function()
    local w = impetus.world {}
    assert.matches("unknown field 'colour'", err_of(function() w:cloth { colour = { 1, 0, 0 } } end))
    assert.matches("'rows' must be an integer in 2..512", err_of(function() w:cloth { rows = 1 } end))
    assert.matches("'stretch' must be >= 0", err_of(function() w:cloth { stretch = -1 } end))
    assert.matches("pin", err_of(function() w:cloth { pin = "bottom" } end))
    assert.matches("pin%[1%] must be {row, col}", err_of(function() w:cloth { rows = 3, cols = 3, pin = { { 4, 1 } } } end))
    local v = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 } }
    assert.matches("triangles%[1%]%[3%] must be a vertex number in 1..3",
      err_of(function() w:cloth { vertices = v, triangles = { { 1, 2, 4 } } } end))
    assert.matches("repeats a vertex", err_of(function() w:cloth { vertices = v, triangles = { { 1, 2, 2 } } } end))
    assert.matches("no area", err_of(function()
      w:cloth { vertices = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } }, triangles = { { 1, 2, 3 } } }
    end))
    assert.matches("'rows' is for grids", err_of(function() w:cloth { vertices = v, triangles = { { 1, 2, 3 } }, rows = 3 } end))
    local cl = w:cloth { rows = 3, cols = 3 }
    assert.matches("row must be in 1..3", err_of(function() cl:particle(4, 1) end))
    assert.matches("vertex must be in 1..9", err_of(function() cl:particle(10) end))
    assert.matches("locked", err_of(function()
      w:field(function() w:cloth {} return 0, 0, 0 end)
      w:step(1 / 60)
    end))
    assert.are.equal(9, w.particle_count) -- nothing was half made
  end)

  it("is destroyed with its particles, or loses only what a destroyed particle held", function()
    local w = impetus.world { integrator = "implicit" }
    local a = w:cloth { rows = 4, cols = 4 }
    local b = w:cloth { rows = 3, cols = 3, position = { 0, 4, 0 } }
    local hole = b:particle(2, 2)
    hole:destroy()
    assert.is_nil(b:particle(2, 2))
    assert.is_false(b:particles()[5])
    for _ = 1, 10 do w:step(1 / 60) end -- the world steps on with a hole in the cloth
    a:destroy()
    assert.is_false(a:valid())
    assert.are.equal(8, w.particle_count)
    assert.matches("stale Cloth handle", err_of(function() return a:particle(1, 1) end))
    assert.matches("stale Cloth handle", err_of(function() return a.stretch end))
    b:destroy()
    assert.are.equal(0, w.particle_count)
  end)

  it("hangs from its top edge stretched as the continuum says: rho g L^2 / (2 k), and less than rho g L / k anywhere", function()
    local k, rho, L, N = 1000, 0.2, 1, 15
    local w = impetus.world { integrator = "implicit" }
    w.cg_tolerance = 1e-8
    local cl = w:cloth { rows = N, cols = N, size = L, normal = { 0, 0, 1 }, position = { 0, 2, 0 }, pin = "top",
      mass = rho * L * L, stretch = k, damping = 0.02 }
    for _ = 1, 240 do w:step(1 / 60) end
    assert.is_true(w:kinetic_energy() < 1e-8, "at rest: " .. w:kinetic_energy())
    local c = (N + 1) // 2
    local elongation = dist(cl:particle(1, c).position, cl:particle(N, c).position) - L
    local expected = rho * 9.81 * L * L / (2 * k) -- 0.98 mm
    helpers.near(elongation, expected, 0.01 * expected, "elongation of the centre column")
    local worst = 0
    for i = 1, N - 1 do
      for j = 1, N do worst = math.max(worst, dist(cl:particle(i, j).position, cl:particle(i + 1, j).position) / (L / (N - 1)) - 1) end
    end
    assert.is_true(worst < rho * 9.81 * L / k, string.format("largest strain %.5f", worst))
  end)

  it("drapes over a sphere without passing into it, its middle resting on top", function()
    local w = impetus.world { integrator = "implicit" }
    local R = 0.5
    w:sphere { static = true, position = { 0, 1, 0 }, radius = R, friction = 0.6, restitution = 0 }
    w:plane { friction = 0.6, restitution = 0 }
    local cl = w:cloth { rows = 16, cols = 16, size = 1.6, position = { 0, 1.7, 0 }, radius = 0.02, mass = 0.3 }
    for _ = 1, 240 do w:step(1 / 60) end
    local lowest = math.huge
    for _, p in ipairs(cl:particles()) do lowest = math.min(lowest, dist(p.position, { 0, 1, 0 })) end
    assert.is_true(lowest >= R + 0.02 - 1e-6, "a particle is inside the sphere: " .. lowest)
    local top = cl:particle(8, 8).position -- next to the middle (the grid has no middle vertex)
    helpers.near(dist(top, { 0, 1, 0 }), R + 0.02, 1e-9, "the middle lies on the sphere")
    assert.is_true(top[2] > 1 + R, "on top")
    local v = cl:particle(8, 8).velocity
    assert.is_true(math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) < 1e-15, "held by static friction") -- v0 + dv, dv = -v0
    assert.is_true(w.contact_count > 40)
    -- what still moves after 4 s is the free skirt, swinging slowly (it takes a minute to stop)
    assert.is_true(w:kinetic_energy() < 5e-4, "kinetic energy " .. w:kinetic_energy())
  end)

  it("settles on a box: the top carries it, the sides do not let it in, friction holds it", function()
    local w = impetus.world { integrator = "implicit" }
    w:box { static = true, position = { 0, 0.5, 0 }, half = { 0.4, 0.5, 0.3 }, friction = 0.8, restitution = 0 }
    local cl = w:cloth { rows = 14, cols = 14, size = 1.2, position = { 0, 1.2, 0 }, radius = 0.01, mass = 0.2 }
    for _ = 1, 180 do w:step(1 / 60) end
    local half, c = { 0.4, 0.5, 0.3 }, { 0, 0.5, 0 }
    for k, p in ipairs(cl:particles()) do
      -- distance from the box: to the nearest point of it (0 inside)
      local x, d2 = p.position, 0
      for a = 1, 3 do
        local q = math.max(-half[a], math.min(half[a], x[a] - c[a]))
        d2 = d2 + (x[a] - c[a] - q) ^ 2
      end
      assert.is_true(math.sqrt(d2) >= 0.01 - 1e-6, "particle " .. k .. " is inside the box (grown by its radius)")
    end
    local mid = cl:particle(7, 7).position
    helpers.near(mid[2], 1.01, 1e-9, "a middle particle lies on the top face")
    assert.is_true(w.contact_count > 20)
  end)

  it("lies on the ground without jitter: every particle at its radius, all at rest", function()
    local w = impetus.world { integrator = "implicit" }
    w:plane { friction = 0.5, restitution = 0 }
    local cl = w:cloth { rows = 12, cols = 12, size = 1, position = { 0, 0.3, 0 }, radius = 0.01 }
    for _ = 1, 120 do w:step(1 / 60) end
    assert.are.equal(144, w.contact_count)
    for k, p in ipairs(cl:particles()) do
      helpers.near(p.position[2], 0.01, 1e-12, "height of particle " .. k)
      local v = p.velocity
      assert.is_true(math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2) < 1e-15, "particle " .. k .. " moves")
    end
  end)

  it("gives the explicit integrators the same forces: implicit converges to RK4 at first order", function()
    local function run(method, steps)
      local w = impetus.world { integrator = method }
      w.cg_tolerance = 1e-12
      local cl = w:cloth { rows = 4, cols = 4, size = 0.5, pin = "top_corners", stretch = 200, shear = 20, bend = 1e-3 }
      for _ = 1, steps do w:step(0.1 / steps) end
      return cl:particle(4, 4).position
    end
    local ref = run("rk4", 400)
    local e1, e2 = dist(run("implicit", 200), ref), dist(run("implicit", 400), ref)
    helpers.near(e1 / e2, 2, 0.15, "error ratio when the step halves")
    assert.is_true(math.abs(ref[2] - 2) > 0.01, "the cloth should have moved")
  end)
end)

describe("world:hair", function()
  it("builds a strand with a hidden anchor that holds its root direction", function()
    local w = impetus.world {}
    local h = w:hair { root = { 0, 1, 0 }, direction = { 0, 0, 2 }, length = 0.5, segments = 5, mass = 0.02 }
    assert.are.equal(6, h.vertex_count)
    assert.are.equal(7, w.particle_count) -- and the anchor
    assert.are.same({ 0, 1, 0 }, h:particle(1).position)
    assert.are.same({ 0, 1, -0.1 }, h.anchor.position)
    assert.is_true(h:particle(1).fixed and h.anchor.fixed)
    local m = 0
    for _, p in ipairs(h:particles()) do m = m + p.mass end
    helpers.near(m, 0.02, 1e-15, "mass of the strand")
    local rope = w:hair { root = { 1, 1, 0 }, clamped = false, root_motion = "free" }
    assert.is_nil(rope.anchor)
    assert.matches("either 'points' or 'root'", err_of(function() w:hair { points = { { 0, 0, 0 }, { 1, 0, 0 } }, root = { 0, 0, 0 } } end))
    assert.matches("points%[2%] coincides", err_of(function() w:hair { points = { { 0, 0, 0 }, { 0, 0, 0 } } } end))
    assert.matches("root_motion", err_of(function() w:hair { root_motion = "glued" } end))
    assert.matches("must be kinematic", err_of(function() h:move_root({ 0, 2, 0 }, 1 / 60) end))
  end)

  it("scales its angular springs, k_i = B / l_i (S3), so an arc's energy tends to B L / (2 R^2)", function()
    local B, L, R = 0.05, 0.3, 0.2
    for _, n in ipairs({ 4, 8, 16, 32 }) do
      local w = impetus.world {}
      local pts = {}
      for i = 0, n do
        local a = L / R * i / n
        pts[#pts + 1] = { R * math.sin(a), R * (1 - math.cos(a)), 0 }
      end
      local h = w:hair { points = pts, bend = B, clamped = false }
      -- n - 1 joints turning by alpha = L / (n R), each k = B / chord, chord = 2 R sin(alpha / 2)
      local alpha = L / (n * R)
      local discrete = 0.5 * (n - 1) * B / (2 * R * math.sin(alpha / 2)) * alpha ^ 2
      helpers.near(h:energy(), discrete, 1e-12, "energy with " .. n .. " segments")
      assert.is_true(math.abs(discrete - 0.5 * B * L / R ^ 2) < 0.5 * B * L / R ^ 2 * 1.1 / n)
    end
  end)

  it("converges to the Euler-Bernoulli cantilever, w L^4 / (8 B), at second order as segments are refined", function()
    local m, L, B = 0.01, 0.3, 0.05
    local exact = m * 9.81 / L * L ^ 4 / (8 * B)
    local errs = {}
    for k, n in ipairs({ 4, 8, 16, 32 }) do
      local w = impetus.world { integrator = "implicit" }
      w.cg_tolerance = 1e-10
      local h = w:hair { root = { 0, 1, 0 }, direction = { 1, 0, 0 }, length = L, segments = n, mass = m, bend = B,
        stretch = 2000, damping = 0.05 }
      for _ = 1, 240 do w:step(1 / 60) end
      errs[k] = math.abs(1 - h:particle(n + 1).position[2] - exact)
    end
    for k = 2, 3 do assert.is_true(errs[k - 1] / errs[k] > 3.5, string.format("error ratio %.2f", errs[k - 1] / errs[k])) end
    assert.is_true(errs[4] < 0.01 * exact, "32 segments within 1%: " .. errs[4] / exact)
  end)

  it("follows a root the script moves, and does not pass into the head it hangs from", function()
    local w = impetus.world { integrator = "implicit" }
    local head = w:sphere { static = true, position = { 0, 1, 0 }, radius = 0.2, friction = 0.3 }
    local h = w:hair { root = { 0, 1.2, 0 }, direction = { 1, 0.3, 0 }, length = 0.4, segments = 12, root_motion = "kinematic",
      bend = 2e-5, radius = 0.01 }
    for i = 1, 120 do
      local c = { 0.3 * math.sin(i / 20), 1, 0 }
      head.position = c
      h:move_root({ c[1], c[2] + 0.2, c[3] }, 1 / 60)
      w:step(1 / 60)
    end
    local c = head.position
    helpers.near(h:particle(1).position[1], c[1], 1e-9, "root x")
    for k, p in ipairs(h:particles()) do
      if k > 1 then assert.is_true(dist(p.position, c) >= 0.2 + 0.01 - 1e-3, "particle " .. k .. " is inside the head") end
    end
  end)
end)
