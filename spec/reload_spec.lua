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
