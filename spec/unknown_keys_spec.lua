-- Every unknown field or argument is an error that names it: top-level definition tables, the tables
-- nested in them (shapes, limits, motor, lists of particles, points, triangles, pins, axes), and
-- arguments beyond those a function takes. A misspelt or misplaced key never vanishes silently.
local impetus = require "impetus"

-- fn must fail with a message that names `who` (the function) and `what` (the key or argument)
local function refuses(who, what, fn)
  local ok, err = pcall(fn)
  assert.is_false(ok, who .. " accepted " .. what)
  err = tostring(err)
  assert.truthy(err:find(who, 1, true), "the error names " .. who .. ": " .. err)
  assert.truthy(err:find(what, 1, true), "the error names " .. what .. ": " .. err)
end

local function scene()
  local w = impetus.world()
  local p = w:particle { position = { 0, 1, 0 } }
  local q = w:particle { position = { 1, 1, 0 } }
  local r = w:particle { position = { 2, 1, 0 } }
  local b = w:box { position = { 0, 3, 0 } }
  return w, p, q, r, b
end

local function curve(u) return { u, 0, 0 } end
local tetra = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }

describe("unknown fields", function()
  it("are refused at the top of every definition table", function()
    local w, p, q, _, b = scene()
    local cases = {
      { "impetus.world", function() impetus.world { bogus = 1 } end },
      { "world:particle", function() w:particle { bogus = 1 } end },
      { "world:curve_particle", function() w:curve_particle { curve = curve, bogus = 1 } end },
      { "world:spring", function() w:spring(p, q, { ks = 1, bogus = 1 }) end },
      { "world:behavior", function() w:behavior { kind = "distance", particles = { p, q }, bogus = 1 } end },
      { "world:plane", function() w:plane { bogus = 1 } end },
      { "world:sphere", function() w:sphere { bogus = 1 } end },
      { "world:sphere", function() w:sphere { static = true, bogus = 1 } end },
      { "world:box", function() w:box { bogus = 1 } end },
      { "world:box", function() w:box { static = true, bogus = 1 } end },
      { "world:capsule", function() w:capsule { bogus = 1 } end },
      { "world:hull", function() w:hull { points = tetra, bogus = 1 } end },
      { "world:mesh", function() w:mesh { vertices = tetra, triangles = { { 1, 2, 3 } }, bogus = 1 } end },
      { "world:body", function() w:body { shapes = { { type = "box" } }, bogus = 1 } end },
      { "world:rod", function() w:rod(p, q, { bogus = 1 }) end },
      { "world:wire", function() w:wire(p, { radius = 1, bogus = 1 }) end },
      { "world:on_plane", function() w:on_plane(p, { normal = { 0, 1, 0 }, bogus = 1 }) end },
      { "world:on_line", function() w:on_line(p, { direction = { 1, 0, 0 }, bogus = 1 }) end },
      { "world:constraint", function() w:constraint { particles = { p }, C = function() return 0 end, bogus = 1 } end },
      { "world:joint", function() w:joint { type = "point", a = b, anchor = { 0, 4, 0 }, bogus = 1 } end },
      { "world:joint", function() w:joint { a = b, point = { 0, 4, 0 }, bogus = 1 } end },
      { "world:cloth", function() w:cloth { rows = 2, cols = 2, bogus = 1 } end },
      { "world:hair", function() w:hair { segments = 2, bogus = 1 } end },
      { "world:overlap", function() w:overlap({ type = "sphere", bogus = 1 }, { 0, 0, 0 }) end },
      { "impetus.ode.solve", function() impetus.ode.solve(function(x) return { x[1] } end, { 1 }, 0, 1, { bogus = 1 }) end },
    }
    for _, case in ipairs(cases) do refuses(case[1], "'bogus'", case[2]) end
  end)

  it("are refused in nested tables", function()
    local w, p, q, r, b = scene()
    local hinge = w:joint { type = "hinge", a = b, anchor = { 0, 4, 0 }, axis = { 0, 0, 1 } }
    local ball = w:joint { type = "point", a = w:sphere { position = { 5, 3, 0 } }, anchor = { 5, 4, 0 } }
    local cases = {
      -- the issue's case: a twist limit on a point joint silently dropped
      { "world:joint: field 'limits'", "'twist'", function()
        w:joint { type = "point", a = b, anchor = { 0, 4, 0 }, limits = { swing = 0.3, twist = 0.2 } }
      end },
      { "world:joint: field 'limits'", "'bogus'", function()
        w:joint { type = "hinge", a = b, anchor = { 0, 4, 0 }, axis = { 0, 0, 1 }, limits = { -1, 1, bogus = 2 } }
      end },
      { "world:joint: field 'limits'", "[3]", function()
        w:joint { type = "hinge", a = b, anchor = { 0, 4, 0 }, axis = { 0, 0, 1 }, limits = { -1, 1, 2 } }
      end },
      { "world:joint: field 'motor'", "'bogus'", function()
        w:joint { type = "hinge", a = b, anchor = { 0, 4, 0 }, axis = { 0, 0, 1 }, motor = { speed = 1, max = 2, bogus = 3 } }
      end },
      { "joint.limits: field 'limits'", "'twist'", function() ball.limits = { swing = 0.3, twist = 0.2 } end },
      { "joint.motor: field 'motor'", "'torque'", function() hinge.motor = { speed = 1, torque = 5 } end },
      { "world:body: shapes[1]", "'bogus'", function() w:body { shapes = { { type = "box", bogus = 1 } } } end },
      { "world:body: shapes[1] (a sphere)", "'size'", function() w:body { shapes = { { type = "sphere", size = { 1, 1, 1 } } } } end },
      { "world:body: field 'shapes'", "'bogus'", function() w:body { shapes = { { type = "box" }, bogus = { type = "box" } } } end },
      { "world:hull: field 'points'", "'bogus'", function() w:hull { points = { tetra[1], tetra[2], tetra[3], tetra[4], bogus = tetra[1] } } end },
      { "world:mesh: triangles[1]", "[4]", function() w:mesh { vertices = tetra, triangles = { { 1, 2, 3, 4 } } } end },
      { "world:mesh: field 'triangles'", "'bogus'", function() w:mesh { vertices = tetra, triangles = { { 1, 2, 3 }, bogus = { 1, 2, 4 } } } end },
      { "world:curve_particle: field 'range'", "'bogus'", function() w:curve_particle { curve = curve, range = { 0, 1, bogus = 2 } } end },
      { "world:behavior: field 'particles'", "'bogus'", function() w:behavior { kind = "distance", particles = { p, q, bogus = r } } end },
      { "world:behavior (kind 'distance')", "'normal'", function() w:behavior { kind = "distance", particles = { p, q }, normal = { 0, 1, 0 } } end },
      { "world:constraint: field 'particles'", "'bogus'", function()
        w:constraint { particles = { p, bogus = q }, C = function() return 0 end }
      end },
      { "world:cloth: field 'axes'", "'bogus'", function() w:cloth { axes = { { 1, 0, 0 }, { 0, 1, 0 }, bogus = { 0, 0, 1 } } } end },
      { "world:cloth: pin[1]", "'bogus'", function() w:cloth { rows = 3, cols = 3, pin = { { 1, 1, bogus = 2 } } } end },
      { "world:cloth", "'uv'", function() w:cloth { rows = 2, cols = 2, uv = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 } } } end },
      { "world:cloth: field 'vertices'", "'bogus'", function()
        w:cloth { vertices = { tetra[1], tetra[2], tetra[3], bogus = tetra[4] }, triangles = { { 1, 2, 3 } } }
      end },
      { "world:cloth: triangles[1]", "'bogus'", function() w:cloth { vertices = tetra, triangles = { { 1, 2, 3, bogus = 4 } } } end },
      { "world:hair: field 'points'", "'bogus'", function() w:hair { points = { { 0, 0, 0 }, { 0, 1, 0 }, bogus = { 0, 2, 0 } } } end },
      { "world:overlap (a sphere)", "'size'", function() w:overlap({ type = "sphere", size = { 1, 1, 1 } }, { 0, 0, 0 }) end },
    }
    for _, case in ipairs(cases) do refuses(case[1], case[2], case[3]) end
    assert.is_nil(hinge.motor, "the refused motor was not installed")
    assert.is_nil(ball.limits, "the refused limits were not installed")
  end)
