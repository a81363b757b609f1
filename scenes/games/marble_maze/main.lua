-- scenes/games/marble_maze: tilt the board with the mouse (or the arrow keys) and roll the marble from
-- the start to the green goal without dropping it through a hole. The board is one kinematic compound
-- body (floor slabs and walls) turned each step by setting its angular velocity, so it carries and
-- pushes the marble through its contacts; the marble rolls at 5/7 g sin(tilt) as a solid ball does.
local impetus = require "impetus"
local mazes = require "mazes"

local CELL, WALL_H, FLOOR_T = 1.0, 0.5, 0.3
local MARBLE_R = 0.3
-- the tilt's limits: angle (rad), rate (rad/s) and angular acceleration (rad/s^2). The board's corner,
-- 7 m from its centre, must not drop faster than g (alpha r < g), or it leaves the marble in the air
local MAX_TILT, TILT_RATE, TILT_ACCEL = 0.16, 0.4, 1.2
local FALL_Y = -4

local FLOOR_C, WALL_C = { 0.82, 0.7, 0.52 }, { 0.45, 0.3, 0.2 }
local MARBLE_C, GOAL_C, HOLE_C = { 0.25, 0.45, 0.95 }, { 0.3, 0.9, 0.4, 1 }, { 0.05, 0.05, 0.07, 1 }

state.level = state.level or 1
state.best = state.best or {}

local sounds = {
  knock = impetus.sound.synth { kind = "click", freq = 900 },
  fall = impetus.sound.synth { kind = "boing", freq = 300, duration = 0.6 },
  goal = impetus.sound.synth { kind = "chime", freq = 660 },
}

