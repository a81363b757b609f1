-- scenes/newtons_cradle.lua: Newton's cradle on point joints (S1 in the impulse mode). Five steel
-- balls each hang from a fixed point 1.5 m above on a ball joint (a massless rigid rod); the first is
-- lifted and let go. The collision stage's restitution (e = 1) passes the impulse down the row through
-- the touching balls, and the joints keep every ball on its sphere about its pivot.
-- Keys: 1, 2, 3 lift that many balls on the left and let go.
local R, LEN, balls, joints = 0.15, 1.5, {}, {}
local function place(world, lifted)
  for i, b in ipairs(balls) do
    local px = (i - 3) * 2 * R
    local a = i <= lifted and -0.6 or 0
    b.position = { px + LEN * math.sin(a), 2 - LEN * math.cos(a), 0 }
    b.velocity, b.angular_velocity = { 0, 0, 0 }, { 0, 0, 0 }
  end
end

return {
  title = "Newton's cradle (point joints)",
  keys = { { "1 / 2 / 3", "lift that many balls" } },
  camera = { eye = { 0, 1.4, 5 }, target = { 0, 1.0, 0 } },
  setup = function(world)
    world.sleeping = false
    world:box { static = true, size = { 2.2, 0.08, 0.3 }, position = { 0, 2.04, 0 } }
    for i = 1, 5 do
      local px = (i - 3) * 2 * R
      balls[i] = world:sphere { radius = R, position = { px, 2 - LEN, 0 }, density = 7800, restitution = 1,
                                friction = 0, color = { 0.8, 0.82, 0.86 } }
      joints[i] = world:joint { type = "point", a = balls[i], anchor = { px, 2, 0 } }
    end
    place(world, 1)
  end,
  keypressed = function(world, key)
    local n = tonumber(key)
    if n and n >= 1 and n <= 3 then place(world, n) end
  end,
  draw = function(world, gfx)
    for i, b in ipairs(balls) do gfx.line({ (i - 3) * 2 * R, 2, 0 }, b.position, { 0.7, 0.7, 0.7, 1 }) end
    local gap = 0
    for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("largest joint gap %.1e m   keys 1-3: lift balls", gap), { 0.9, 0.9, 0.9, 1 })
  end,
}
