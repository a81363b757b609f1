-- record_spec: a run recorded (record.lua: the scene's texts, its seeds, its snapshot after setup and the
-- history's log of steps, input, reloads and restarts) plays back bit for bit: in the process, and
-- through the host's --replay, which prints the final state hash as the recording run printed it.
local record = require "impetus.record"
local Runner = require "impetus.runner"
local state_hash = require "impetus.state_hash"
local helpers = require "helpers"

local function copy_game(dir)
  os.execute(string.format("cp -r %s/scenes/games/slingshot %s/", helpers.root, dir))
  return dir .. "/slingshot/main.lua"
end

local function edit(path, from, to)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  local n
  text, n = text:gsub(from, to)
  assert(n == 1, "the edit found its text")
  helpers.write(path, text)
end

-- press at the fork, drag back by pull, let go (the slingshot's shot)
local FORK = { -7, 2 }
local function shoot(r, pull)
  local p = { FORK[1] + pull[1], FORK[2] + pull[2], 0 }
  r:press_mouse({ FORK[1], FORK[2], 0 }, 1)
  r:move_mouse { FORK[1] + pull[1] / 2, FORK[2] + pull[2] / 2, 0 }
  r:move_mouse(p)
  r:release_mouse(p, 1)
end

local function steps(r, n)
  for _ = 1, n do assert.is_true(r:step(), tostring(r.error)) end
end

describe("a recorded run", function()
  local dir
  before_each(function() dir = helpers.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("of a game, with shots, a hot reload and a restart, plays back to the same state hash", function()
    local path = copy_game(dir)
    local r = Runner.new(path, { seed = 3, viewer = true })
    record.start(r)
    r:start()
    assert.is_nil(r.error)
    steps(r, 30)
    shoot(r, { -1.4, -0.3 })
    steps(r, 120)
    -- the game changes while it runs: a stronger band (the file's K), saved and reloaded
    edit(path, "local K = 10 ", "local K = 12 ")
    assert.is_true(r:check_reload(), tostring(r.error))
    shoot(r, { -1.2, -0.6 })
    steps(r, 90)
    r:tap_key("r") -- the viewer's restart
    steps(r, 20)
    shoot(r, { -1.6, -0.1 })
    steps(r, 60)
    local file = dir .. "/run.imprec"
    local hash = record.save(r, file)
    assert.are.equal(state_hash.hash(r.world), hash)
    assert.is_true(r.state.shots > 0)
    -- the files on disk change again after the run: the recording holds the texts it ran
    edit(path, "local K = 12 ", "local K = 40 ")
    local player = record.player(record.load(file), { viewer = true })
    player:finish()
    assert.is_nil(player.runner.error)
    assert.are.equal(hash, state_hash.hash(player.runner.world), "played back in the process")
    assert.are.equal(r.state.score, player.runner.state.score)
    -- through the host
    local out, code = helpers.run_host("--replay " .. file .. " --headless")
    assert.are.equal(0, code, out)
    assert.matches("state hash: " .. hash, out)
  end)

  it("with the viewer's restarts (R): played back, each restart happens once, where it happened", function()
    local path = dir .. "/restarts.lua"
    helpers.write(path, [[
local impetus = require "impetus"
return {
  setup = function(world)
    state.starts = (state.starts or 0) + 1 -- counts the setups: a restart replayed twice would show
    world:plane {}
    for i = 1, state.starts do world:sphere { radius = 0.3, position = { i, 2 + impetus.random(), 0 } } end
  end,
  keypressed = function(world, key)
    if key == "k" then world:box { size = { 0.5, 0.5, 0.5 }, position = { 0, 3 + math.random(), 0 } } end
  end,
}]])
    local r = Runner.new(path, { seed = 5, viewer = true })
    record.start(r)
    r:start()
    steps(r, 20)
    r:tap_key("r")
    steps(r, 20)
    r:tap_key("k")
    steps(r, 20)
    r:tap_key("r")
    steps(r, 10)
    assert.are.equal(3, r.state.starts)
    local file = dir .. "/restarts.imprec"
    local hash = record.save(r, file)
    local player = record.player(record.load(file), { viewer = true })
    player:finish()
    assert.are.equal(3, player.runner.state.starts)
    assert.are.equal(hash, state_hash.hash(player.runner.world))
  end)

  it("from the host: --record writes a run, --replay prints the same state hash", function()
    local file = dir .. "/fountain.imprec"
    local out, code = helpers.run_host("--headless --steps 150 --seed 9 --record " .. file .. " scenes/fountain.lua")
    assert.are.equal(0, code, out)
    local hash = out:match("state hash: (%x+)")
    assert.truthy(hash, out)
    out, code = helpers.run_host("--replay " .. file .. " --headless")
    assert.are.equal(0, code, out)
    assert.matches("steps: 150", out)
    assert.matches("state hash: " .. hash, out)
  end)

  it("refuses a file that is not a recording, another format and a corrupt one, by name", function()
    local function refused(text, expect)
      local file = dir .. "/bad.imprec"
      helpers.write(file, text)
      local ok, err = pcall(record.load, file)
      assert.is_false(ok)
      assert.truthy(err:find(expect, 1, true), err)
      local out, code = helpers.run_host("--replay " .. file .. " --headless")
      assert.are_not.equal(0, code)
      assert.truthy(out:find(expect, 1, true), out)
    end
    refused("return {}", "is not an impetus recording")
    refused("-- impetus recording, format 7: ...\nreturn {}", "is a recording of format 7; this build plays format 1")
    refused("-- impetus recording, format 1: ...\nreturn { log = ", "is corrupt")
  end)
end)
