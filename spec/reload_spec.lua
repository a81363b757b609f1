-- Hot reload and script errors, driven through the same runner the host's frame loop uses.
local impetus = require "impetus"
local guard = require "impetus.guard"
local helpers = require "helpers"

local V1 = [[
return {
  title = "reload test",
  setup = function(world)
    world.gravity = {0, 0, 0}
    marker = world:particle{ position = {0, 0, 0}, kinematic = true }
  end,
  update = function(world, dt) marker.velocity = {1, 0, 0} end,
}
]]

local V2 = [[
return {
  title = "reload test, second version",
  setup = function(world) error("setup must not run again on reload") end,
  update = function(world, dt) world:particles()[1].velocity = {0, 0, 2} end,
  on_reload = function(world) world:particles()[1].data.reloaded = true end,
}
]]

local function steps(r, n)
  for _ = 1, n do r:step() end
end

describe("hot reload", function()
  local dir, path
  before_each(function()
    dir = helpers.tmpdir()
    path = dir .. "/scene.lua"
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("swaps the handlers and keeps the world", function()
    helpers.write(path, V1)
    local r = impetus.runner(path)
    r:start()
    assert.is_nil(r.error)
    steps(r, 30)
    local p = r.world:particles()[1]
    helpers.near(p.position[1], 0.5, 1e-9, "x after v1")
    assert.is_false(r:check_reload())
    helpers.write(path, V2)
    assert.is_true(r:check_reload())
    assert.is_nil(r.error)
    assert.are.equal("reload test, second version", r.scene.title)
    assert.is_true(p.data.reloaded)
    helpers.near(r.world.time, 0.5, 1e-9, "time kept across the reload")
    steps(r, 30)
    helpers.near(p.position[1], 0.5, 1e-9, "x kept")
    helpers.near(p.position[3], 1.0, 1e-9, "z moved by the new update")
  end)

  it("shows a syntax error, waits, and resumes when the fix is saved", function()
    helpers.write(path, V1)
    local r = impetus.runner(path)
    r:start()
    steps(r, 6)
    helpers.write(path, "return { update = function(world, dt) marker.velocity = {1, 0, 0} end ")
    assert.is_false(r:check_reload())
    assert.matches("syntax error", r.error)
    local t = r.world.time
    assert.is_false(r:step())
    assert.are.equal(0, r:advance(1.0))
    assert.are.equal(t, r.world.time)
    helpers.write(path, V1 .. "\n-- fixed\n")
    assert.is_true(r:check_reload())
    assert.is_nil(r.error)
    assert.is_true(r:step())
    helpers.near(r.world.time, t + 1 / 60, 1e-12, "time")
  end)

  it("reports a runtime error with a traceback and keeps the world", function()
    helpers.write(path, [[
return {
  setup = function(world) world:particle{ position = {0, 5, 0} } end,
  update = function(world, dt) if world.time > 0.1 then local t = nil; return t.oops end end,
}]])
    local r = impetus.runner(path)
    r:start()
    for _ = 1, 20 do r:step() end
    assert.matches("update: .*attempt to index a nil value", r.error)
    assert.matches("stack traceback", r.error)
    local p = r.world:particles()[1]
    local y = p.position[2]
    r:step()
    assert.are.equal(y, p.position[2])
  end)

  it("reloads when a module the scene required from its folder changes", function()
    helpers.write(dir .. "/tuning.lua", "return { speed = 1 }\n")
    helpers.write(path, [[
local tuning = require "tuning"
return {
  setup = function(world) world.gravity = {0, 0, 0}; world:particle{ kinematic = true } end,
  update = function(world, dt) world:particles()[1].velocity = {tuning.speed, 0, 0} end,
}]])
    local r = impetus.runner(path)
    r:start()
    steps(r, 60)
    local p = r.world:particles()[1]
    helpers.near(p.position[1], 1, 1e-9, "x at speed 1")
    helpers.write(dir .. "/tuning.lua", "return { speed = -3.0 }\n")
    assert.is_true(r:changed())
    assert.is_true(r:check_reload())
    steps(r, 60)
    helpers.near(p.position[1], -2, 1e-9, "x after the module changed")
  end)

  it("reports a force field error after the step with the world intact", function()
    helpers.write(path, [[
return {
  setup = function(world)
    world:particle{ position = {0, 10, 0} }
    world:field(function(x, y, z) if y < 9 then error("field broke at y = " .. y) end end)
  end,
}]])
    local r = impetus.runner(path)
    r:start()
    for _ = 1, 200 do if not r:step() then break end end
    assert.matches("field broke at y = ", r.error)
    assert.matches("the step was undone", r.error)
    local p = r.world:particles()[1]
    assert.is_true(p.position[2] >= 9 - 1e-9, "state from before the failing step")
  end)
end)

describe("runaway scripts", function()
  local saved
  before_each(function() saved = guard.limit; guard.limit = 0.2 end)
  after_each(function() guard.limit = saved end)

  it("are interrupted with a clear error and the world is kept", function()
    local dir = helpers.tmpdir()
    local path = dir .. "/loop.lua"
    helpers.write(path, [[
return {
  setup = function(world) world:particle{ position = {0, 1, 0} } end,
  update = function(world, dt) if world.time > 0.05 then while true do end end end,
}]])
    local r = impetus.runner(path)
    r:start()
    local t0 = os.clock()
    for _ = 1, 10 do r:step() end
    assert.is_true(os.clock() - t0 < 2, "the loop was not interrupted in time")
    assert.matches("update ran for more than 0.2 s without returning: an endless loop%?", r.error)
    assert.is_true(r.world.time > 0.05)
    os.execute("rm -rf " .. dir)
  end)

  it("inside a force field are interrupted too", function()
    local w = impetus.world()
    w:particle {}
    w:field(function() while true do end end)
    local ok, err = guard.call("world:step", w.step, w, 0.01)
    assert.is_false(ok)
    assert.matches("endless loop", err)
    assert.are.equal(0, w.time)
  end)
end)

describe("runaway scripts that swallow the watchdog's error", function()
  local saved
  before_each(function() saved = guard.limit; guard.limit = 0.2 end)
  after_each(function() guard.limit = saved end)

  it("are interrupted: the watchdog fires again until the callback returns", function()
    local t0 = os.clock()
    local ok, err = guard.call("update", function() while true do pcall(function() end) end end)
    assert.is_false(ok)
    assert.matches("update ran for more than 0.2 s without returning", err)
    -- nested pcalls, and an error handler that returns normally
    ok, err = guard.call("update", function()
      while true do pcall(pcall, function() while true do end end) end
    end)
    assert.is_false(ok)
    ok, err = guard.call("update", function() pcall(function() while true do end end) return "done" end)
    assert.is_false(ok, "a callback that caught the watchdog's error still failed")
    assert.matches("endless loop", err)
    assert.is_true(os.clock() - t0 < 5, "each was stopped soon after the limit")
    -- afterwards nothing is left hooked: plain code runs on
    local x = 0
    for i = 1, 1e6 do x = x + i end
    assert.are.equal(500000500000, x)
    assert.is_nil(debug.gethook())
  end)

  it("in coroutines the scene makes are interrupted too", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/co.lua", [[
return { update = function(world) coroutine.wrap(function() while true do end end)() end }]])
    local r = impetus.runner(dir .. "/co.lua")
    r:start()
    assert.is_false(r:step())
    assert.matches("endless loop", r.error)
    os.execute("rm -rf " .. dir)
  end)
