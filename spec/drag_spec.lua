-- Mouse picking and dragging by the viewer (scripts/impetus/viewer.lua, drag.lua), driven by scripted
-- input through a runner: a body under the cursor is held by a spring at the grabbed point, in the 3D
-- camera and in the 2D one.
local helpers = require "helpers"
local Runner = require "impetus.runner"

local function runner_with(scene_src)
  local dir = helpers.tmpdir()
  local path = dir .. "/scene.lua"
  helpers.write(path, scene_src)
  local r = Runner.new(path, { viewer = true })
  r:start()
  assert.is_nil(r.error)
  os.execute("rm -rf " .. dir)
  return r
end

describe("dragging bodies with the mouse", function()
  it("grabs the body under the cursor and pulls the grabbed point to the cursor", function()
    local r = runner_with [[
      return { camera = { eye = { 0, 0, 10 }, target = { 0, 0, 0 } },
        setup = function(world)
          world.gravity = { 0, 0, 0 }
          world:box { size = { 1, 1, 1 }, position = { 0, 0, 0 } }
        end }
    ]]
    local body = r.world:bodies()[1]
    -- press on the box's front face at (0.2, 0.2, 0.5), then move the mouse 1 m to the right there
    r:press_mouse { 0.2, 0.2, 0.5 }
    local drag = r.viewer.drag
    assert.is_truthy(drag and drag.body == body, "the box is grabbed")
    helpers.near(drag.target[1], 0.2, 1e-9, "grabbed x")
    helpers.near(drag.target[3], 0.5, 1e-9, "grabbed on the front face")
    r:move_mouse { 1.2, 0.2, 0.5 }
    -- the target: on the new ray, as far from the eye (0, 0, 10) as the grabbed point was
    local depth = math.sqrt(0.2 ^ 2 + 0.2 ^ 2 + 9.5 ^ 2)
    local to = { 1.2, 0.2, -9.5 }
    local l = math.sqrt(1.2 ^ 2 + 0.2 ^ 2 + 9.5 ^ 2)
    for k, e in ipairs { 0, 0, 10 } do
      helpers.near(drag.target[k], e + to[k] / l * depth, 1e-9, "the target follows the cursor at the grabbed depth")
    end
    for _ = 1, 600 do r:step() end
    local p = drag:grab_point()
    -- within a few cm: the box keeps the spin the pull gave it (nothing damps a turn about the grabbed
    -- point), and its wobble moves the point a little
    for k = 1, 3 do helpers.near(p[k], drag.target[k], 0.05, "the grabbed point reaches the cursor") end
    assert.is_true(body.position[1] > 0.8, "the body followed: x = " .. body.position[1])
    r:release_mouse { 1.2, 0.2, 0.5 }
    assert.is_nil(r.viewer.drag)
    assert.is_nil(r.before_step, "the spring is gone")
  end)

  it("leaves static bodies alone (the camera orbits instead)", function()
    local r = runner_with [[
      return { setup = function(world) world:body { static = true, shapes = { { type = "box", size = { 1, 1, 1 } } } } end }
    ]]
    local yaw = r.camera.yaw
    r:press_mouse { 0, 0, 0 }
    assert.is_nil(r.viewer.drag)
    assert.is_nil(r.before_step)
    r:move_mouse(r.input.x + 50, r.input.y)
    assert.is_true(math.abs(r.camera.yaw - yaw) > 0.1, "the camera orbited")
  end)

  it("drags a crate in the 2D camera, in its plane", function()
    -- the 2D view looks down -z from far in front of z = 0: the pick ray must reach the crate
    local r = runner_with [[
      return { camera = { mode = "2d", center = { 0, 4 }, height = 12 },
        setup = function(world)
          world.planar = true
          world:box { static = true, size = { 20, 1, 2 }, position = { 0, -0.5, 0 } }
          world:box { size = { 1, 1, 1 }, position = { 2, 0.5, 0 }, mass = 2 }
        end }
    ]]
    local crate = r.world:bodies()[1] -- (the static box is a Collider)
    local cx, cy = r.camera.cx, r.camera.cy
    r:press_mouse { 2.1, 0.6, 0 }
    assert.is_truthy(r.viewer.drag and r.viewer.drag.body == crate, "the crate is grabbed, not the view panned")
    helpers.near(r.viewer.drag.target[3], 0.5, 1e-9, "grabbed on the crate's front face")
    r:move_mouse { 2.1, 3.6, 0 }
    for _ = 1, 240 do r:step() end
    assert.are.equal(cx, r.camera.cx)
    assert.are.equal(cy, r.camera.cy)
    helpers.near(crate.position[2], 3.5, 0.1, "lifted 3 m by the mouse")
    helpers.near(crate.position[3], 0, 1e-9, "still in the plane z = 0")
    r:release_mouse { 2.1, 3.6, 0 }
    assert.is_nil(r.before_step)
  end)
end)
