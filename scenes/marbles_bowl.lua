-- scenes/marbles_bowl.lua: 200 marbles poured into a bowl, a static triangle mesh (the inside of a
-- hemisphere, faces towards the centre). They roll with friction (rolling, not sliding, once their
-- spin catches up), click against each other with a little restitution, and settle in the bottom.
-- B pours more.
local function bowl(world, R, rings, segs)
  local verts, tris = {}, {}
  for i = 0, rings do
    local th = (math.pi / 2) * i / rings -- 0 at the bottom, pi/2 at the rim
    for j = 0, segs - 1 do
      local ph = 2 * math.pi * j / segs
      verts[#verts + 1] = { R * math.sin(th) * math.cos(ph), R - R * math.cos(th), R * math.sin(th) * math.sin(ph) }
    end
  end
  local function id(i, j) return i * segs + (j % segs) + 1 end
  local center = { 0, R, 0 }
  local function add(a, b, c)
    -- counter-clockwise seen from the centre: the front faces the marbles
    local A, B, C = verts[a], verts[b], verts[c]
    local u = { B[1] - A[1], B[2] - A[2], B[3] - A[3] }
    local v = { C[1] - A[1], C[2] - A[2], C[3] - A[3] }
    local n = { u[2] * v[3] - u[3] * v[2], u[3] * v[1] - u[1] * v[3], u[1] * v[2] - u[2] * v[1] }
    local d = (center[1] - A[1]) * n[1] + (center[2] - A[2]) * n[2] + (center[3] - A[3]) * n[3]
    if d > 0 then tris[#tris + 1] = { a, b, c } else tris[#tris + 1] = { a, c, b } end
  end
  for i = 0, rings - 1 do
    for j = 0, segs - 1 do
      if i > 0 then add(id(i, j), id(i + 1, j), id(i, j + 1)) else add(id(0, 0), id(1, j), id(1, j + 1)) end
      if i > 0 then add(id(i, j + 1), id(i + 1, j), id(i + 1, j + 1)) end
    end
  end
  return world:mesh { vertices = verts, triangles = tris, friction = 0.5, color = { 0.55, 0.6, 0.7 } }
end

local function pour(world, n)
  for _ = 1, n do
    world:sphere { radius = 0.12, density = 2500, friction = 0.4, restitution = 0.3,
                   position = { (math.random() - 0.5) * 2, 4 + math.random() * 3, (math.random() - 0.5) * 2 },
                   color = { 0.3 + 0.7 * math.random(), 0.3 + 0.6 * math.random(), 0.4 + 0.6 * math.random() } }
  end
end

return {
  title = "Marbles in a bowl (static mesh)",
  keys = { { "b", "pour 50 more marbles" } },
  camera = { eye = { 0, 6, 7 }, target = { 0, 1, 0 } },
  setup = function(world)
    math.randomseed(3)
    bowl(world, 3, 12, 32)
    pour(world, 200)
  end,
  keypressed = function(world, key)
    if key == "b" then pour(world, 50) end
  end,
}
