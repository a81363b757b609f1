-- scenes/games/pinball: a pinball table in planar mode. The flippers are boxes on hinge joints to the
-- table, each with limits (rest and up) and a motor that drives it up while its key is held and back
-- down when it is let go; the bumpers kick the ball away and ring. Hold Space to pull the plunger,
-- let go to launch; a one-way gate at the top of the shooter lane (world.pre_solve) lets the ball out and
-- never back in. Three balls.
local impetus = require "impetus"

local G = 4.5                           -- m/s^2 along the table: gravity of a table tilted ~27 degrees
local BALL_R, BALL_MASS = 0.15, 0.1
local FLIP_LEN, FLIP_THICK = 1.05, 0.16
local FLIP_REST, FLIP_SWING = 0.5, 0.9  -- rest: 0.5 rad below horizontal; up: 0.9 rad above rest
local FLIP_SPEED, FLIP_TORQUE = 9, 40  -- motor: rad/s and N m up; back down at half speed
local KICK, BUMPER_E = 2.5, 0.6         -- a bumper sends the ball out at BUMPER_E times its speed in + KICK
local LAUNCH_MAX, CHARGE_TIME = 10.5, 1.0
local LANE_X = 3.05
local GATE_Y = 7.65                     -- the one-way gate across the shooter lane's top (m)

local BUMPERS = { { -1.0, 7.2 }, { 1.0, 7.2 }, { 0, 5.9 } }
local BUMPER_R, BUMPER_POINTS = 0.38, 100

-- the table's walls {x1, y1, x2, y2, thickness}: sides, the shooter lane's wall, the roof and its
-- corners, the plunger's stop, the guides down to the flippers (each ends 0.2 m from its flipper's
-- pivot: no gap a ball fits through)
local WALLS = {
  { -2.85, -0.5, -2.85, 10.3 }, { 3.35, -0.5, 3.35, 10.3 }, { 2.8, -0.5, 2.8, 7.6, 0.1 }, { -3, 10.2, 3.5, 10.2 },
  { -2.9, 9.0, -1.6, 10.3 }, { 2.1, 10.3, 3.4, 9.0 }, { LANE_X - 0.3, 0.1, LANE_X + 0.3, 0.1 },
  { -2.85, 3.1, -1.454, 1.677, 0.16 }, { 2.75, 3.1, 1.449, 1.683, 0.16 },
}

local FLIPPER_C, BALL_C = { 0.95, 0.75, 0.2 }, { 0.85, 0.87, 0.92 }
local RAIL, RAIL_EDGE = { 0.2, 0.24, 0.45, 1 }, { 0.4, 0.85, 1, 1 }
local BUMPER_C, BUMPER_RING, BUMPER_LIT = { 0.85, 0.2, 0.45, 1 }, { 1, 0.6, 0.8, 1 }, { 1, 0.9, 0.97, 1 }

state.high = state.high or 0

local sounds = {
  bumper = impetus.sound.synth { kind = "boing", freq = 520 },
  flipper = impetus.sound.synth { kind = "click", freq = 1200 },
  wall = impetus.sound.synth { kind = "thud", freq = 140 },
  launch = impetus.sound.synth { kind = "noise", duration = 0.25 },
  drain = impetus.sound.synth { kind = "tone", freq = 220, duration = 0.5 },
}

