-- scenes/games/slingshot: knock the targets off their towers. Press the left button anywhere, pull
-- back (the dotted arc shows the flight) and let go: the ball leaves the fork at K times the pull.
-- Planar mode (2D physics), the 2D camera, mouse callbacks, scene state across restarts, synthesized
-- sounds. R retries the level; 1, 2, 3 jump to a level.
local impetus = require "impetus"
local levels = require "levels"

local FORK = { -7, 2.0 }      -- where the bands meet (m)
local MAX_PULL = 1.8          -- m
local K = 10                  -- launch speed per metre of pull (1/s): v = -K pull
local BALL_R = 0.28
local GRAVITY = -9.81
local OUT_DROP, OUT_SHIFT, OUT_SPEED = 0.5, 1.0, 4.0 -- a target is out past these (m, m, m/s impact)
local TARGET_POINTS, SHOT_BONUS = 500, 1000

local WOOD, STONE = { 0.78, 0.55, 0.3 }, { 0.55, 0.56, 0.6 }
local TARGET = { 0.35, 0.8, 0.3 }
local BALL = { 0.85, 0.18, 0.15 }

state.level = state.level or 1
state.score = state.score or 0

local sounds = {
  thud = impetus.sound.synth { kind = "thud" },
  pop = impetus.sound.synth { kind = "chime" },
  stretch = impetus.sound.synth { kind = "click" },
  launch = impetus.sound.synth { kind = "boing" },
}

local function len(x, y) return math.sqrt(x * x + y * y) end

-- the pull from the fork to the mouse: at most MAX_PULL long, the ball kept above the ground
local function pull_to(p)
  local dx, dy = p[1] - FORK[1], p[2] - FORK[2]
  local l = len(dx, dy)
  if l > MAX_PULL then dx, dy = dx * MAX_PULL / l, dy * MAX_PULL / l end
  dy = math.max(dy, BALL_R + 0.05 - FORK[2])
  return { dx, dy }
end

local function knock_out(t, now)
  if t.out then return end
  t.out, t.out_time = true, now
  state.score = state.score + TARGET_POINTS
  sounds.pop:play { volume = 0.8, pitch = 1 + 0.1 * state.targets_out }
  state.targets_out = state.targets_out + 1
end

-- a target hit hard is out (a file-level handler: a hot reload reaches it)
local function on_target_contact(self, other, e)
  local t = state.target_of[self]
  if t and e.kind == "begin" and e.speed >= OUT_SPEED then knock_out(t, state.now) end
end

