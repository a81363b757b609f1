-- history_spec: the viewer's history (history.lua) through the runner, headless: going back to any tick
-- of the reach gives the state the run had there, bit for bit (world, score, dice, handles), resuming
-- from there with the same input runs as the run did, memory stays within the budget for the 1000-box
-- pile, and after a hot reload a rewound run continues with the new code.
local impetus = require "impetus"
local Runner = require "impetus.runner"
local state_hash = require "impetus.state_hash"
local helpers = require "helpers"

local function runner(path, opts)
  opts = opts or {}
  opts.history = opts.history or true
  opts.viewer = true
  opts.seed = opts.seed or 11
  local r = Runner.new(path, opts)
  r:start()
  assert.is_nil(r.error, tostring(r.error))
  return r
end

-- steps to tick n, calling input(r, tick) before each; the hash after each tick (only those in `at`,
-- a set of ticks, when given: a hash of a large world costs more than its step)
local function play(r, n, input, hashes, at)
  hashes = hashes or {}
  while r.tick < n do
    if input then input(r, r.tick) end
    assert.is_true(r:step(), tostring(r.error))
    if not at or at[r.tick] then hashes[r.tick] = state_hash.hash(r.world) end
  end
  return hashes
end

describe("the history", function()
  it("keeps the 1000-box pile within 64 MB and reaches back 30 s, exactly", function()
    local r = runner("scenes/bench/pile_1000.lua")
    local h = r.history
    local peak, hashes = 0, {}
    local at = { [300] = true, [307] = true, [1499] = true, [2099] = true }
    for _ = 1, 35 * 60 do
      assert.is_true(r:step())
      if at[r.tick] then hashes[r.tick] = state_hash.hash(r.world) end
      peak = math.max(peak, h:bytes())
    end
    local oldest, newest = h:reach()
    assert.is_true(peak <= 64 * 2 ^ 20, string.format("the history held %.1f MB", peak / 2 ^ 20))
    assert.is_true((newest - oldest) * r:step_dt() >= 30, "it reaches back " .. (newest - oldest) / 60 .. " s")
    -- what it holds, measured: the keyframes' snapshots (each the pile's whole state) and their Lua data
    local snaps = 0
    for _, kf in ipairs(h.keyframes) do snaps = snaps + kf.snap.bytes end
    assert.is_true(snaps > 0.9 * h:bytes(), "the snapshots are most of it")
    assert.are.equal(2100, newest)
    for _, t in ipairs { 300, 307, 1499, 2099 } do
      assert.is_true(h:seek(t))
      assert.are.equal(t, r.tick)
      assert.are.equal(hashes[t], state_hash.hash(r.world), "tick " .. t)
    end
  end)

  it("rewinds a game: its score, its dice (impetus.random and math.random), a file's local, its handles", function()
    local dir = helpers.tmpdir()
    local path = dir .. "/dice.lua"
    helpers.write(path, [[
local impetus = require "impetus"
local rolls = 0 -- a file-level local: an upvalue of the handlers
return {
  setup = function(world)
    state.score, state.dice, state.balls = 0, {}, {}
    world:plane {}
    state.goal = world:box { static = true, size = { 1, 0.2, 1 }, position = { 0, 0.1, 0 } }
  end,
  update = function(world, dt)
    if world.steps % 20 == 0 then
      rolls = rolls + 1
      local die = impetus.random(6)
      state.dice[#state.dice + 1] = die
      local ball = world:sphere { radius = 0.2, position = { (impetus.random() - 0.5) * 0.8, 2 + die, math.random() - 0.5 } }
      state.balls[#state.balls + 1] = ball
      impetus.on_contact(ball, function(self, other, e)
        if other == state.goal and e.kind == "begin" then state.score = state.score + die + rolls end
      end)
    end
    if #state.balls > 6 then table.remove(state.balls, 1):destroy() end
  end,
  keypressed = function(world, key) if key == "k" then state.score = state.score * 2 end end,
}]])
    local r = runner(path)
    local function input(rr, tick) if tick == 150 or tick == 260 then rr:tap_key("k") end end
    local function lua_state()
      local balls = {}
      for _, b in ipairs(r.state.balls) do balls[#balls + 1] = tostring(b:valid()) end
      return string.format("%d %s %s", r.state.score, table.concat(r.state.dice, ","), table.concat(balls, ","))
    end
    local hashes, scores = {}, {}
    while r.tick < 400 do
      input(r, r.tick)
      assert.is_true(r:step(), tostring(r.error))
      hashes[r.tick], scores[r.tick] = state_hash.hash(r.world), lua_state()
    end
    assert.is_true(r.state.score > 0, "balls landed on the goal")
    for _, t in ipairs { 120, 255, 31, 399, 200 } do
      r.history:seek(t)
      assert.are.equal(hashes[t], state_hash.hash(r.world), "the world at tick " .. t)
      assert.are.equal(scores[t], lua_state(), "the score, the dice and the balls at tick " .. t)
    end
    -- resume from tick 140 with the same input: the same run again, to the last bit
    r.history:seek(140)
    r.paused = false
    while r.tick < 400 do
      input(r, r.tick)
      assert.is_true(r:step(), tostring(r.error))
      assert.are.equal(hashes[r.tick], state_hash.hash(r.world), "resumed, tick " .. r.tick)
      assert.are.equal(scores[r.tick], lua_state(), "resumed, tick " .. r.tick)
    end
    os.execute("rm -rf " .. dir)
  end)

  it("rewinds the tank, whose script makes and destroys joints every step", function()
    local r = runner("scenes/tank.lua")
    local at = { [299] = true, [151] = true, [17] = true, [240] = true }
    for t = 101, 160 do at[t] = true end
    local hashes = play(r, 300, nil, nil, at)
    for _, t in ipairs { 299, 151, 17, 240 } do
      r.history:seek(t)
      assert.are.equal(hashes[t], state_hash.hash(r.world), "tick " .. t)
    end
    r.history:seek(100)
    r.paused = false
    for t = 101, 160 do
      assert.is_true(r:step())
      assert.are.equal(hashes[t], state_hash.hash(r.world), "resumed, tick " .. t)
    end
  end)

  it("replays the viewer's mouse drag of a body while rewinding", function()
    local r = runner("scenes/bodies.lua")
    local hashes = {}
    local target
    local function input(rr, tick)
      if tick == 30 then
        local b = rr.world:bodies()[3]
        target = b.position
        rr:press_mouse(target, 1)
      elseif tick > 30 and tick < 90 then
        rr:move_mouse { target[1] + 0.02 * (tick - 30), target[2] + 0.01 * (tick - 30), target[3] }
      elseif tick == 90 then
        rr:release_mouse(200, 200, 1)
      end
    end
    play(r, 150, input, hashes)
    for _, t in ipairs { 60, 100, 31 } do
      r.history:seek(t)
      assert.are.equal(hashes[t], state_hash.hash(r.world), "tick " .. t)
    end
  end)

  it("[ and ] step back and forward while paused; the timeline's bar scrubs; a key the scene lists stays the scene's", function()
    local r = runner("scenes/bodies.lua")
    local hashes = play(r, 200)
    r:tap_key("[") -- not paused: the viewer leaves it
    assert.are.equal(200, r.tick)
    r.paused = true
    r:tap_key("[")
    r:tap_key("[")
    assert.are.equal(198, r.tick)
    assert.are.equal(hashes[198], state_hash.hash(r.world))
    r:tap_key("]")
    assert.are.equal(199, r.tick)
    assert.is_true(r.history:in_past())
    -- the bar along the bottom: its left end is 30 s before the newest tick (clamped to the reach)
    local v = r.viewer
    local x, y, w, h = v:timeline_rect()
    r:press_mouse(x + w / 2, y + h / 2, 1)
    assert.is_true(v.scrubbing)
    assert.are.equal(0, r.tick, "the middle of the bar is 15 s back: before the run's start, so its start")
    r:move_mouse(x + w * (1 - 60 / 1800), y + h / 2) -- 2 s before the newest tick
    r:release_mouse(x + w * (1 - 60 / 1800), y + h / 2, 1)
    assert.is_false(v.scrubbing)
    assert.are.equal(140, r.tick)
    assert.are.equal(hashes[140], state_hash.hash(r.world))
    -- Space resumes from there: the future goes, and the run goes on
    r:tap_key("space")
    assert.is_false(r.paused)
    local _, newest = r.history:reach()
    assert.are.equal(140, newest)
    assert.is_true(r:step())
    assert.are.equal(hashes[141], state_hash.hash(r.world))

    -- a scene that lists "[" in its keys keeps it
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/keys.lua", [[
return {
  keys = { { "[", "mine" } },
  setup = function(world) state.pressed = 0 world:particle {} end,
  keypressed = function(world, key) if key == "[" then state.pressed = state.pressed + 1 end end,
}]])
    local s = runner(dir .. "/keys.lua")
    play(s, 30)
    s.paused = true
    s:tap_key("[")
    assert.are.equal(30, s.tick)
    assert.are.equal(1, s.state.pressed)
    os.execute("rm -rf " .. dir)
  end)

  it("after a hot reload, rewinds 3 s and continues from there with the new code", function()
    local dir = helpers.tmpdir()
    local path = dir .. "/controller.lua"
    local function write(speed)
      helpers.write(path, string.format([[
SPEED = %d -- the controller's target speed, m/s
return {
  setup = function(world)
    world:plane {}
    state.cart = world:box { size = { 1, 0.5, 0.5 }, position = { 0, 0.25, 0 }, friction = 0 }
  end,
  update = function(world, dt)
    local v = state.cart.velocity
    state.cart:apply_force({ 2000 * (SPEED - v[1]), 0, 0 }) -- a P controller towards SPEED
  end,
}]], speed))
    end
    write(1)
    local r = runner(path)
    local hashes = play(r, 300) -- 5 s with the old code
    local before = r.state.cart.velocity[1]
    assert.is_true(math.abs(before - 1) < 1e-3, "the old controller holds 1 m/s")
    -- edit and save: a new file on disk (another size, so the runner sees the change), then the reload
    write(-2)
    assert.is_true(r:check_reload(), tostring(r.error))
    play(r, 360, nil, hashes) -- 1 s with the new code
    assert.is_true(r.state.cart.velocity[1] < 0, "the new controller drives it back")
    -- 3 s back: before the reload. The state there is the old code's, as the run had it
    r.history:seek(360 - 180)
    assert.are.equal(180, r.tick)
    assert.are.equal(hashes[180], state_hash.hash(r.world), "re-simulated with the code it ran under")
    assert.is_true(math.abs(r.state.cart.velocity[1] - 1) < 1e-3)
    -- resume: the new code acts from there
    r.paused = false
    for _ = 1, 60 do assert.is_true(r:step(), tostring(r.error)) end
    assert.is_true(r.state.cart.velocity[1] < 0.5, "the new controller acts from the moment rewound to")
    assert.are.equal(240, r.tick)
    assert.are.equal(-2, r.env.SPEED)
    os.execute("rm -rf " .. dir)
  end)
end)
