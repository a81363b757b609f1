-- Input for scenes: the LOVE-style callbacks, polling through impetus.input, mouse coordinates in the
-- world, the viewer stepping aside for games, and scripted input through the runner (what a spec that
-- plays a game uses). Every event takes the path a window's event takes: runner:event.
local helpers = require "helpers"
local impetus = require "impetus"
local Runner = require "impetus.runner"

local dir
local function runner_with(src, opts)
  local path = dir .. "/scene.lua"
  helpers.write(path, src)
  local r = Runner.new(path, opts or { viewer = true })
  r:start()
  assert.is_nil(r.error, r.error)
  return r, path
end

describe("input for scenes", function()
  before_each(function() dir = helpers.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("calls the mouse, wheel and key callbacks with the world first, as LOVE's", function()
    local r = runner_with [[
      log = {}
      local function note(...) log[#log + 1] = table.pack(...) end
      return {
        keypressed = function(world, key, isrepeat) note("keypressed", world, key, isrepeat) end,
        keyreleased = function(world, key) note("keyreleased", world, key) end,
        mousepressed = function(world, x, y, button) note("mousepressed", world, x, y, button) end,
        mousereleased = function(world, x, y, button) note("mousereleased", world, x, y, button) end,
        mousemoved = function(world, x, y, dx, dy) note("mousemoved", world, x, y, dx, dy) end,
        wheelmoved = function(world, dx, dy) note("wheelmoved", world, dx, dy) end,
      }
    ]]
    r:press_key("a")
    r:event { type = "keydown", key = "a", isrepeat = true }
    r:release_key("a")
    r:move_mouse(100, 50)
    r:move_mouse(130, 40)
    r:press_mouse(130, 40, 2)
    r:release_mouse(130, 40, 2)
    r:wheel(0, -3)
    local log, w = r.env.log, r.world
    local expect = {
      { "keypressed", w, "a", false }, { "keypressed", w, "a", true }, { "keyreleased", w, "a" },
      { "mousemoved", w, 100, 50, 100, 50 }, { "mousemoved", w, 130, 40, 30, -10 },
      { "mousepressed", w, 130, 40, 2 }, { "mousereleased", w, 130, 40, 2 }, { "wheelmoved", w, 0, -3 },
    }
    assert.are.equal(#expect, #log)
    for i, e in ipairs(expect) do
      for k, v in ipairs(e) do assert.are.equal(v, log[i][k], string.format("event %d (%s) argument %d", i, e[1], k)) end
    end
  end)

  it("polls keys, buttons and the mouse position", function()
    local r = runner_with [[
      seen = {}
      return { update = function(world, dt)
        local x, y = impetus.input.mouse_position()
        seen[#seen + 1] = { impetus.input.key_down("left"), impetus.input.mouse_down(1), x, y }
      end }
    ]]
    r.env.impetus = impetus
    r:step()
    r:press_key("left")
    r:press_mouse(10, 20, 1)
    r:step()
    r:release_key("left")
    r:release_mouse(11, 21, 1)
    r:step()
    assert.are.same({ false, false, 0, 0 }, r.env.seen[1])
    assert.are.same({ true, true, 10, 20 }, r.env.seen[2])
    assert.are.same({ false, false, 11, 21 }, r.env.seen[3])
    -- keys released while the window had no focus never report: losing focus forgets them
    r:press_key("up")
    r:press_mouse(5, 5, 2)
    r:event { type = "focuslost" }
    assert.is_false(impetus.input.key_down("up"))
    assert.is_false(impetus.input.mouse_down(2))
    assert.has_error(function() impetus.input.key_down(5) end, "impetus.input.key_down: argument 'key' must be a key name such as \"space\"")
  end)

  it("gives the mouse in world coordinates on z = 0 with the 2D camera", function()
    local r = runner_with [[ return { camera = { mode = "2d", center = { 1, 4 }, height = 12 } } ]]
    -- 1280 x 720: the centre pixel is the camera centre; 60 pixels per metre
    r:move_mouse(640, 360)
    assert.are.same({ 1, 4, 0 }, impetus.input.mouse_world())
    r:move_mouse(0, 0)
    local p = impetus.input.mouse_world()
    helpers.near(p[1], 1 - 640 / 60, 1e-12, "left edge x")
    helpers.near(p[2], 4 + 6, 1e-12, "top edge y")
    -- and back: the world point projects onto the pixel
    local x, y = impetus.camera.project { 3, 2, 0 }
    helpers.near(x, 640 + 2 * 60, 1e-9, "pixel x")
    helpers.near(y, 360 + 2 * 60, 1e-9, "pixel y")
  end)

  it("gives the mouse ray and its first hit with the 3D camera", function()
    local r = runner_with [[
      return { camera = { eye = { 0, 0, 10 }, target = { 0, 0, 0 }, fov = 0.9 },
        setup = function(world) world.gravity = { 0, 0, 0 }; world:box { size = { 2, 2, 2 } } end }
    ]]
    r:move_mouse(640, 360)
    local o, d = impetus.input.mouse_ray()
    assert.are.same({ 0, 0, 10 }, o)
    helpers.near(d[3], -1, 1e-12, "straight ahead")
    local hit = impetus.input.mouse_hit()
    assert.are.equal(r.world:bodies()[1], hit.body)
    helpers.near(impetus.input.mouse_world()[3], 1, 1e-9, "the front face at z = 1")
    -- a pixel 100 px right of centre: tan of its angle is 100 / 360 * tan(fov / 2)
    r:move_mouse(740, 360)
    _, d = impetus.input.mouse_ray()
    helpers.near(d[1] / -d[3], 100 / 360 * math.tan(0.45), 1e-12, "ray slope")
    r:move_mouse(5, 5)
    assert.is_nil(impetus.input.mouse_hit())
    assert.is_nil(impetus.input.mouse_world())
  end)
end)

describe("the viewer steps aside for games", function()
  before_each(function() dir = helpers.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("leaves keys the scene lists in `keys` to the scene (Space fires, it does not pause)", function()
    local r = runner_with [[
      fired = 0
      return { keys = { { "space", "fire" } },
        keypressed = function(world, key) if key == "space" then fired = fired + 1 end end }
    ]]
    r:tap_key("space")
    assert.are.equal(1, r.env.fired)
    assert.is_false(r.paused)
  end)

  it("leaves a key to a handler that returns true, and acts on the others", function()
    local r = runner_with [[
      return { keypressed = function(world, key) return key == "s" end }
    ]]
    r:tap_key("space")
    assert.is_true(r.paused, "space is not claimed: the viewer pauses")
    local t = r.world.time
    r:tap_key("s")
    assert.are.equal(t, r.world.time, "S claimed: no single step")
    r:tap_key("right")
    assert.is_true(r.world.time > t, "Right: a single step")
  end)

  it("turns its keys, mouse, HUD and grid off on request; F1 and Esc always work", function()
    local r = runner_with [[
      return { viewer = { keys = false, mouse = false, hud = false, grid = false },
        setup = function(world) world.gravity = { 0, 0, 0 }; world:box { size = { 1, 1, 1 } } end }
    ]]
    local world = r.world
    r:tap_key("r")
    assert.are.equal(world, r.world, "R does not restart")
    r:tap_key("space")
    assert.is_false(r.paused)
    local yaw, distance = r.camera.yaw, r.camera.distance
    r:press_mouse { 0, 0, 0 }
    assert.is_nil(r.viewer.drag, "no drag")
    r:move_mouse(r.input.x + 80, r.input.y)
    r:release_mouse(r.input.x, r.input.y)
    r:wheel(0, 2)
    assert.are.equal(yaw, r.camera.yaw)
    assert.are.equal(distance, r.camera.distance)
    assert.is_false(r.viewer:grid_shown())
    r:tap_key("f1")
    assert.is_true(r.viewer.help)
    r:tap_key("escape")
    assert.is_true(r.viewer.quit)
    -- viewer = false: the same, all at once
    r = runner_with [[ return { viewer = false } ]]
    r:tap_key("space")
    assert.is_false(r.paused)
    r:tap_key("escape")
    assert.is_true(r.viewer.quit)
  end)

  it("lets every viewer key work while a script error is shown, so R restarts", function()
    local r = runner_with [[
      return { viewer = false, keys = { { "r", "reset the level" } },
        update = function(world) if world.time > 0.05 then error("boom") end end }
    ]]
    for _ = 1, 10 do r:step() end
    assert.matches("boom", r.error)
    r:tap_key("r")
    assert.is_nil(r.error)
    assert.are.equal(0, r.world.time)
  end)

  it("leaves a press the scene claims to it: no drag, no orbit until the release", function()
    local r = runner_with [[
      return { camera = { eye = { 0, 0, 10 }, target = { 0, 0, 0 } },
        mousepressed = function(world, x, y, button) return button == 1 end,
        setup = function(world) world.gravity = { 0, 0, 0 }; world:box { size = { 1, 1, 1 } } end }
    ]]
    local yaw = r.camera.yaw
    r:press_mouse({ 0, 0, 0.5 }, 1)
    assert.is_nil(r.viewer.drag)
    r:move_mouse(r.input.x + 100, r.input.y)
    assert.are.equal(yaw, r.camera.yaw)
    r:release_mouse(r.input.x, r.input.y, 1)
    -- the right button is not claimed: it pans
    local target = r.camera.target[1]
    r:press_mouse(600, 300, 2)
    r:move_mouse(650, 300)
    assert.is_true(r.camera.target[1] < target, "right drag pans")
  end)

  it("refuses arguments its polling functions do not take, by position", function()
    runner_with "return {}"
    for _, case in ipairs {
      { function() impetus.input.key_down("a", true) end, "impetus.input.key_down(key): unexpected argument #2 (boolean)" },
      { function() impetus.input.mouse_down(1, 2) end, "impetus.input.mouse_down([button]): unexpected argument #2 (number)" },
      { function() impetus.input.mouse_position(1) end, "impetus.input.mouse_position(): unexpected argument #1 (number)" },
      { function() impetus.input.mouse_world({}) end, "impetus.input.mouse_world(): unexpected argument #1 (table)" },
      { function() impetus.input.mouse_ray(1) end, "impetus.input.mouse_ray(): unexpected argument #1 (number)" },
      { function() impetus.input.mouse_hit(1) end, "impetus.input.mouse_hit(): unexpected argument #1 (number)" },
      { function() impetus.input.size(1) end, "impetus.input.size(): unexpected argument #1 (number)" },
      { function() impetus.restart(true) end, "impetus.restart(): unexpected argument #1 (boolean)" },
      { function() impetus.quit(1) end, "impetus.quit(): unexpected argument #1 (number)" },
    } do
      local ok, err = pcall(case[1])
      assert.is_false(ok, case[2])
      assert.matches(case[2], tostring(err), 1, true)
    end
    assert.is_false(impetus.input.key_down("a", nil), "a trailing nil is no argument")
  end)

  it("lists the scene's keys first in the help", function()
    local r = runner_with [[ return { keys = { { "space", "fire" }, { "left / right", "aim" } } } ]]
    local drawn = {}
    local gfx = {
      size = function() return 1280, 720 end, line_height = function() return 16 end,
      text_width = function(s) return 8 * #s end, rect = function() end,
      text = function(x, y, s) drawn[#drawn + 1] = s end, line = function() end,
    }
    r:tap_key("f1")
    r.viewer:draw(gfx, { title = "t", step_ms = 0 })
    local joined = table.concat(drawn, "|")
    assert.matches("this scene|space|fire|left / right|aim|impetus|S|single step (while paused)|R|restart", joined, 1, true)
    assert.are.same({ space = true, left = true, right = true }, r.scene_keys)
    -- the host's keys the scene took are not offered: Space is the scene's, Right no longer steps
    assert.is_nil(joined:find("|Space|", 1, true))
    assert.is_nil(joined:find("S or Right", 1, true))
    assert.is_nil(joined:find("pause / resume", 1, true))
    -- and what is offered still acts: S steps while paused, Space fires and does not pause
    r:tap_key("space")
    assert.is_false(r.paused)
  end)
end)

describe("scripted input", function()
  before_each(function() dir = helpers.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("aims in world coordinates through the scene's camera", function()
    local r = runner_with([[
      return { camera = { mode = "2d", center = { 0, 0 }, height = 10 },
        mousepressed = function(world, x, y, b) start = impetus.input.mouse_world() return true end,
        mousereleased = function(world, x, y, b) stop = impetus.input.mouse_world() end }
    ]], {})
    r.env.impetus = impetus
    r:press_mouse({ -2, 1, 0 }, 1)
    r:release_mouse({ -4, -0.5, 0 }, 1)
    for k, v in ipairs { -2, 1, 0 } do helpers.near(r.env.start[k], v, 1e-9, "press point") end
    for k, v in ipairs { -4, -0.5, 0 } do helpers.near(r.env.stop[k], v, 1e-9, "release point") end
    assert.has_error(function() r:press_mouse("a") end)
  end)
end)
