-- scenes/games/pinball: a pinball table in planar mode. The flippers are boxes on hinge joints to the
-- table, each with limits (rest and up) and a motor that drives it up while its key is held and back
-- down when it is let go; the bumpers kick the ball away and ring. Hold Space to pull the plunger,
-- let go to launch. Three balls.
local impetus = require "impetus"

local G = 4.5                           -- m/s^2 along the table: gravity of a table tilted ~27 degrees
local BALL_R, BALL_MASS = 0.15, 0.1
local FLIP_LEN, FLIP_THICK = 1.05, 0.16
local FLIP_REST, FLIP_SWING = 0.5, 0.9  -- rest: 0.5 rad below horizontal; up: 0.9 rad above rest
local FLIP_SPEED, FLIP_TORQUE = 9, 40  -- motor: rad/s and N m up; back down at half speed
local KICK, BUMPER_E = 2.5, 0.6         -- a bumper sends the ball out at BUMPER_E times its speed in + KICK
local LAUNCH_MAX, CHARGE_TIME = 10.5, 1.0
local LANE_X = 3.05

local BUMPERS = { { -1.0, 7.2 }, { 1.0, 7.2 }, { 0, 5.9 } }
local BUMPER_R, BUMPER_POINTS = 0.38, 100

local WALL, FLIPPER_C, BALL_C = { 0.25, 0.3, 0.55 }, { 0.95, 0.75, 0.2 }, { 0.85, 0.87, 0.92 }
local BUMPER_C, BUMPER_LIT = { 0.85, 0.2, 0.45 }, { 1, 0.85, 0.95 }

state.high = state.high or 0

local sounds = {
  bumper = impetus.sound.synth { kind = "boing", freq = 520 },
  flipper = impetus.sound.synth { kind = "click", freq = 1200 },
  wall = impetus.sound.synth { kind = "thud", freq = 140 },
  launch = impetus.sound.synth { kind = "noise", duration = 0.25 },
  drain = impetus.sound.synth { kind = "tone", freq = 220, duration = 0.5 },
}

-- a static wall from (x1, y1) to (x2, y2), `t` thick
local function wall(world, x1, y1, x2, y2, t)
  local dx, dy = x2 - x1, y2 - y1
  world:box { static = true, position = { (x1 + x2) / 2, (y1 + y2) / 2, 0 }, size = { math.sqrt(dx * dx + dy * dy), t or 0.2, 1 },
              axis = { 0, 0, 1 }, angle = math.atan(dy, dx), restitution = 0.3, friction = 0.2 }
end

-- a flipper on its pivot; side -1 (left, turns counter-clockwise to flip) or 1 (right, clockwise)
local function flipper(world, side)
  local px, py = 1.3 * side, 1.55
  local a = side < 0 and -FLIP_REST or math.pi + FLIP_REST
  local c, s = math.cos(a), math.sin(a)
  local body = world:box { size = { FLIP_LEN, FLIP_THICK, 1 }, mass = 0.6, friction = 0.3, restitution = 0.1,
                           position = { px + c * FLIP_LEN / 2, py + s * FLIP_LEN / 2, 0 },
                           axis = { 0, 0, 1 }, angle = a, color = FLIPPER_C }
  -- the hinge angle counts counter-clockwise about +z from the rest pose: up is +SWING on the left,
  -- -SWING on the right
  local limits = side < 0 and { 0, FLIP_SWING } or { -FLIP_SWING, 0 }
  local joint = world:joint { type = "hinge", a = body, anchor = { px, py, 0 }, axis = { 0, 0, 1 }, limits = limits,
                              motor = { speed = side * FLIP_SPEED / 2, max = FLIP_TORQUE } }
  return { body = body, joint = joint, side = side, pivot = { px, py } }
end

local function set_flipper(f, up)
  if f.up == up then return end
  f.up = up
  local dir = f.side < 0 and 1 or -1 -- the up direction of the hinge angle
  f.joint.motor = { speed = up and dir * FLIP_SPEED or -dir * FLIP_SPEED / 2, max = FLIP_TORQUE }
  if up then sounds.flipper:play { volume = 0.5, pan = f.side * 0.5 } end
end

-- the ball's contacts: a bumper kicks it and scores, anything else knocks (a file-level handler, so a
-- hot reload reaches it)
local function on_ball_contact(self, other, e)
  local bumper = state.bumpers[other]
  if bumper and e.kind == "begin" then
    -- the kick, whether the contact solver has bounced the ball yet or not: its normal velocity
    -- (n from the bumper's centre to the ball's) becomes max(vn, -BUMPER_E vn) + KICK
    local v, p = self.velocity, self.position
    local nx, ny = p[1] - bumper.pos[1], p[2] - bumper.pos[2]
    local l = math.sqrt(nx * nx + ny * ny)
    nx, ny = nx / l, ny / l
    local vn = v[1] * nx + v[2] * ny
    local dv = math.max(vn, -BUMPER_E * vn) + KICK - vn
    self.velocity = { v[1] + dv * nx, v[2] + dv * ny, 0 }
    bumper.lit = 0.15
    state.score = state.score + BUMPER_POINTS
    sounds.bumper:play { volume = 0.7, pitch = 0.9 + 0.1 * bumper.index }
  elseif e.kind == "begin" and e.speed > 1 then
    sounds.wall:play { volume = math.min(1, e.speed / 8) }
  end
