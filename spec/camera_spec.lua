-- The scriptable camera (scripts/impetus/camera.lua) through impetus.camera, headless: set and get,
-- follow with exponential smoothing (closed form), shake that fades to nothing, reset, and errors.
local helpers = require "helpers"
local impetus = require "impetus"

local dir
local function runner_with(src)
  helpers.write(dir .. "/scene.lua", src)
  local r = impetus.runner(dir .. "/scene.lua")
  r:start()
  assert.is_nil(r.error, r.error)
  return r
end

describe("the scriptable camera", function()
  before_each(function() dir = helpers.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("sets and gets the 3D view; a new target alone carries the eye along", function()
    runner_with "return { camera = { eye = {0, 2, 10}, target = {0, 1, 0}, fov = 0.8 } }"
    local v = impetus.camera.get()
    assert.are.equal("3d", v.mode)
    for k, e in ipairs { 0, 2, 10 } do helpers.near(v.eye[k], e, 1e-12, "eye") end
    assert.are.equal(0.8, v.fov)
    impetus.camera.set { target = { 5, 1, 0 } }
    v = impetus.camera.get()
    for k, e in ipairs { 5, 2, 10 } do helpers.near(v.eye[k], e, 1e-12, "eye moved with the target") end
    impetus.camera.set { eye = { 5, 11, 0.5 }, fov = 1.2 }
    v = impetus.camera.get()
    for k, e in ipairs { 5, 11, 0.5 } do helpers.near(v.eye[k], e, 1e-12, "eye") end
    assert.are.equal(1.2, v.fov)
    impetus.camera.set { mode = "2d", center = { 3, 4 }, height = 6 }
    assert.are.same({ mode = "2d", center = { 3, 4 }, height = 6 }, impetus.camera.get())
    impetus.camera.reset()
    assert.are.equal("3d", impetus.camera.get().mode)
  end)

  it("follows a body with exponential smoothing, in 2D and 3D", function()
    local r = runner_with [[
      return { camera = { mode = "2d", center = { 0, 0 }, height = 10 },
        setup = function(world) world.gravity = {0, 0, 0}; world:sphere { radius = 0.5, position = { 4, 2, 0 } } end }
    ]]
    local ball = r.world:bodies()[1]
    impetus.camera.follow(ball, { smoothing = 0.5, offset = { 0, 1, 0 } })
    -- after t seconds a fixed goal is approached to within exp(-t / 0.5) of the way
    for _ = 1, 30 do r:advance(0) r.camera:update(1 / 60) end
    local left = math.exp(-0.5 / 0.5)
    helpers.near(r.camera.cx, 4 * (1 - left), 1e-9, "centre x after 0.5 s")
    helpers.near(r.camera.cy, 3 * (1 - left), 1e-9, "centre y after 0.5 s")
    impetus.camera.follow(ball, { smoothing = 0 })
    r.camera:update(1 / 60)
    assert.are.same({ 4, 2 }, { r.camera.cx, r.camera.cy })
    -- 3D: the target follows, the eye keeps its offset
    impetus.camera.set { eye = { 0, 0, 10 }, target = { 0, 0, 0 } }
    r.camera:update(1)
    local v = impetus.camera.get()
    for k, e in ipairs { 4, 2, 0 } do helpers.near(v.target[k], e, 1e-9, "target on the ball") end
    for k, e in ipairs { 4, 2, 10 } do helpers.near(v.eye[k], e, 1e-9, "eye kept its offset") end
    -- a destroyed body ends the follow
    ball:destroy()
    r.camera:update(1 / 60)
    assert.is_nil(r.camera.following)
  end)

  it("shakes and settles back exactly", function()
    local r = runner_with "return { camera = { mode = '2d', center = { 1, 2 }, height = 10 } }"
    impetus.camera.shake(0.3, 0.5)
    local moved = 0
    for _ = 1, 20 do
      r.camera:update(1 / 60)
      local v = r.camera:view()
      moved = math.max(moved, math.abs(v.cx - 1), math.abs(v.cy - 2))
      assert.is_true(math.abs(v.cx - 1) <= 0.3 and math.abs(v.cy - 2) <= 0.3)
    end
    assert.is_true(moved > 0.05, "it shook: " .. moved)
    for _ = 1, 20 do r.camera:update(1 / 60) end
    local v = r.camera:view()
    assert.are.same({ 1, 2 }, { v.cx, v.cy })
  end)

  it("refuses bad arguments with clear errors", function()
    runner_with "return {}"
    assert.has_error(function() impetus.camera.set { eye = { 1, 1, 1 }, target = { 1, 1, 1 } } end,
      "camera.set: field 'eye' equals field 'target' (1, 1, 1): the view has no direction")
    assert.has_error(function() impetus.camera.set { zoom = 2 } end,
      "camera.set: unknown field 'zoom' (known: mode, eye, target, fov, center, height)")
    assert.has_error(function() impetus.camera.set { fov = 0 / 0 } end)
    assert.has_error(function() impetus.camera.shake(-1) end, "camera.shake: argument 1 (amplitude, m) must be a number >= 0")
    assert.has_error(function() impetus.camera.follow(5) end)
    assert.has_error(function() impetus.camera.follow(function() end, { smooth = 1 }) end,
      "camera.follow: unknown option 'smooth' (known: smoothing, offset)")
  end)

  it("refuses stray entries in its vectors and arguments beyond those it takes, by name", function()
    runner_with "return {}"
    local before = impetus.camera.get()
    local function refuses(fn, message)
      local ok, err = pcall(fn)
      assert.is_false(ok, message)
      assert.matches(message, tostring(err), 1, true)
    end
    refuses(function() impetus.camera.set { eye = { 0, 2, 9, 1 } } end, "camera.set: field 'eye' must be a vector {x, y, z}: unexpected entry [4]")
    refuses(function() impetus.camera.set { target = { 0, 1, 0, w = 1 } } end, "camera.set: field 'target' must be a vector {x, y, z}: unknown field 'w'")
    refuses(function() impetus.camera.set { mode = "2d", center = { 1, 2, 3, 4 } } end, "field 'center' must be a vector {x, y}: unexpected entry [4]")
    refuses(function() impetus.camera.set({ fov = 1 }, true) end, "impetus.camera.set(spec): unexpected argument #2 (boolean)")
    refuses(function() impetus.camera.follow(function() return { 0, 0, 0 } end, { offset = { 0, 1, 0, 0 } }) end,
      "camera.follow: option 'offset' must be a vector {x, y, z}: unexpected entry [4]")
    refuses(function() impetus.camera.follow(nil, {}, 1) end, "impetus.camera.follow(thing [, opts]): unexpected argument #3 (number)")
    refuses(function() impetus.camera.shake(0.1, 0.2, 0.3) end, "impetus.camera.shake(amplitude [, duration]): unexpected argument #3 (number)")
    refuses(function() impetus.camera.reset(true) end, "impetus.camera.reset(): unexpected argument #1 (boolean)")
    refuses(function() impetus.camera.get(1) end, "impetus.camera.get(): unexpected argument #1 (number)")
    refuses(function() impetus.camera.project({ 0, 0, 0 }, 1) end, "impetus.camera.project(point): unexpected argument #2 (number)")
    refuses(function() impetus.camera.ray(1, 2, 3) end, "impetus.camera.ray(x, y): unexpected argument #3 (number)")
    -- nothing refused moved the view or started a follow
    assert.are.same(before, impetus.camera.get())
    assert.is_nil(impetus.runner and require("impetus.active").runner.camera.following)
    -- trailing nils are no arguments
    impetus.camera.shake(0.1, nil, nil)
    impetus.camera.set({ fov = 0.8 }, nil)
    assert.are.equal(0.8, impetus.camera.get().fov)
  end)
end)