end)

describe("stray entries in vectors, colours and quaternions", function()
  it("are refused by name, in definitions, setters and arguments", function()
    local w, p, _, _, b = scene()
    local cases = {
      { "world:box: field 'position'", "unexpected entry [4]", function() w:box { position = { 0, 1, 0, 5 } } end },
      { "world:box: field 'position'", "unknown field 'bogus'", function() w:box { position = { 0, 1, 0, bogus = 5 } } end },
      { "world:box: field 'size'", "unexpected entry [4]", function() w:box { size = { 1, 1, 1, 1 } } end },
      { "world:box: field 'color'", "unexpected entry [5]", function() w:box { color = { 1, 0, 0, 1, 1 } } end },
      { "world:sphere: field 'color'", "unknown field 'r'", function() w:sphere { color = { 1, 0, 0, r = 1 } } end },
      { "world:joint: field 'axis'", "unknown field 'bogus'", function()
        w:joint { type = "hinge", a = b, anchor = { 0, 4, 0 }, axis = { 0, 0, 1, bogus = 1 } }
      end },
      { "body.position", "unexpected entry [4]", function() b.position = { 0, 3, 0, 1 } end },
      { "body.velocity", "unknown field 'w'", function() b.velocity = { 0, 0, 0, w = 1 } end },
      { "body.orientation", "unexpected entry [5]", function() b.orientation = { 1, 0, 0, 0, 0 } end },
      { "body.color", "unexpected entry [5]", function() b.color = { 1, 0, 0, 1, 1 } end },
      { "particle.position", "unexpected entry [4]", function() p.position = { 0, 1, 0, 1 } end },
      { "world.gravity", "unexpected entry [4]", function() w.gravity = { 0, -9.81, 0, 0 } end },
      { "body:apply_force: argument 'force'", "unexpected entry [4]", function() b:apply_force({ 0, 1, 0, 1 }) end },
      { "world:raycast: argument 'from'", "unknown field 'bogus'", function() w:raycast({ 0, 5, 0, bogus = 1 }, { 0, -5, 0 }) end },
    }
    for _, case in ipairs(cases) do refuses(case[1], case[2], case[3]) end
    -- what a vector may be: {x, y, z}, {x, y} (z = 0), {x = .., y = .., z = ..}; a colour's alpha is optional
    local named = w:box { position = { x = 1, y = 2, z = 3 }, color = { 1, 0, 0 } }
    assert.are.same({ 1, 2, 3 }, named.position)
    b.position = { 0, 3 }
    assert.are.same({ 0, 3, 0 }, b.position)
  end)
end)

