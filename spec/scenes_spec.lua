-- Every scene in scenes/ and every game in scenes/games/<name>/main.lua, run as a user would meet it:
--   * 5 s of simulated time through the runner (the host's fixed-step clock, hot reload and guards),
--     with a mouse drag, a hot reload and the keys scenes use pressed and released along the way,
--     through the runner's scripted input, and its draw called with a stand-in gfx: no script
--     error, no NaN;
--   * an offscreen screenshot through the host (the README's command, --screenshot), compared with a
--     screenshot of the same scene in which the host draws only the world's planes (the ground; the
--     scene's overlay, the HUD, the grid and the background stay): what stands on the ground must cover
--     a share of the picture, and the picture must hold more than a few colours.
-- The bench scenes (scenes/bench/) are left to `./impetus hash --check`: some take seconds a step.
local impetus = require "impetus"
local helpers = require "helpers"

local SIM_SECONDS = 5
local SHOT_FRAMES = 20               -- frames simulated before a screenshot (1/60 s each)
local SHOT_W, SHOT_H = 960, 540
local HUD_W, HUD_H = 520, 100      -- the host's HUD box in the top-left corner (timings change from run to run)
-- what stands on the ground must change at least this share of the pixels outside the HUD. Two renders
-- of one scene differ in up to 0.03 % (timings a scene's overlay prints); measured: pinball 0.18 % (its
-- own drawing covers the table's colliders: the ball and flippers show), chain 0.20 % (200 rods as
-- lines), integrators and pendulums 0.21 and 0.24 % (a few small particles), bead_wire 0.36 %, the
-- others 0.74-39 %; a camera that sees only the ground: 0.
local WORLD_SHARE = 0.001

local function ls(pattern)
  local list = {}
  local p = io.popen(string.format("cd %q && ls %s 2>/dev/null", helpers.root, pattern))
  for line in p:lines() do list[#list + 1] = line end
  p:close()
  return list
end

local SCENES = ls("scenes/*.lua")
for _, game in ipairs(ls("scenes/games/*/main.lua")) do SCENES[#SCENES + 1] = game end

-- keys the scenes' keypressed/keyreleased answer (letters, digits, arrows, space), each pressed at its
-- own time and held for 0.2 s, between 1 s and 4.5 s of the run
local KEYS = { "space", "up", "down", "left", "right" }
for c = string.byte("a"), string.byte("z") do KEYS[#KEYS + 1] = string.char(c) end
for d = 1, 9 do KEYS[#KEYS + 1] = tostring(d) end

local function finite3(v) return v[1] == v[1] and v[2] == v[2] and v[3] == v[3] and
  math.abs(v[1]) < math.huge and math.abs(v[2]) < math.huge and math.abs(v[3]) < math.huge end

-- a stand-in for the host's gfx in draw(world, gfx) without a window: every call is accepted and draws
-- nothing; the calls that return values return plausible ones (the real gfx draws the screenshots below)
local stub_gfx = setmetatable({
  size = function() return 1280, 720 end,
  text_width = function(s) return 8 * #tostring(s) end,
  line_height = function() return 18 end,
  project = function() return 640, 360 end,
  unproject = function() return { 0, 0, 10 }, { 0, 0, -1 } end,
  debug = function() return {} end,
  image = function() return { width = 1, height = 1 } end,
}, { __index = function() return function() end end })

-- run the scene for `seconds` through the runner's scripted input: a mouse drag across the window's
-- centre at 0.5 s (press, move, release, a wheel turn), a hot reload, then KEYS, and the scene's draw
-- every 0.25 s; returns the runner and the steps taken
local function run_scene(path, seconds)
  math.randomseed(1)
  local r = impetus.runner(helpers.root .. "/" .. path)
  r:start()
  if r.error then return r, 0 end
  local dt = r:step_dt()
  local n = math.ceil(seconds / dt - 1e-9)
  local at = {}
  local function plan(t, fn) local s = math.max(1, math.floor(t / dt)) at[s] = at[s] or {} table.insert(at[s], fn) end
  plan(0.5, function() r:press_mouse(640, 360, 1) end)
  plan(0.55, function() r:move_mouse(560, 420) end)
  plan(0.6, function() r:move_mouse(500, 450) end)
  plan(0.7, function() r:release_mouse(500, 450, 1) end)
  plan(0.8, function() r:wheel(0, 1) end)
  -- a hot reload (the file re-run, the world kept) before the keys: the keys then reach the new code
  plan(0.9, function() assert(r:reload(), path .. ": hot reload: " .. tostring(r.error)) end)
  for i, k in ipairs(KEYS) do
    local t = 1 + (i - 1) * 3.5 / #KEYS
    plan(t, function() r:press_key(k) end)
    plan(t + 0.2, function() r:release_key(k) end)
  end
  for t = 0.25, seconds, 0.25 do plan(t, function() r:call("draw", r.world, stub_gfx) end) end
  local taken = 0
  for s = 1, n do
    for _, fn in ipairs(at[s] or {}) do fn() end
    if not r:step() then break end
    taken = taken + 1
  end
  return r, taken
end

describe("every scene and game", function()
  it("was found", function()
    assert.is_true(#SCENES >= 29, "scenes found: " .. #SCENES)
  end)

  for _, path in ipairs(SCENES) do
    it("runs " .. SIM_SECONDS .. " s with the mouse, a hot reload and its keys, without a script error: " .. path, function()
      local r, taken = run_scene(path, SIM_SECONDS)
      assert.is_nil(r.error, path .. ": " .. tostring(r.error))
      assert.is_nil(r.warning, path .. ": " .. tostring(r.warning)) -- a NaN-guard report, or handlers a reload missed
      assert.are.equal(math.ceil(SIM_SECONDS / r:step_dt() - 1e-9), taken, path .. ": steps taken")
      for _, b in ipairs(r.world:bodies()) do
        assert.is_true(finite3(b.position) and finite3(b.velocity), path .. ": a body's state is not finite")
      end
      for _, p in ipairs(r.world:particles()) do
        assert.is_true(finite3(p.position) and finite3(p.velocity), path .. ": a particle's state is not finite")
      end
    end)
  end
end)

-- an RGBA picture: width, height, bytes
local function load_png(file)
  local w, h, px = impetus.core.image_load(file)
  return { w = w, h = h, px = px }
end

-- the number of distinct RGB colours of a picture
local function distinct_colours(img)
  local seen, n = {}, 0
  local px = img.px
  for i = 1, #px, 4 do
    local key = px:sub(i, i + 2)
    if not seen[key] then seen[key], n = true, n + 1 end
  end
  return n
end

-- the share of pixels outside the HUD box where two pictures differ by more than `tol` in some channel
local function differing_share(a, b, tol)
  assert(a.w == b.w and a.h == b.h)
  local pa, pb = a.px, b.px
  local n, total = 0, 0
  for y = 0, a.h - 1 do
    for x = (y < HUD_H) and HUD_W or 0, a.w - 1 do
      local i = (y * a.w + x) * 4 + 1
      local r1, g1, b1 = pa:byte(i, i + 2)
      local r2, g2, b2 = pb:byte(i, i + 2)
      if math.abs(r1 - r2) > tol or math.abs(g1 - g2) > tol or math.abs(b1 - b2) > tol then n = n + 1 end
      total = total + 1
    end
  end
  return n / total
end

-- a scene file that runs the scene at `path` (its callbacks, its settings, modules next to it found
-- as the runner finds them) and draws, in place of its world, a world that holds only the scene's planes
-- (the ground): the scene's overlay, the HUD, the grid, the background and the ground stay. The
-- difference between the scene's picture and this one's is what stands on the ground.
local function ground_twin(path)
  return string.format([[
local core = require "impetus.core"
local gfx = package.loaded["impetus.gfx"]
local draw_world, ground = gfx.world, nil
gfx.world = function(w)
  if not ground then
    ground = core.world()
    for _, h in ipairs(w:overlap({ type = "sphere", radius = 1e4 }, { 0, 0, 0 })) do
      local c = h.collider
      if c and c.shape == "plane" then ground:plane { point = c.position, normal = c.normal } end
    end
    for _, b in ipairs(w:bodies()) do
      if b.static then
        for _, shape in ipairs(b:shapes()) do
          if shape.type == "plane" then
            ground:body { static = true, color = b.color,
                          shapes = { { type = "plane", point = shape.position, normal = shape.normal } } }
          end
        end
      end
    end
  end
  return draw_world(ground)
end
local path = %q
local dir = path:match("^(.*)/") or "."
local env = _ENV
local runner_require = require
require = function(name)
  local file = package.searchpath(name, dir .. "/?.lua;" .. dir .. "/?/init.lua")
  if not file then return runner_require(name) end
  if package.loaded[name] == nil then package.loaded[name] = assert(loadfile(file, "t", env))(name, file) or true end
  return package.loaded[name]
end
return assert(loadfile(path, "t", env))()
]], path)
end

describe("every scene's and game's offscreen screenshot", function()
  local dir
  setup(function() dir = helpers.tmpdir() end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  local function shot(scene_path, png)
    local out, code = helpers.run_host(string.format("--screenshot %s --frames %d --size %dx%d %s", png, SHOT_FRAMES,
      SHOT_W, SHOT_H, scene_path))
    assert.are.equal(0, code, scene_path .. ":\n" .. out)
    return load_png(png)
  end

  for i, path in ipairs(SCENES) do
    it("shows the scene's objects: " .. path, function()
      local full = shot(path, string.format("%s/scene%d.png", dir, i))
      local twin = string.format("%s/twin%d.lua", dir, i)
      helpers.write(twin, ground_twin(helpers.root .. "/" .. path))
      local bare = shot(twin, string.format("%s/twin%d.png", dir, i))
      assert.are.equal(SHOT_W, full.w)
      assert.are.equal(SHOT_H, full.h)
      local colours = distinct_colours(full)
      local share = differing_share(full, bare, 24)
      assert.is_true(colours > 16, path .. ": only " .. colours .. " colours")
      assert.is_true(share > WORLD_SHARE,
        string.format("%s: what stands on the ground covers %.3f %% of the picture", path, 100 * share))
    end)
  end
end)

describe("the demo scenes do what their descriptions say", function()
  local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
  local function dot(a, b) return a[1] * b[1] + a[2] * b[2] + a[3] * b[3] end

  it("the fountain's spray reaches its sphere and bounces off it without sinking in", function()
    math.randomseed(1)
    local r = impetus.runner(helpers.root .. "/scenes/fountain.lua")
    r:start()
    local sphere
    for _, h in ipairs(r.world:overlap({ type = "sphere", radius = 100 }, { 0, 0, 0 })) do
      if h.collider and h.collider.shape == "sphere" then sphere = h.collider end
    end
    assert.is_not_nil(sphere, "the fountain has a sphere")
    local c, R = sphere.position, sphere.radius
    -- a bounce: a particle within 2 cm of the surface whose radial velocity turns from in to out
    local inward, bounced, count, deepest = {}, {}, 0, math.huge
    for _ = 1, 300 do
      assert.is_true(r:step(), tostring(r.error))
      for _, p in ipairs(r.world:particles()) do
        local d = sub(p.position, c)
        local dist = math.sqrt(dot(d, d))
        local gap = dist - R - p.radius
        local vr = dot(d, p.velocity) / dist
        deepest = math.min(deepest, gap)
        if inward[p] and vr > 0 and gap < 0.02 and not bounced[p] then bounced[p], count = true, count + 1 end
        inward[p] = vr < 0
      end
    end
    -- measured: 84 of the 2000 particles of 5 s bounce off it, the deepest 5e-6 m from touching
    assert.is_true(count >= 40, "particles that bounced off the sphere in 5 s: " .. count)
    assert.is_true(deepest > -0.01, "a particle sank into the sphere by " .. -deepest .. " m")
  end)

  it("qp_joints' bead stays on its spinning rod", function()
    local r = impetus.runner(helpers.root .. "/scenes/qp_joints.lua")
    r:start()
    local rod, bead
    for _, b in ipairs(r.world:bodies()) do
      local half = b:shapes()[1].half
      if half and math.abs(half[1] - 1.5) < 1e-12 then rod = b end
      if half and math.abs(half[1] - 0.1) < 1e-12 then bead = b end
    end
    assert.is_truthy(rod and bead, "the rod and the bead")
    local rod_half, bead_half = 1.5, 0.1
    local farthest, off_axis = 0, 0
    for _ = 1, 600 do
      assert.is_true(r:step(), tostring(r.error))
      local R = rod.rotation
      local along = { R[1][1], R[2][1], R[3][1] }
      local d = sub(bead.position, rod.position)
      local s = dot(d, along)
      farthest = math.max(farthest, math.abs(s) + bead_half)
      local across = sub(d, { s * along[1], s * along[2], s * along[3] })
      off_axis = math.max(off_axis, math.sqrt(dot(across, across)))
    end
    -- 10 s: the bead's far face stays on the rod (measured 0.96 m of its 1.5 m half length), and on its line
    assert.is_true(farthest <= rod_half, string.format("the bead reached %.3f m from the axle", farthest))
    assert.is_true(off_axis < 1e-4, "the bead left the rod's line by " .. off_axis .. " m")
  end)
end)

describe("scene keys the viewer also has", function()
  -- the scenes list these keys (scene.keys), so the runner's viewer leaves them to the scene
  for _, path in ipairs { "scenes/pyramid.lua", "scenes/planar2d.lua", "scenes/box_pile.lua" } do
    it("Space fires a ball and does not pause: " .. path, function()
      local r = impetus.runner(helpers.root .. "/" .. path, { viewer = true })
      r:start()
      for _ = 1, 3 do assert.is_true(r:step(), tostring(r.error)) end
      local bodies = r.world.body_count
      r:press_key("space")
      r:release_key("space")
      assert.is_false(r.paused, path .. " paused on Space")
      assert.are.equal(bodies + 1, r.world.body_count, path .. ": bodies after Space")
      assert.is_true(r:step(), tostring(r.error))
    end)
  end

  it("S in drape toggles the sphere's friction and does not step the paused world", function()
    local r = impetus.runner(helpers.root .. "/scenes/drape.lua", { viewer = true })
    r:start()
    assert.is_true(r:step(), tostring(r.error))
    local sphere
    for _, h in ipairs(r.world:overlap({ type = "sphere", radius = 100 }, { 0, 0, 0 })) do
      if h.collider and h.collider.shape == "sphere" then sphere = h.collider end
    end
    r:tap_key("space") -- Space is the viewer's here: pause
    assert.is_true(r.paused)
    local steps = r.world.steps
    assert.are.equal(0.6, sphere.friction)
    r:tap_key("s")
    assert.are.equal(steps, r.world.steps, "the viewer stepped on S")
    assert.are.equal(0.02, sphere.friction)
    r:tap_key("right") -- not the scene's: the viewer steps once
    assert.are.equal(steps + 1, r.world.steps)
  end)
end)