-- a wall from (x1, y1) to (x2, y2), t thick (0.2 m unless given): centre, length, thickness, angle
local function wall_box(wl)
  local dx, dy = wl[3] - wl[1], wl[4] - wl[2]
  return { (wl[1] + wl[3]) / 2, (wl[2] + wl[4]) / 2, 0 }, math.sqrt(dx * dx + dy * dy), wl[5] or 0.2, math.atan(dy, dx)
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
  camera = { mode = "2d", center = { 0.25, 4.9 }, height = 11.4 },
  background = { 0.06, 0.07, 0.12 },
  viewer = { mouse = false, hud = false, grid = false },
  keys = { { "left / z", "left flipper" }, { "right / m", "right flipper" },
           { "space / down", "hold to pull the plunger, let go to launch" }, { "return", "new game (after the last ball)" } },

  setup = function(world)
    world.planar = true
    world.gravity = { 0, -G, 0 }
    state.score, state.balls, state.over, state.bumpers, state.sounds = 0, 3, false, {}, sounds
    for _, wl in ipairs(WALLS) do
      local c, l, t, a = wall_box(wl)
      world:box { static = true, position = c, size = { l, t, 1 }, axis = { 0, 0, 1 }, angle = a, restitution = 0.3,
                  friction = 0.2 }
    end
    for i, b in ipairs(BUMPERS) do
      local c = world:sphere { static = true, position = { b[1], b[2], 0 }, radius = BUMPER_R, restitution = BUMPER_E, friction = 0.1 }
      state.bumpers[c] = { index = i, lit = 0, pos = b }
    end
    state.flippers = { left = flipper(world, -1), right = flipper(world, 1) }
    -- the gate: its contact is switched off while the ball moves up or is still below it, so a ball
    -- launched up the lane passes and one falling back onto it is turned away
    state.gate = world:box { static = true, position = { 3.05, GATE_Y, 0 }, size = { 0.4, 0.06, 1 }, restitution = 0.3,
                             friction = 0.2, pre_solve = true }
    world.pre_solve = function(w, c)
      local ball = c.a == state.gate and c.b or c.a
      if ball.velocity[2] > 0 or ball.position[2] < GATE_Y then c.enabled = false end
    end
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

  keypressed = function(world, key, isrepeat)
    if isrepeat then return end -- a held key repeats: the charge runs from the first press
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
    -- the playfield behind everything: a deep blue board, lane arrows, the table's name
    gfx.polygon({ { -2.85, -0.5 }, { 3.35, -0.5 }, { 3.35, 9.0 }, { 2.1, 10.25 }, { -1.6, 10.25 }, { -2.85, 9.0 } },
      { color = { 0.09, 0.12, 0.3, 1 }, layer = "back" })
    gfx.circle({ 0, 7.2, 0 }, 2.2, { color = { 0.12, 0.16, 0.38, 1 }, layer = "back" })
    for i = 0, 2 do
      local y = 3.0 + 0.55 * i
      gfx.polygon({ { -0.25, y }, { 0.25, y }, { 0, y + 0.35 } }, { color = { 0.95, 0.5, 0.2, 0.35 + 0.2 * i }, layer = "back" })
    end
    gfx.text({ 0, 4.6, 0 }, "IMPETUS", { size = 30, color = { 0.35, 0.45, 0.85, 1 } })
    -- the walls as lit rails, the bumpers (a ring, flashing when hit), the flippers' pivots
    for _, wl in ipairs(WALLS) do
      local c, l, t, a = wall_box(wl)
      gfx.rectangle(c, l, t, { angle = a, color = RAIL, outline = RAIL_EDGE, width = 2 })
    end
    for _, b in pairs(state.bumpers) do
      local c = { b.pos[1], b.pos[2], 0 }
      -- rings as filled discs, one over the other
      gfx.circle(c, BUMPER_R + 0.08, { color = BUMPER_RING, segments = 48 })
      gfx.circle(c, BUMPER_R + 0.03, { color = b.lit > 0 and BUMPER_LIT or BUMPER_C, segments = 48 })
      gfx.circle(c, BUMPER_R * 0.55 + 0.04, { color = BUMPER_RING, segments = 32 })
      gfx.circle(c, BUMPER_R * 0.55, { color = b.lit > 0 and BUMPER_C or BUMPER_LIT, segments = 32 })
      if b.lit > 0 then
        gfx.text({ b.pos[1], b.pos[2] + 0.7, 0 }, "+" .. BUMPER_POINTS, { size = 20, color = { 1, 0.9, 0.4, 1 } })
      end
    end
    for _, f in pairs(state.flippers) do
      gfx.circle({ f.pivot[1], f.pivot[2], 0 }, 0.1, { color = { 0.5, 0.35, 0.05, 1 }, outline = { 1, 0.9, 0.5, 1 } })
    end
    -- the plunger: a knob on a spring, pulled down while Space is held
    local pull = state.charge and 0.5 * state.charge / CHARGE_TIME or 0
    local spring, top = {}, 0.05 - pull
    for i = 0, 10 do spring[#spring + 1] = { LANE_X + (i % 2 == 0 and -0.1 or 0.1), -0.8 + (top + 0.8) * i / 10 } end
    gfx.polyline(spring, { color = { 0.75, 0.75, 0.8, 1 }, width = 2 })
    gfx.rectangle({ LANE_X, top + 0.05, 0 }, 0.34, 0.12, { color = { 0.8, 0.2, 0.2, 1 }, outline = { 1, 1, 1, 1 } })
    -- the backglass on both sides of the table: score, ball, high score, keys
    local left, right = w / 2 - h * 0.36, w / 2 + h * 0.36
    local gold, pale = { 1, 0.8, 0.3, 1 }, { 0.7, 0.8, 1, 1 }
    gfx.text(left / 2, h * 0.18, "SCORE", { size = 22, align = "center", color = pale })
    gfx.text(left / 2, h * 0.25, string.format("%d", state.score), { size = 48, align = "center", color = gold })
    gfx.text(left / 2, h * 0.45, "BALL", { size = 22, align = "center", color = pale })
    for i = 1, 3 do
      local c = i <= 4 - state.balls and not state.over and { 0.85, 0.87, 0.92, 1 } or { 0.25, 0.27, 0.35, 1 }
      gfx.circle(left / 2 + (i - 2) * 36, h * 0.53, 12, { color = c, outline = pale })
    end
    gfx.text((right + w) / 2, h * 0.18, "HIGH SCORE", { size = 22, align = "center", color = pale })
    gfx.text((right + w) / 2, h * 0.25, string.format("%d", state.high), { size = 36, align = "center", color = gold })
    local help = { "Left / Z   left flipper", "Right / M   right flipper", "Space   hold, let go: launch" }
    for i, line in ipairs(help) do
      gfx.text((right + w) / 2, h * 0.5 + (i - 1) * 26, line, { size = 17, align = "center", color = pale })
    end
    if state.over then
      gfx.rectangle(w / 2 - 260, h / 2 - 60, 520, 120, { color = { 0.05, 0.06, 0.15, 0.9 }, outline = gold, width = 2 })
      gfx.text(w / 2, h / 2 - 22, "GAME OVER", { size = 40, align = "center", valign = "middle", color = gold })
      gfx.text(w / 2, h / 2 + 26, "Return: a new game", { size = 20, align = "center", valign = "middle" })
    elseif not state.in_play then
      gfx.text((right + w) / 2, h * 0.8, "Hold Space to launch", { size = 22, align = "center", color = gold })
    end
  end,
}