local function build(world, level)
  world.planar = true
  world.gravity = { 0, GRAVITY, 0 }
  world:box { static = true, position = { 0, -2, 0 }, size = { 60, 4, 2 }, friction = 0.8, restitution = 0.1 }
  state.targets, state.target_of, state.targets_out = {}, {}, 0
  for _, piece in ipairs(level) do
    local kind, x, y = piece[1], piece[2], piece[3]
    if kind == "target" then
      local body = world:sphere { radius = 0.3, density = 300, position = { x, y, 0 }, friction = 0.6, color = TARGET,
                                  angular_damping = 0.5 }
      local t = { body = body, start = { x, y } }
      state.targets[#state.targets + 1] = t
      state.target_of[body] = t
      impetus.on_contact(body, on_target_contact)
    else
      world:box { size = { piece[4], piece[5], 1 }, position = { x, y, 0 }, friction = 0.7,
                  density = kind == "stone" and 2400 or 500, color = kind == "stone" and STONE or WOOD }
    end
  end
  impetus.sound.impacts(world, sounds.thud, { min_speed = 1.5, max_speed = 12, pitch_spread = 0.2 })
end

local function fire(world, pull)
  local ball = world:sphere { radius = BALL_R, density = 2500, position = { FORK[1] + pull[1], FORK[2] + pull[2], 0 },
                              velocity = { -K * pull[1], -K * pull[2], 0 }, bullet = true, friction = 0.6,
                              restitution = 0.2, color = BALL }
  state.balls[#state.balls + 1] = ball
  state.shots = state.shots - 1
  state.last_shot = world.time
  sounds.launch:play { volume = 0.6, pitch = 0.8 + 0.2 * len(pull[1], pull[2]) / MAX_PULL }
end

-- the level is over when every target is out, or when the last ball has come to rest (or 6 s passed)
local function judge(world)
  if state.mode ~= "aim" then return end
  if state.targets_out == #state.targets then
    state.mode = "cleared"
    state.bonus = SHOT_BONUS * state.shots
    state.score = state.score + state.bonus
    return
  end
  if state.shots > 0 then return end
  local resting = true
  for _, b in ipairs(state.balls) do
    local v = b.velocity
    if b:valid() and len(v[1], v[2]) > 0.2 and b.position[2] > -5 then resting = false end
  end
  if resting or world.time - state.last_shot > 6 then state.mode = "failed" end
end

local function go_to_level(n)
  state.level = n
  state.level_score = nil
  impetus.restart()
end

return {
  title = "Slingshot",
  camera = { mode = "2d", center = { 0.8, 3.9 }, height = 10.6 },
  background = { 0.55, 0.75, 0.92 },
  viewer = { mouse = false, hud = false, grid = false },
  keys = { { "left drag", "pull the band back, let go to shoot" }, { "1 / 2 / 3", "play that level" },
           { "R", "try the level again" } },

  setup = function(world)
    if state.level > #levels then state.level, state.score = 1, 0 end
    -- a retried level starts from the score the player had when it began
    state.level_score = state.level_score or state.score
    state.score = state.level_score
    state.now, state.balls, state.pull, state.mode = 0, {}, nil, "aim"
    state.shots, state.last_shot, state.bonus = levels[state.level].shots, -math.huge, 0
    build(world, levels[state.level])
  end,

  update = function(world, dt)
    state.now = world.time
    for _, t in ipairs(state.targets) do
      local b = t.body
      if not t.out then
        local p = b.position
        if t.start[2] - p[2] > OUT_DROP or math.abs(p[1] - t.start[1]) > OUT_SHIFT then knock_out(t, world.time) end
      elseif b:valid() and world.time - t.out_time > 0.6 then
        b:destroy()
      end
    end
    judge(world)
  end,

  mousepressed = function(world, x, y, button)
    if button ~= 1 then return false end
    if state.mode == "aim" and state.shots > 0 and world.time - state.last_shot > 0.5 then
      state.pull = pull_to(impetus.input.mouse_world())
      sounds.stretch:play { volume = 0.4 }
    elseif state.mode == "cleared" then
      go_to_level(state.level + 1)
    elseif state.mode == "failed" then
      impetus.restart()
    end
    return true
  end,

  mousemoved = function(world, x, y)
    if not state.pull then return false end
    state.pull = pull_to(impetus.input.mouse_world())
    return true
  end,

  mousereleased = function(world, x, y, button)
    if button ~= 1 or not state.pull then return end
    local pull = state.pull
    state.pull = nil
    if len(pull[1], pull[2]) > 0.3 then fire(world, pull) end
  end,

  keypressed = function(world, key, isrepeat)
    if isrepeat then return end -- a held key repeats: act on the first press only
    local n = tonumber(key)
    if n and levels[n] then
      state.score = 0
      go_to_level(n)
      return true
    end
    if key == "r" then
      state.pull = nil
      impetus.restart() -- setup retries the level from the score it began with
      return true
    end
  end,

  draw = function(world, gfx)
    local w, h = gfx.size()
    -- behind the world: sky bands, hills, clouds; the grass on the ground's top
    for i = 0, 5 do
      gfx.rectangle({ 1, 1 + 2 * i, 0 }, 40, 2.02, { color = { 0.78 - 0.06 * i, 0.88 - 0.04 * i, 0.98, 1 }, layer = "back" })
    end
    gfx.polygon({ { -12, 0 }, { -9, 2.2 }, { -5, 3.1 }, { -1, 1.6 }, { 3, 2.8 }, { 8, 1.9 }, { 13, 3.3 }, { 13, 0 } },
      { color = { 0.55, 0.75, 0.5, 1 }, layer = "back" })
    for _, c in ipairs { { -3, 6.6, 0.5 }, { -2.4, 6.8, 0.7 }, { -1.7, 6.6, 0.45 }, { 5, 7.0, 0.45 }, { 5.6, 7.2, 0.6 } } do
      gfx.circle({ c[1], c[2], 0 }, c[3], { color = { 1, 1, 1, 0.9 }, layer = "back" })
    end
    gfx.rectangle({ 1, -2, 0 }, 40, 4, { color = { 0.45, 0.32, 0.2, 1 } })
    gfx.rectangle({ 1, -0.12, 0 }, 40, 0.24, { color = { 0.35, 0.65, 0.25, 1 } })
    -- the slingshot: a forked trunk; the bands (back one behind the ball) while the ball waits
    local wood = { color = { 0.5, 0.3, 0.12, 1 }, outline = { 0.25, 0.14, 0.05, 1 }, width = 2 }
    gfx.polygon({ { FORK[1] - 0.1, 0 }, { FORK[1] + 0.1, 0 }, { FORK[1] + 0.1, 1.2 }, { FORK[1] + 0.32, FORK[2] + 0.2 },
                  { FORK[1] + 0.18, FORK[2] + 0.25 }, { FORK[1], 1.4 }, { FORK[1] - 0.18, FORK[2] + 0.25 },
                  { FORK[1] - 0.32, FORK[2] + 0.2 }, { FORK[1] - 0.1, 1.2 } }, wood)
    local band = { color = { 0.3, 0.12, 0.08, 1 }, width = 5 }
    local back, front = { FORK[1] + 0.25, FORK[2] + 0.15, 0 }, { FORK[1] - 0.25, FORK[2] + 0.15, 0 }
    if state.mode == "aim" and state.shots > 0 then
      local pull = state.pull or { 0, 0 }
      local p = { FORK[1] + pull[1], FORK[2] + pull[2], 0 }
      gfx.line(back, p, band)
      gfx.circle(p, BALL_R, { color = BALL, outline = { 0.35, 0.05, 0.05, 1 }, width = 2 })
      gfx.line(front, p, band)
      if state.pull then
        -- the flight without drag: p(t) = p0 + v t + g t^2 / 2, a dot every 0.08 s
        local vx, vy = -K * pull[1], -K * pull[2]
        for i = 1, 24 do
          local t = i * 0.08
          local q = { p[1] + vx * t, p[2] + vy * t + 0.5 * GRAVITY * t * t, 0 }
          if q[2] < 0 then break end
          gfx.circle(q, 0.07, { 1, 1, 1, 1 - i / 30 })
        end
      end
    else
      gfx.line(back, front, band)
    end
    -- the targets' faces (eyes that turn with the body), a burst where one went out
    for _, t in ipairs(state.targets) do
      local b = t.body
      if b:valid() and not t.out then
        local p, R = b.position, b.rotation
        for _, side in ipairs { -1, 1 } do
          local ex, ey = 0.11 * side, 0.06
          local e = { p[1] + R[1][1] * ex + R[1][2] * ey, p[2] + R[2][1] * ex + R[2][2] * ey, 0 }
          gfx.circle(e, 0.07, { color = { 1, 1, 1, 1 }, outline = { 0, 0, 0, 1 } })
          gfx.circle({ e[1] - 0.02, e[2], 0 }, 0.03, { 0, 0, 0, 1 })
        end
      elseif t.out and world.time - t.out_time < 0.8 then
        local k = (world.time - t.out_time) / 0.8
        local p = b:valid() and b.position or { t.start[1], t.start[2] }
        gfx.circle({ p[1], p[2], 0 }, 0.3 + 0.6 * k, { color = { 1, 1, 0.6, 0.6 * (1 - k) }, outline = { 1, 0.8, 0.2, 1 - k } })
        gfx.text({ p[1], p[2] + 0.6 + k, 0 }, "+" .. TARGET_POINTS, { size = 22, color = { 1, 0.95, 0.3, 1 - k } })
      end
    end
    -- the HUD: level, score, the shots left as balls
    gfx.rectangle(0, 0, w, 52, { 0.08, 0.1, 0.16, 0.8 })
    gfx.text(20, 26, string.format("Level %d  %s", state.level, levels[state.level].name), { size = 22, valign = "middle" })
    gfx.text(w / 2, 26, string.format("%d", state.score),
      { size = 34, align = "center", valign = "middle", color = { 1, 0.85, 0.3, 1 } })
    for i = 1, state.shots do
      gfx.circle(w - 24 - (i - 1) * 30, 26, 10, { color = BALL, outline = { 1, 1, 1, 1 }, width = 2 })
    end
    gfx.text(w - 24 - state.shots * 30, 26, "shots", { size = 18, align = "right", valign = "middle" })
    local title, line = nil, nil
    if state.mode == "cleared" and state.level == #levels then
      title, line = "You won!", string.format("Final score %d.  Click to play again", state.score)
    elseif state.mode == "cleared" then
      title, line = "Level cleared!", string.format("Bonus %d for the shots left.  Click for the next level", state.bonus)
    elseif state.mode == "failed" then
      title, line = "Out of shots", "Click to try again"
    elseif world.time < 3 and state.shots == levels[state.level].shots then
      line = "Drag back from the slingshot and let go"
    end
    if title then
      gfx.rectangle(w / 2 - 330, h / 2 - 70, 660, 130, { color = { 0.08, 0.1, 0.16, 0.85 }, outline = { 1, 0.85, 0.3, 1 }, width = 2 })
      gfx.text(w / 2, h / 2 - 28, title, { size = 40, align = "center", valign = "middle", color = { 1, 0.85, 0.3, 1 } })
      gfx.text(w / 2, h / 2 + 24, line, { size = 20, align = "center", valign = "middle" })
    elseif line then
      gfx.text(w / 2, 80, line, { size = 22, align = "center", valign = "middle", color = { 0.1, 0.15, 0.3, 1 } })
    end
  end,
}