end

local function new_ball(world)
  local ball = world:sphere { radius = BALL_R, mass = BALL_MASS, position = { LANE_X, 0.45, 0 }, bullet = true,
                              friction = 0.2, restitution = 0.3, color = BALL_C }
  state.ball, state.charge, state.in_play = ball, nil, false
  impetus.on_contact(ball, on_ball_contact)
  return ball
end

local function lose_ball(world)
  sounds.drain:play { volume = 0.6 }
  state.ball:destroy()
  state.balls = state.balls - 1
  if state.balls > 0 then new_ball(world) else
    state.over = true
    state.high = math.max(state.high, state.score)
  end
end

return {
  title = "Pinball",
  dt = 1 / 240,
  camera = { mode = "2d", center = { 0.25, 5.1 }, height = 10.8 },
  background = { 0.06, 0.07, 0.12 },
  viewer = { mouse = false, hud = false, grid = false },
  keys = { { "left / z", "left flipper" }, { "right / m", "right flipper" },
           { "space / down", "hold to pull the plunger, let go to launch" }, { "return", "new game (after the last ball)" } },

  setup = function(world)
    world.planar = true
    world.gravity = { 0, -G, 0 }
    state.score, state.balls, state.over, state.bumpers, state.sounds = 0, 3, false, {}, sounds
    -- the table: walls, the shooter lane, the top corners, the guides down to the flippers
    wall(world, -2.85, -0.5, -2.85, 10.3)
    wall(world, 3.35, -0.5, 3.35, 10.3)
    wall(world, 2.8, -0.5, 2.8, 7.6, 0.1)
    wall(world, -3, 10.2, 3.5, 10.2)
    wall(world, -2.9, 9.0, -1.6, 10.3)
    wall(world, 2.1, 10.3, 3.4, 9.0)
    wall(world, LANE_X - 0.3, 0.1, LANE_X + 0.3, 0.1)
    wall(world, -2.85, 3.1, -1.454, 1.677, 0.16) -- ends 0.2 m from the pivot: no gap a ball fits through
    wall(world, 2.75, 3.1, 1.449, 1.683, 0.16)
    for i, b in ipairs(BUMPERS) do
      local c = world:sphere { static = true, position = { b[1], b[2], 0 }, radius = BUMPER_R, restitution = BUMPER_E, friction = 0.1 }
      state.bumpers[c] = { index = i, lit = 0, pos = b }
    end
    state.flippers = { left = flipper(world, -1), right = flipper(world, 1) }
    new_ball(world)
  end,

  update = function(world, dt)
    local input = impetus.input
    set_flipper(state.flippers.left, input.key_down("left") or input.key_down("z"))
    set_flipper(state.flippers.right, input.key_down("right") or input.key_down("m"))
    for _, b in pairs(state.bumpers) do b.lit = math.max(0, b.lit - dt) end
    local ball = state.ball
    if state.over or not ball:valid() then return end
    local p = ball.position
    if state.charge then state.charge = math.min(CHARGE_TIME, state.charge + dt) end
    if p[1] < 2.8 then state.in_play = true end
    if p[2] < -0.6 then lose_ball(world) end
  end,

  keypressed = function(world, key)
    if (key == "space" or key == "down") and not state.over then
      local p = state.ball.position
      if p[1] > 2.8 and p[2] < 0.8 then state.charge = 0 end
    elseif key == "return" and state.over then
      impetus.restart()
    end
  end,

  keyreleased = function(world, key)
    if (key == "space" or key == "down") and state.charge then
      local speed = LAUNCH_MAX * math.max(0.25, state.charge / CHARGE_TIME)
      state.ball.velocity = { 0, speed, 0 }
      state.charge = nil
      sounds.launch:play { volume = 0.5 }
    end
  end,

  draw = function(world, gfx)
    local w, h = gfx.size()
    for c, b in pairs(state.bumpers) do
      gfx.sphere({ b.pos[1], b.pos[2], 0 }, BUMPER_R + 0.02, b.lit > 0 and BUMPER_LIT or BUMPER_C)
    end
    if state.charge then
      local pull = 0.5 * state.charge / CHARGE_TIME
      gfx.box({ LANE_X, -0.25 - pull, 0 }, { 0.12, 0.3, 0.1 }, { 0.8, 0.8, 0.85 })
    end
    gfx.rect(0, 0, w, 44, { 0.1, 0.1, 0.2, 0.85 })
    gfx.text(16, 12, string.format("Score %d", state.score), { 1, 0.9, 0.4, 1 })
    gfx.text(w / 2 - 40, 12, string.format("Ball %d", math.max(0, 4 - state.balls)), { 1, 1, 1, 1 })
    gfx.text(w - 180, 12, string.format("High %d", state.high), { 0.7, 0.8, 1, 1 })
    if state.over then
      local msg = string.format("Game over: %d points.  Return for a new game", state.score)
      gfx.text(w / 2 - gfx.text_width(msg) / 2, h / 2, msg, { 1, 1, 1, 1 })
    elseif not state.in_play then
      local msg = "Hold Space, let go to launch"
      gfx.text(w / 2 - gfx.text_width(msg) / 2, h - 40, msg, { 0.8, 0.85, 1, 1 })
    end
  end,
}