describe("unexpected arguments", function()
  it("are refused, named by their position", function()
    local w, p, _, _, b = scene()
    local cases = {
      -- raycast takes one filter table: a second would be silently ignored
      { "world:raycast(from, to [, filter])", "#4 (table)", function() w:raycast({ 0, 5, 0 }, { 0, -5, 0 }, { all = true }, {}) end },
      { "world:step(dt)", "#2 (number)", function() w:step(1 / 60, 4) end },
      { "world:sphere(def)", "#2 (table)", function() w:sphere({ radius = 1 }, { radius = 2 }) end },
      { "world:query_point(point)", "#2 (boolean)", function() w:query_point({ 0, 0, 0 }, true) end },
      { "body:apply_impulse(impulse [, at])", "#3 (table)", function() b:apply_impulse({ 0, 1, 0 }, { 0, 3, 0 }, { 1, 0, 0 }) end },
      { "particle:destroy()", "#1 (boolean)", function() p:destroy(true) end },
      { "impetus.ode.step(f, x, t, h [, method])", "#6 (string)", function()
        impetus.ode.step(function(x) return x end, { 1 }, 0, 0.1, "rk4", "again")
      end },
      { "quat.mul(a, b)", "#3 (table)", function() impetus.quat.mul({ 1, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 0, 0, 0 }) end },
      { "impetus.world([def])", "#2 (table)", function() impetus.core.world({}, {}) end },
    }
    for _, case in ipairs(cases) do refuses(case[1], "unexpected argument " .. case[2], case[3]) end
    assert.is_true(p:valid(), "the refused destroy did not run")
  end)

  it("may be trailing nils", function()
    local w = impetus.world()
    w:plane {}
    assert.is_table(w:raycast({ 0, 5, 0 }, { 0, -5, 0 }, nil))
    assert.is_true(w:step(1 / 60, nil))
  end)
end)

describe("integer fields", function()
  it("are checked before they are narrowed to C ints", function()
    local w = impetus.world()
    local tri = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }
    -- 2^32 + 1 would wrap to vertex 1 (and 2^32 + 2 to 2) as a C int
    local ok, err = pcall(function() w:mesh { vertices = tri, triangles = { { 2 ^ 32 + 1, 2, 3 } } } end)
    assert.is_false(ok)
    assert.matches("world:mesh: mesh triangle 1 refers to vertex 4294967297", err)
    ok, err = pcall(function() w:cloth { rows = 3, cols = 3, pin = { { 2 ^ 32 + 1, 1 } } } end)
    assert.is_false(ok)
    assert.matches("world:cloth: pin%[1%] must be {row, col}", err)
    ok, err = pcall(function() w.constraint_max_iterations = 1e300 end)
    assert.is_false(ok)
    assert.matches("world.constraint_max_iterations must be a whole number", err)
    w:remove_joint(math.mininteger) -- no such joint: nothing happens
    w:remove_joint(math.maxinteger, true)
  end)
end)
