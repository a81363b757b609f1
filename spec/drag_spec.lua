-- Mouse picking and dragging in the run loop (scripts/impetus/run.lua), driven by synthetic events
-- through a stand-in for impetus.gfx: a body under the cursor is held by a spring at the grabbed point.
local helpers = require "helpers"
local run = require "impetus.run"
local Runner = require "impetus.runner"

-- a camera looking down -z from (0, 0, 10); pixel (x, y) maps to a ray through (x/100, -y/100, 0)
local fake_gfx = {
  unproject = function(x, y)
    local d = { x / 100, -y / 100, -10 }
    local l = math.sqrt(d[1] ^ 2 + d[2] ^ 2 + d[3] ^ 2)
    return { 0, 0, 10 }, { d[1] / l, d[2] / l, d[3] / l }
  end,
  size = function() return 800, 600 end,
  debug = function() return {} end,
}

local function app_with(scene_src)
  local dir = helpers.tmpdir()
  local path = dir .. "/scene.lua"
  helpers.write(path, scene_src)
  local r = Runner.new(path, {})
  r:start()
  assert.is_nil(r.error)
  return run.App.new(r, fake_gfx, {}), r
end

describe("dragging bodies with the mouse", function()
  it("grabs the body under the cursor and pulls the grabbed point to the cursor", function()
    local app, r = app_with [[
      return { setup = function(world)
        world.gravity = { 0, 0, 0 }
        body = world:box { size = { 1, 1, 1 }, position = { 0, 0, 0 } }
      end }
    ]]
    local body = r.world:bodies()[1]
    -- press on the box's face (pixel 20, -20 -> towards (0.2, 0.2, 0)), then move the mouse right
    app:event { type = "mousedown", button = 1, x = 20, y = -20 }
    assert.is_truthy(app.drag and app.drag.body == body, "the box is grabbed")
    local grab = app.drag.target
    helpers.near(grab[3], 0.5, 1e-9, "grabbed on the front face")
    app:event { type = "mousemove", x = 120, y = -20, dx = 100, dy = 0, buttons = 1 }
    for _ = 1, 600 do r:step() end
    local p = app:grab_point()
    local t = app.drag.target
    for k = 1, 3 do helpers.near(p[k], t[k], 0.02, "the grabbed point reaches the cursor") end
    assert.is_true(body.position[1] > 0.8, "the body followed: x = " .. body.position[1])
    app:event { type = "mouseup", button = 1, x = 120, y = -20 }
    assert.is_nil(app.drag)
    assert.is_nil(r.before_step, "the spring is gone")
  end)

  it("leaves static bodies alone (the camera orbits instead)", function()
    local app, r = app_with [[
      return { setup = function(world) world:body { static = true, shapes = { { type = "box", size = { 1, 1, 1 } } } } end }
    ]]
    app:event { type = "mousedown", button = 1, x = 0, y = 0 }
    assert.is_nil(app.drag)
    assert.is_nil(r.before_step)
  end)
end)