-- cell (row, col) -> its centre in the board's frame (x right, z towards the viewer, y up)
local function cell_center(maze, row, col)
  return { (col - (#maze[1] + 1) / 2) * CELL, 0, (row - (#maze + 1) / 2) * CELL }
end

-- the board's shapes: each row's runs of floor cells as one slab (pattern "[^O]+"), or each row's runs
-- of walls as one block ("#+")
local function runs(maze, pattern, y, height)
  local shapes = {}
  for row, line in ipairs(maze) do
    for first, run in line:gmatch("()(" .. pattern .. ")") do
      local a, b = cell_center(maze, row, first), cell_center(maze, row, first + #run - 1)
      shapes[#shapes + 1] = { type = "box", size = { #run * CELL, height, CELL }, position = { (a[1] + b[1]) / 2, y, a[3] } }
    end
  end
  return shapes
end

local function find(maze, ch)
  local list = {}
  for row, line in ipairs(maze) do
    for col = 1, #line do
      if line:sub(col, col) == ch then list[#list + 1] = cell_center(maze, row, col) end
    end
  end
  return list
end

local function quat_mul(a, b)
  return { a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4], a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
           a[1] * b[3] - a[2] * b[4] + a[3] * b[1] + a[4] * b[2], a[1] * b[4] + a[2] * b[3] - a[3] * b[2] + a[4] * b[1] }
end

-- the board's orientation for tilts about x (front edge down: positive) and z (right edge down: negative)
local function tilt_quat(tx, tz)
  return quat_mul(impetus.quat.from_axis_angle({ 1, 0, 0 }, tx), impetus.quat.from_axis_angle({ 0, 0, 1 }, tz))
end

-- a board-frame point in the world, with the board's present rotation
local function to_world(p)
  local R = state.board.rotation
  return { R[1][1] * p[1] + R[1][2] * p[2] + R[1][3] * p[3], R[2][1] * p[1] + R[2][2] * p[2] + R[2][3] * p[3],
           R[3][1] * p[1] + R[3][2] * p[2] + R[3][3] * p[3] }
end

local function respawn(world)
  if state.marble and state.marble:valid() then state.marble:destroy() end
  local s = state.start
  state.marble = world:sphere { radius = MARBLE_R, density = 2500, position = to_world { s[1], s[2] + MARBLE_R + 0.02, s[3] },
                                friction = 0.6, restitution = 0.2, color = MARBLE_C }
  impetus.sound.impacts(world, sounds.knock, { bodies = { state.marble }, min_speed = 0.4, max_speed = 4 })
end

return {
  title = "Marble maze",
  camera = { eye = { 0, 12.5, 8.2 }, target = { 0, -0.6, 0.2 }, fov = 0.85 },
  background = { 0.16, 0.18, 0.24 },
  viewer = { mouse = false, hud = false, grid = false },
  shadows = true,
  keys = { { "mouse", "tilt the board towards the pointer" }, { "up / down / left / right", "tilt with the keys (hold)" },
           { "1 / 2", "play that maze" }, { "R", "start the maze again" } },

  setup = function(world)
    if not mazes[state.level] then state.level = 1 end
    local maze = mazes[state.level]
    state.maze, state.tilt, state.rate, state.steer = maze, { 0, 0 }, { 0, 0 }, nil
    state.start, state.goal, state.holes = find(maze, "S")[1], find(maze, "G")[1], find(maze, "O")
    state.time, state.falls, state.done = 0, 0, false
    -- the board: floor, walls, the goal pad (a sensor: it reports the marble on it and pushes nothing)
    -- and the hole wells (drawn, touching nothing), each a kinematic body about the origin, all turned alike
    local function part(shapes, color, mask, sensor)
      return world:body { kinematic = true, shapes = shapes, friction = 0.6, restitution = 0.1, color = color, mask = mask, sensor = sensor }
    end
    local decor = {}
    for _, h in ipairs(state.holes) do
      decor[#decor + 1] = { type = "box", size = { CELL, 0.02, CELL }, position = { h[1], -FLOOR_T - 0.6, h[3] } }
    end
    state.board = part(runs(maze, "[^O]+", -FLOOR_T / 2, FLOOR_T), FLOOR_C)
    state.goal_pad = part({ { type = "box", size = { 0.8, 0.02, 0.8 }, position = { state.goal[1], 0.01, state.goal[3] } } }, GOAL_C, nil, true)
    state.parts = { state.board, part(runs(maze, "#+", WALL_H / 2, WALL_H), WALL_C), state.goal_pad }
    if #decor > 0 then state.parts[#state.parts + 1] = part(decor, HOLE_C, 0) end
    respawn(world)
  end,

  update = function(world, dt)
    -- the wanted tilt: from the arrow keys after one was pressed, from the mouse's place in the window
    -- after it moved (the board lies flat until either steers)
    local input = impetus.input
    local kx = (input.key_down("down") and 1 or 0) - (input.key_down("up") and 1 or 0)
    local kz = (input.key_down("left") and 1 or 0) - (input.key_down("right") and 1 or 0)
    if kx ~= 0 or kz ~= 0 then state.steer = "keys" end
    local want = { 0, 0 }
    if state.steer == "keys" then
      want = { kx * MAX_TILT, kz * MAX_TILT }
    elseif state.steer == "mouse" then
      local mx, my = input.mouse_position()
      local w, h = input.size()
      local fx, fy = math.max(-1, math.min(1, 2 * mx / w - 1)), math.max(-1, math.min(1, 2 * my / h - 1))
      want = { fy * MAX_TILT, -fx * MAX_TILT }
    end
    if state.done then want = { 0, 0 } end
    -- each tilt heads for its wanted value with bounded rate and acceleration, braking in time
    -- (the rate that stops exactly there: sqrt(2 a |error|))
    local t, rate = state.tilt, state.rate
    for i = 1, 2 do
      local err = want[i] - t[i]
      local goal = (err >= 0 and 1 or -1) * math.min(TILT_RATE, math.sqrt(2 * TILT_ACCEL * math.abs(err)))
      rate[i] = rate[i] + math.max(-TILT_ACCEL * dt, math.min(TILT_ACCEL * dt, goal - rate[i]))
      t[i] = t[i] + rate[i] * dt
    end
    local q, target = state.board.orientation, tilt_quat(t[1], t[2])
    local d = quat_mul(target, { q[1], -q[2], -q[3], -q[4] })
    if d[1] < 0 then d = { -d[1], -d[2], -d[3], -d[4] } end
    local s = math.sqrt(d[2] ^ 2 + d[3] ^ 2 + d[4] ^ 2)
    local angle = 2 * math.atan(s, d[1])
    local k = s > 1e-12 and angle / (s * dt) or 0
    for _, body in ipairs(state.parts) do body.angular_velocity = { d[2] * k, d[3] * k, d[4] * k } end

    if state.done then return end
    state.time = state.time + dt
    local m = state.marble.position
    if m[2] < FALL_Y then
      state.falls = state.falls + 1
      sounds.fall:play { volume = 0.7 }
      respawn(world)
      return
    end
    local on_goal = false -- the marble rolled onto the goal pad's sensor
    for _, inside in ipairs(world:overlaps(state.goal_pad)) do on_goal = on_goal or inside.body == state.marble end
    if on_goal then
      state.done = true
      sounds.goal:play { volume = 0.8 }
      local best = state.best[state.level]
      if not best or state.time < best then state.best[state.level] = state.time end
    end
  end,

  mousemoved = function(world)
    state.steer = "mouse"
    return true
  end,

  mousepressed = function(world, x, y, button)
    if state.done and button == 1 then
      state.level = state.level % #mazes + 1
      impetus.restart()
    end
    return true
  end,

  keypressed = function(world, key, isrepeat)
    if isrepeat then return end -- a held key repeats: act on the first press only
    local n = tonumber(key)
    if n and mazes[n] then state.level = n end
    if (n and mazes[n]) or key == "r" then
      impetus.restart()
      return true
    end
  end,

  draw = function(world, gfx)
    local w, h = gfx.size()
    -- a flag on the goal, on the tilted board
    local g = state.goal
    local foot, top = to_world { g[1] + 0.35, 0, g[3] - 0.35 }, to_world { g[1] + 0.35, 1.5, g[3] - 0.35 }
    gfx.line(foot, top, { color = { 0.9, 0.9, 0.9, 1 }, width = 3 })
    gfx.polygon({ top, to_world { g[1] + 0.35, 0.95, g[3] - 0.35 }, to_world { g[1] - 0.5, 1.22, g[3] + 0.1 } },
      { color = { 0.95, 0.25, 0.2, 1 }, outline = { 0.5, 0.05, 0.05, 1 } })
    -- the HUD: maze, time, falls and best time; the tilt as a dot in a ring
    local gold, pale = { 1, 0.85, 0.3, 1 }, { 0.8, 0.85, 0.95, 1 }
    gfx.rectangle(0, 0, w, 56, { 0.06, 0.07, 0.1, 0.85 })
    gfx.text(20, 28, string.format("Maze %d", state.level), { size = 26, valign = "middle" })
    gfx.text(w / 2, 28, string.format("%.1f s", state.time), { size = 34, align = "center", valign = "middle", color = gold })
    local best = state.best[state.level]
    gfx.text(w - 20, 28, string.format("falls %d    best %s", state.falls, best and string.format("%.1f s", best) or "-"),
      { size = 22, align = "right", valign = "middle", color = pale })
    local cx, cy, rr = w - 70, h - 70, 44
    gfx.circle(cx, cy, rr, { color = { 0.06, 0.07, 0.1, 0.7 }, outline = pale, width = 2 })
    gfx.circle(cx - state.tilt[2] / MAX_TILT * rr * 0.8, cy + state.tilt[1] / MAX_TILT * rr * 0.8, 8, { color = gold })
    gfx.text(cx, cy + rr + 4, "tilt", { size = 16, align = "center", color = pale })
    if state.done then
      gfx.rectangle(w / 2 - 320, h / 2 - 70, 640, 130, { color = { 0.06, 0.07, 0.1, 0.9 }, outline = gold, width = 2 })
      gfx.text(w / 2, h / 2 - 28, string.format("Goal in %.1f s!", state.time), { size = 40, align = "center",
        valign = "middle", color = gold })
      gfx.text(w / 2, h / 2 + 24, string.format("%d falls.  Click for the next maze", state.falls), { size = 20,
        align = "center", valign = "middle" })
    elseif state.time < 4 and not state.steer then
      gfx.text(w / 2, h - 40, "Move the mouse to tilt the board (or hold the arrows)", { size = 22, align = "center",
        valign = "middle", color = pale })
    end
  end,
}
