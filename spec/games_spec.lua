-- The gallery's games, played through the runner's scripted input (the path a window's events take):
-- each game's main action and its effect, in numbers.
local impetus = require "impetus"
local helpers = require "helpers"

local function game(name, opts)
  local r = impetus.runner(helpers.root .. "/scenes/games/" .. name .. "/main.lua", opts)
  r:start()
  assert.is_nil(r.error, tostring(r.error))
  return r, r.state
end

local function run(r, seconds)
  for _ = 1, math.floor(seconds / r:step_dt() + 0.5) do assert.is_true(r:step(), tostring(r.error)) end
end

local function speed(b)
  local v = b.velocity
  return math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2)
end

describe("slingshot", function()
  -- the game's rules: the bands meet at FORK; a pull p (m, at most 1.8 long) launches the ball at -K p
  local FORK, K = { -7, 2 }, 10

  -- press at the fork, drag to fork + pull, let go
  local function shoot(r, pull)
    local p = { FORK[1] + pull[1], FORK[2] + pull[2], 0 }
    r:press_mouse({ FORK[1], FORK[2], 0 }, 1)
    r:move_mouse(p)
    r:release_mouse(p, 1)
  end

  it("a shot launches the ball at K times the pull, flies a parabola and knocks the targets off the gate", function()
    local r, s = game("slingshot")
    run(r, 0.5)
    assert.are.equal(1, s.level)
    assert.are.equal(2, #s.targets)
    local top = s.targets[1].body
    local y0 = top.position[2]
    assert.is_true(y0 > 2, "the first target stands on the gate's lintel")
    shoot(r, { -1.4, -0.3 })
    assert.are.equal(1, #s.balls)
    local ball = s.balls[1]
    local p0, v0 = ball.position, ball.velocity
    -- the mouse maps to the world through the 2D camera: the pull comes back to the pixel
    helpers.near(p0[1], FORK[1] - 1.4, 0.02, "ball x at release")
    helpers.near(p0[2], FORK[2] - 0.3, 0.02, "ball y at release")
    helpers.near(v0[1], -K * (p0[1] - FORK[1]), 1e-9, "launch vx = -K pull x")
    helpers.near(v0[2], -K * (p0[2] - FORK[2]), 1e-9, "launch vy = -K pull y")
    assert.are.equal(2, s.shots)
    -- before it reaches the towers: p0 + v0 t + g t^2 / 2 (no drag), x exactly; y to within the
    -- g t h / 2 a first-order step of h leaves (the semi-implicit Euler of the impulse mode)
    run(r, 0.4)
    local t, h = 0.4, r:step_dt()
    helpers.near(ball.position[1], p0[1] + v0[1] * t, 1e-9, "x after 0.4 s")
    helpers.near(ball.position[2], p0[2] + v0[2] * t - 0.5 * 9.81 * t * t, 9.81 * t * h / 2 + 1e-9, "y after 0.4 s")
    run(r, 3.6)
    -- the top target fell off the lintel (measured: both targets out, the level cleared)
    assert.is_true(s.targets[1].out, "the top target is out")
    assert.is_true(not top:valid() or y0 - top.position[2] > 0.5, "the top target fell")
    assert.are.equal(2, s.targets_out)
    assert.are.equal("cleared", s.mode)
    assert.are.equal(2 * 500 + 2 * 1000, s.score) -- two targets, two shots left
    r:click(640, 360)
    run(r, 0.1)
    assert.are.equal(2, s.level)
    assert.are.equal(3, #s.targets)
    assert.are.equal(3000, s.score)
  end)

  it("a weak shot falls short: no target falls, and three of them fail the level, a click retries it", function()
    local r, s = game("slingshot")
    run(r, 0.5)
    local heights = {}
    for i, t in ipairs(s.targets) do heights[i] = t.body.position[2] end
    for _ = 1, 3 do
      shoot(r, { -0.5, 0 }) -- 5 m/s level: lands ~3.2 m out, 10 m short of the gate
      run(r, 1)
    end
    assert.are.equal(0, s.shots)
    run(r, 6)
    assert.are.equal(0, s.targets_out)
    for i, t in ipairs(s.targets) do helpers.near(t.body.position[2], heights[i], 0.02, "target " .. i .. " height") end
    assert.are.equal("failed", s.mode)
    assert.are.equal(0, s.score)
    r:click(640, 360)
    run(r, 0.1)
    assert.are.equal("aim", s.mode)
    assert.are.equal(3, s.shots)
    assert.are.equal(1, s.level)
  end)

  it("R retries the level from the score it began with", function()
    local r, s = game("slingshot")
    run(r, 0.5)
    shoot(r, { -1.4, -0.3 })
    run(r, 4)
    assert.are.equal(3000, s.score)
    r:click(640, 360) -- level 2, from 3000
    run(r, 0.5)
    shoot(r, { -1.2, -0.5 })
    run(r, 4)
    assert.is_true(s.score > 3000, "level 2's shot scored")
    r:tap_key("r")
    run(r, 0.1)
    assert.are.equal(2, s.level)
    assert.are.equal(3000, s.score)
    assert.are.equal(4, s.shots)
    assert.are.equal(0, s.targets_out)
  end)

  it("the fork holds the pull to 1.8 m and above the ground", function()
    local r, s = game("slingshot")
    run(r, 0.5)
    r:press_mouse({ FORK[1], FORK[2], 0 }, 1)
    r:move_mouse({ FORK[1] - 6, FORK[2] + 2, 0 })
    local l = math.sqrt(s.pull[1] ^ 2 + s.pull[2] ^ 2)
    helpers.near(l, 1.8, 1e-9, "pull length")
    r:move_mouse({ FORK[1], -3, 0 })
    helpers.near(FORK[2] + s.pull[2], 0.28 + 0.05, 1e-9, "the ball's height at the lowest pull")
    r:release_mouse({ FORK[1], -3, 0 }, 1)
  end)
end)

describe("pinball", function()
  -- put the ball on the left flipper, `d` metres from its pivot along its top face, at rest
  local function ball_on_left_flipper(s, d)
    local f = s.flippers.left
    local a = -0.5 -- the flipper's rest angle
    local px, py = f.pivot[1] + d * math.cos(a), f.pivot[2] + d * math.sin(a)
    local lift = 0.08 + 0.15 + 0.002 -- half the flipper's thickness, the ball's radius, a gap
    s.ball.position = { px - math.sin(a) * lift, py + math.cos(a) * lift, 0 }
    s.ball.velocity = { 0, 0, 0 }
  end

  it("the left flipper's hinge motor swings it to its limit and sends a resting ball up", function()
    local r, s = game("pinball")
    run(r, 0.1)
    ball_on_left_flipper(s, 0.55)
    run(r, 0.2)
    local joint = s.flippers.left.joint
    helpers.near(joint.angle, 0, 1e-3, "flipper at rest on its lower limit")
    local before = speed(s.ball)
    assert.is_true(before < 0.6, "the ball rolls slowly down the resting flipper: " .. before)
    r:press_key("left")
    run(r, 0.15)
    helpers.near(joint.angle, 0.9, 2e-3, "flipper at its upper limit")
    local after = speed(s.ball)
    -- measured 9.5 m/s: the flipper's surface under the ball moves at ~9 rad/s x 0.6 m and it whips
    assert.is_true(after > 6, string.format("ball speed %.2f -> %.2f m/s", before, after))
    assert.is_true(s.ball.velocity[2] > 0.9 * after, "the ball goes up the table")
    r:release_key("left")
    run(r, 0.5)
    helpers.near(joint.angle, 0, 2e-3, "the flipper back on its lower limit")
  end)

  it("without a flip the ball rolls off the flipper into the drain and the next one waits in the lane", function()
    local r, s = game("pinball")
    run(r, 0.1)
    local first = s.ball
    ball_on_left_flipper(s, 0.3)
    run(r, 3)
    assert.is_false(first:valid())
    assert.are.equal(2, s.balls)
    assert.are.equal(0, s.score)
    assert.is_true(s.ball:valid() and s.ball.position[1] > 2.8, "the next ball is in the shooter lane")
    assert.are.equal(1, s.sounds.drain.plays)
  end)

  it("a bumper kicks the ball out faster than it came, scores and rings", function()
    local r, s = game("pinball")
    run(r, 0.1)
    s.ball.position = { 0.02, 6.9, 0 } -- above the lower bumper (centre 0, 5.9; radius 0.38)
    s.ball.velocity = { 0, 0, 0 }
    local v_in, v_out = 0, 0
    for _ = 1, 120 do
      local v = s.ball.velocity
      assert.is_true(r:step(), tostring(r.error))
      if s.score == 0 then v_in = math.sqrt(v[1] ^ 2 + v[2] ^ 2) end
      if s.score > 0 and v_out == 0 then v_out = speed(s.ball) end
    end
    -- falling ~0.45 m at 4.5 m/s^2: ~2 m/s in; out along the normal at 0.6 of that plus the 2.5 m/s
    -- kick (the ball comes in 3 degrees off the normal: its tangential part is small)
    assert.are.equal(100, s.score)
    assert.are.equal(1, s.sounds.bumper.plays)
    assert.is_true(v_in > 1.5 and v_in < 2.2, "speed into the bumper " .. v_in)
    helpers.near(v_out, 0.6 * v_in + 2.5, 0.1, "speed out of the bumper")
    assert.is_true(v_out > v_in + 1, string.format("speed in %.2f, out %.2f m/s", v_in, v_out))
  end)

  it("Space held 1 s launches the ball up the lane at full speed into play", function()
    local r, s = game("pinball")
    run(r, 0.2)
    r:press_key("space")
    run(r, 1)
    r:release_key("space")
    helpers.near(s.ball.velocity[2], 10.5, 1e-9, "launch speed")
    assert.is_false(s.in_play)
    run(r, 3)
    assert.is_true(s.in_play, "the ball left the lane")
    assert.are.equal(3, s.balls)
  end)

  it("Space held with the keyboard's auto-repeat charges as a plain hold does", function()
    -- a window repeats a held key: keydown events with isrepeat = true every ~30 ms until the release
    local r, s = game("pinball")
    run(r, 0.2)
    r:press_key("space")
    for _ = 1, 30 do
      run(r, 1 / 30)
      r:event { type = "keydown", key = "space", isrepeat = true }
    end
    r:release_key("space")
    helpers.near(s.ball.velocity[2], 10.5, 1e-9, "launch speed after a 1 s hold")
  end)
end)

describe("held keys", function()
  -- a key held in a window repeats; a game's one-shot keys act on the first press only
  it("a held R restarts the slingshot's level and the maze once", function()
    for _, name in ipairs { "slingshot", "marble_maze" } do
      local r = game(name)
      run(r, 0.2)
      local restarts = 0
      local restart = r.restart
      r.restart = function(self, ...) restarts = restarts + 1 return restart(self, ...) end
      r:press_key("r")
      for _ = 1, 10 do r:event { type = "keydown", key = "r", isrepeat = true } end
      r:release_key("r")
      assert.are.equal(1, restarts, name .. ": restarts for one held R")
    end
  end)
end)

describe("marble maze", function()
  local MAX_TILT, G = 0.16, 9.81

  -- the board's tilt about z (right edge down: positive here) from its rotation's first column
  local function tilt_z(s) return -math.asin(s.board.rotation[2][1]) end

  it("the mouse at the window's right edge tilts the board 0.16 rad and the marble rolls at 5/7 g sin(tilt)", function()
    local r, s = game("marble_maze")
    run(r, 0.5)
    helpers.near(tilt_z(s), 0, 1e-9, "flat until the mouse moves")
    r:move_mouse(1279, 360)
    run(r, 1.2)
    local tilt = tilt_z(s)
    helpers.near(tilt, MAX_TILT, 0.005, "tilt")
    -- along the slope (down to +x on the tilted board): a rolling solid ball accelerates at 5/7 g sin
    local function along(v) return v[1] * math.cos(tilt) - v[2] * math.sin(tilt) end
    local v0 = along(s.marble.velocity)
    run(r, 0.4)
    local a = (along(s.marble.velocity) - v0) / 0.4
    local expected = 5 / 7 * G * math.sin(tilt)
    helpers.near(a, expected, 0.03 * expected, "acceleration along the slope")
    assert.is_true(s.marble.position[1] > -3.5, "the marble moved right along the first corridor")
  end)

  it("a marble over a hole drops through and comes back at the start, counting a fall", function()
    local r, s = game("marble_maze")
    run(r, 0.2)
    local hole = s.holes[1]
    s.marble.position = { hole[1], 0.5, hole[3] }
    s.marble.velocity = { 0, 0, 0 }
    run(r, 2)
    assert.are.equal(1, s.falls)
    local m = s.marble.position
    helpers.near(m[1], s.start[1], 0.05, "x back at the start")
    helpers.near(m[3], s.start[3], 0.05, "z back at the start")
    assert.are.equal(1, #r.world:bodies() - #s.parts) -- one marble
  end)

  it("the goal ends the maze with its time; a click starts the next maze", function()
    local r, s = game("marble_maze")
    run(r, 1)
    s.marble.position = { s.goal[1], 0.31, s.goal[3] }
    s.marble.velocity = { 0, 0, 0 }
    run(r, 0.1)
    assert.is_true(s.done)
    assert.is_true(s.time > 1 and s.time < 1.2, "time " .. s.time)
    helpers.near(s.best[1], s.time, 1e-12, "best time")
    r:click(640, 360)
    run(r, 0.1)
    assert.are.equal(2, s.level)
    assert.is_false(s.done)
  end)

  it("R starts the maze again: the marble at the start, the clock at zero", function()
    local r, s = game("marble_maze")
    r:press_key("right")
    run(r, 2)
    r:release_key("right")
    assert.is_true(s.marble.position[1] > s.start[1] + 0.5, "the marble rolled")
    r:tap_key("r")
    run(r, 0.1)
    helpers.near(s.time, 0.1, 1e-9, "time since the restart")
    helpers.near(s.marble.position[1], s.start[1], 1e-3, "marble x")
  end)

  it("every maze has a path of floor cells from its start to its goal", function()
    local mazes = dofile(helpers.root .. "/scenes/games/marble_maze/mazes.lua")
    for n, maze in ipairs(mazes) do
      local start, goal
      for row, line in ipairs(maze) do
        assert.are.equal(#maze[1], #line, "maze " .. n .. " row " .. row)
        local c = line:find("S") if c then start = { row, c } end
        c = line:find("G") if c then goal = { row, c } end
      end
      local seen, queue, found = { [start[1] * 100 + start[2]] = true }, { start }, false
      while #queue > 0 do
        local cell = table.remove(queue, 1)
        if cell[1] == goal[1] and cell[2] == goal[2] then found = true break end
        for _, d in ipairs { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } } do
          local rr, cc = cell[1] + d[1], cell[2] + d[2]
          local ch = maze[rr] and maze[rr]:sub(cc, cc)
          if ch and ch:find("[%.SG]") and not seen[rr * 100 + cc] then
            seen[rr * 100 + cc] = true
            queue[#queue + 1] = { rr, cc }
          end
        end
      end
      assert.is_true(found, "maze " .. n .. " has no path from S to G")
    end
  end)
end)

describe("the README's first game", function()
  -- the tutorial's code exactly as README.md shows it under "### Your first game", saved in a folder of its own
  local function tutorial()
    local f = assert(io.open(helpers.root .. "/README.md"))
    local readme = f:read("a")
    f:close()
    local section = readme:match("\n### Your first game\n(.-)\n##")
    assert.is_not_nil(section, "README.md has a section '### Your first game'")
    local code = section:match("```lua\n(.-)```")
    assert.is_not_nil(code, "the section shows the game's code")
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/sling.lua", code)
    return dir .. "/sling.lua", dir
  end

  -- the game's rules as the tutorial states them: bands meet at FORK, the ball leaves at K times the pull
  local FORK, K = { 0, 2 }, 8

  it("a pull with the mouse fires the ball at K times the pull, and one good shot knocks the crate down", function()
    local path, dir = tutorial()
    local r = impetus.runner(path, { viewer = true }) -- with the host's keys and mouse, as in a window
    r:start()
    assert.is_nil(r.error, tostring(r.error))
    local s = r.state
    run(r, 0.5)
    assert.are.equal(0, s.shots)
    assert.is_nil(s.won)
    local bodies = #r.world:bodies()
    local release = { FORK[1] - 1.6, FORK[2] - 0.6, 0 }
    r:press_mouse({ FORK[1] - 0.5, FORK[2] + 0.5, 0 }, 1)
    assert.is_true(s.aiming)
    r:move_mouse(release)
    r:release_mouse(release, 1)
    assert.are.equal(1, s.shots)
    local all = r.world:bodies()
    assert.are.equal(bodies + 1, #all)
    local ball = all[#all]
    helpers.near(ball.position[1], release[1], 0.02, "the ball starts where the mouse let go (x)")
    helpers.near(ball.position[2], release[2], 0.02, "(y)")
    helpers.near(ball.velocity[1], K * (FORK[1] - ball.position[1]), 1e-9, "vx = K pull")
    helpers.near(ball.velocity[2], K * (FORK[2] - ball.position[2]), 1e-9, "vy = K pull")
    -- the scene turned the host's mouse off: the press dragged no body and panned nothing
    assert.is_nil(r.viewer.drag)
    for _ = 1, 240 do r:advance(1 / 60) end
    assert.is_nil(r.error, tostring(r.error))
    assert.are.equal(1, s.won, "the crate is down after the first shot")
    local c = r.camera:get().center
    helpers.near(c[1], ball.position[1], 1.0, "the camera follows the ball (x)")
    -- a save keeps the state: the file re-executes, setup does not run again
    helpers.write(path, (io.open(path):read("a")):gsub('title = "Sling"', 'title = "Sling!"'))
    r:reload()
    assert.is_nil(r.error, tostring(r.error))
    assert.are.equal("Sling!", r.scene.title)
    assert.is_nil(r.warning, "every handler found its new code") -- crate_hit is a file-level function
    assert.are.equal(1, s.won)
    assert.are.equal(1, s.shots)
    -- R starts again: the scene's setup resets what it chooses to
    r:tap_key("r")
    assert.are.equal(0, r.state.shots)
    os.remove(path)
    os.remove(dir)
  end)

  it("a pull too weak to reach the tower leaves the crate up", function()
    local path, dir = tutorial()
    local r = impetus.runner(path)
    r:start()
    run(r, 0.5)
    r:press_mouse({ FORK[1], FORK[2], 0 }, 1)
    r:release_mouse({ FORK[1] - 0.4, FORK[2], 0 }, 1) -- 3.2 m/s level from 2 m: lands ~2 m out, 10 m short
    run(r, 4)
    assert.is_nil(r.error, tostring(r.error))
    assert.are.equal(1, r.state.shots)
    assert.is_nil(r.state.won)
    os.remove(path)
    os.remove(dir)
  end)
end)