end)

describe("hot reload without traps", function()
  local dir, path
  before_each(function()
    dir = helpers.tmpdir()
    path = dir .. "/scene.lua"
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  local function scene(points, handler_extra)
    return string.format([[
local function on_hit(self, other, e) if e.kind == "begin" then state.score = %d; state.hits = state.hits + 1 end end
local inline_seen = 0
return {
  setup = function(world)
    state.score, state.hits = 0, 0
    state.restarts = (state.restarts or 0) + 1
    world:plane { normal = { 0, 1, 0 } }
    local ball = world:sphere { radius = 0.5, position = { 0, 1, 0 } }
    impetus.on_contact(ball, on_hit)
    %s
  end,
}]], points, handler_extra or "")
  end

  it("runs the newest code of on_contact handlers after a reload, and keeps `state`", function()
    helpers.write(path, "local impetus = require 'impetus'\n" .. scene(1))
    local r = impetus.runner(path)
    r:start()
    assert.is_nil(r.error)
    local state = r.state
    for _ = 1, 120 do r:step() end
    assert.are.equal(1, state.score, "the first version's handler ran")
    local hits = state.hits
    assert.is_true(hits >= 1)
    -- the handler changes: the ball bounces again (kicked up) and the next landing counts 10
    helpers.write(path, "local impetus = require 'impetus'\n" .. scene(10) .. "\n-- v2\n")
    assert.is_true(r:check_reload())
    assert.is_nil(r.warning)
    assert.are.equal(state, r.env.state, "state is the same table after the reload")
    assert.are.equal(1, state.score)
    assert.are.equal(hits, state.hits, "state kept across the reload")
    local ball = r.world:bodies()[1]
    ball.position = { 0, 2, 0 }
    ball.velocity = { 0, 0, 0 }
    for _ = 1, 120 do r:step() end
    assert.are.equal(10, state.score, "the reloaded handler ran")
    assert.is_true(state.hits > hits)
    -- a restart runs setup again on a fresh world; state survives it (setup decides what to reset)
    r:restart()
    assert.are.equal(0, state.score)
    assert.are.equal(2, state.restarts)
  end)

  it("says which inline handlers keep their old code", function()
    helpers.write(path, "local impetus = require 'impetus'\n" ..
      scene(1, "impetus.on_contact(world:box{ size = {1, 1, 1}, position = {3, 0.5, 0} }, function() end)"))
    local r = impetus.runner(path)
    r:start()
    assert.is_nil(r.error)
    helpers.write(path, "local impetus = require 'impetus'\n" ..
      scene(2, "impetus.on_contact(world:box{ size = {1, 1, 1}, position = {3, 0.5, 0} }, function() end)") .. "\n")
    assert.is_true(r:check_reload())
    assert.matches("handlers made inside a function keep their old code until R: scene.lua:%d+", r.warning)
  end)

  it("re-applies the scene's camera when a reload changed it, on R, and on Home", function()
    helpers.write(path, "return { camera = { eye = {0, 2, 10}, target = {0, 0, 0} } }")
    local r = impetus.runner(path, { viewer = true })
    r:start()
    r.camera:orbit(100, 0)
    local yaw = r.camera.yaw
    helpers.write(path, "return { camera = { eye = {0, 2, 10}, target = {0, 0, 0} }, title = 'same camera' }")
    assert.is_true(r:check_reload())
    assert.are.equal(yaw, r.camera.yaw, "an unchanged camera table leaves the user's view alone")
    helpers.write(path, "return { camera = { eye = {10, 0, 0}, target = {0, 0, 0} } }")
    assert.is_true(r:check_reload())
    local eye = r.camera:eye()
    helpers.near(eye[1], 10, 1e-9, "changed camera applied")
    r.camera:zoom(5)
    r:tap_key("home")
    helpers.near(r.camera:eye()[1], 10, 1e-9, "Home resets the view")
    r.camera:pan(50, 50, 720)
    r:tap_key("r")
    helpers.near(r.camera.target[2], 0, 1e-9, "R resets the view")
  end)
end)
